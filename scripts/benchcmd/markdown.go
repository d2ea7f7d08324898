package main

import (
	"fmt"
	"io"
	"strings"
)

// writeMarkdown prints the report as Markdown to paste into the README and
// docs/performance.md: the targets table, then what was measured where and
// how, then the details.
func writeMarkdown(w io.Writer, r *report) error {
	r.finish()
	r.Machine.LoadEnd = loadAvg()
	var b strings.Builder
	b.WriteString("| target | measured | target | met |\n|---|--:|--:|---|\n")
	for _, g := range r.Goals {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", g.Name, g.figure(), g.target(), g.met())
	}
	m := r.Machine
	cmd := m.Command
	if cmd == "" {
		cmd = "scripts/bench"
	}
	fmt.Fprintf(&b, "\n`%s`", cmd)
	if m.Commit != "" {
		fmt.Fprintf(&b, " at %s", m.Commit)
	}
	fmt.Fprintf(&b, ", %s; %d CPUs (%s), Linux %s, %s; databases on %s; load average %s at the start, %s at the end. memfs with the default durability; ratios of medians over %v rounds.\n",
		m.Start, m.CPUs, m.CPUModel, m.Kernel, m.GoVersion, m.WorkDirFS, m.LoadStart, m.LoadEnd, r.Config["rounds"])

	if len(r.Phases) > 0 {
		fmt.Fprintf(&b, "\nWorkload: %v files of %d bytes in %v directories; median ops/s (list: %d passes over every directory).\n\n",
			r.Config["files"], fileSize, r.Config["dirs"], listPasses)
		head := []string{"phase"}
		for _, t := range r.targets {
			head = append(head, t)
		}
		head = append(head, "memfs/loopback", "memfs/tmpfs", "memfs-full/loopback")
		mdRow(&b, head)
		mdRule(&b, len(head))
		for _, p := range r.Phases {
			row := []string{p.Phase}
			for _, t := range r.targets {
				row = append(row, fmtNum(p.OpsPerSec[t], "%.0f"))
			}
			row = append(row, fmtNum(p.MemfsVsLoopback, "%.2f"), fmtNum(p.MemfsVsTmpfs, "%.3f"), fmtNum(p.FullVsLoopback, "%.2f"))
			mdRow(&b, row)
		}
	}
	if len(r.Writers) > 0 {
		fmt.Fprintf(&b, "\n%d concurrent writer processes for %.1f s per round; one save = %s; median total saves/s.\n\n",
			r.writers, r.writersFor.Seconds(), writersSaveShape)
		head := []string{"files"}
		var names []string
		for _, t := range r.targets {
			if _, ok := r.Writers[0].SavesPerSec[t]; ok {
				names = append(names, t)
				head = append(head, t)
			}
		}
		head = append(head, "memfs/loopback", "memfs/tmpfs", "memfs-full/loopback", "errors")
		mdRow(&b, head)
		mdRule(&b, len(head))
		for _, wr := range r.Writers {
			row := []string{writersLabel(wr)}
			total := 0
			for _, t := range names {
				row = append(row, fmtNum(wr.SavesPerSec[t], "%.0f"))
				total += wr.Errors[t]
			}
			row = append(row, fmtNum(wr.MemfsVsLoopback, "%.2f"), fmtNum(wr.MemfsVsTmpfs, "%.3f"), fmtNum(wr.FullVsLoopback, "%.2f"), fmt.Sprint(total))
			mdRow(&b, row)
		}
	}
	b.WriteString("\n")
	if v := r.Visibility; v != nil {
		fmt.Fprintf(&b, "- save-to-visible in a second mount (%s): p50 %.1f ms, p99 %.1f ms, max %.1f ms over %d samples, %d timed out\n",
			v.Daemon, v.P50MS, v.P99MS, v.MaxMS, v.Samples, v.Timeouts)
	}
	if l := r.Log; l != nil {
		fmt.Fprintf(&b, "- `memfs log` on a store with %s versions: %.2f s (`memfs store get` on the same database: %.3f s)\n",
			thousands(l.Versions), l.LogSeconds, l.StartupSeconds)
	}
	if s := r.RSS; s != nil {
		fmt.Fprintf(&b, "- daemon peak RSS (VmHWM) with %d stores × %s memories, every file read: memfs (%s) %.1f MiB (after the walk: %.1f MiB its own, %.1f MiB of mapped files), go-fuse loopback %.1f MiB\n",
			s.Stores, thousands(s.MemoriesPerStore), s.Daemon, s.MemfsPeakMiB, s.MemfsAnonMiB, s.MemfsFileMiB, s.LoopbackPeakMiB)
	}
	for _, e := range r.Errors {
		fmt.Fprintf(&b, "- not measured: %s\n", e)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func mdRow(b *strings.Builder, cells []string) {
	b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
}

// mdRule is the header rule: the first column left-aligned, figures right.
func mdRule(b *strings.Builder, n int) {
	b.WriteString("|---" + strings.Repeat("|--:", n-1) + "|\n")
}
