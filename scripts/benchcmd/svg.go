package main

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// svgTargets are the bars of the chart, in order: the RAM file system, a
// FUSE file system doing nothing but pass calls on to it, and memfs.
var svgTargets = []struct{ name, label, colour string }{
	{"tmpfs", "tmpfs (kernel, RAM)", "#b8c4d6"},
	{"loopback", "go-fuse loopback over tmpfs", "#7f93b2"},
	{"memfs", "memfs (SQLite, every save a version)", "#d9822b"},
}

// writeSVG draws the phases as grouped horizontal bars of median ops/s on
// a logarithmic axis (tmpfs is tens of times faster than any FUSE file
// system), each memfs bar labelled with its ops/s and its ratio to the
// loopback: a small chart for the README.
func writeSVG(w io.Writer, r *report) error {
	r.finish()
	if len(r.Phases) == 0 {
		return fmt.Errorf("no phases were measured: the chart needs the phases part (--only phases)")
	}
	var targets []int
	for i, t := range svgTargets {
		for _, have := range r.targets {
			if have == t.name {
				targets = append(targets, i)
			}
		}
	}
	if len(targets) == 0 {
		return fmt.Errorf("the chart needs at least one of the targets tmpfs, loopback and memfs")
	}
	lo, hi := math.Inf(1), 0.0
	for _, p := range r.Phases {
		for _, i := range targets {
			if v := p.OpsPerSec[svgTargets[i].name]; v != nil && *v > 0 {
				lo, hi = math.Min(lo, *v), math.Max(hi, *v)
			}
		}
	}
	if hi == 0 {
		return fmt.Errorf("no phase has a figure to draw")
	}
	minExp, maxExp := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if maxExp == minExp {
		maxExp++
	}
	const (
		width, left, right, top = 760, 96, 150, 58
		bar, gap                = 11, 12
	)
	plot := float64(width - left - right)
	x := func(v float64) float64 {
		return (math.Log10(v) - minExp) / (maxExp - minExp) * plot
	}
	group := len(targets)*bar + gap
	height := top + len(r.Phases)*group + 38
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="%d" y="16" font-size="13" font-weight="bold">Operations per second on %v files of %d bytes (median of %v rounds, log scale)</text>`+"\n",
		left, r.Config["files"], fileSize, r.Config["rounds"])
	lx := left
	for _, i := range targets {
		t := svgTargets[i]
		fmt.Fprintf(&b, `<rect x="%d" y="26" width="10" height="10" fill="%s"/><text x="%d" y="35">%s</text>`+"\n", lx, t.colour, lx+14, esc(t.label))
		lx += 20 + 6*len(t.label)
	}
	axisY := height - 30
	for e := minExp; e <= maxExp; e++ {
		gx := float64(left) + x(math.Pow(10, e))
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#e3e3e3"/>`+"\n", gx, top-6, gx, axisY)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" fill="#555">%s</text>`+"\n", gx, axisY+14, opsLabel(math.Pow(10, e)))
	}
	for n, p := range r.Phases {
		y0 := top + n*group
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", left-8, y0+len(targets)*bar/2+4, esc(p.Phase))
		for k, i := range targets {
			t := svgTargets[i]
			v := p.OpsPerSec[t.name]
			if v == nil || *v <= 0 {
				continue
			}
			y := y0 + k*bar
			wd := math.Max(1, x(*v))
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"><title>%s %s: %.0f ops/s</title></rect>`+"\n",
				left, y, wd, bar-2, t.colour, esc(p.Phase), esc(t.name), *v)
			if t.name == "memfs" {
				label := opsLabel(*v) + "/s"
				if p.MemfsVsLoopback != nil {
					label += fmt.Sprintf(" (%.2f× loopback)", *p.MemfsVsLoopback)
				}
				fmt.Fprintf(&b, `<text x="%.1f" y="%d" fill="#333">%s</text>`+"\n", float64(left)+wd+4, y+bar-3, esc(label))
			}
		}
	}
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#999"/>`+"\n", left, axisY, left+int(plot), axisY)
	m := r.Machine
	fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#777" font-size="10">%d CPUs (%s), Linux %s, load average %s at the start; higher is better</text>`+"\n",
		left, height-2, m.CPUs, esc(m.CPUModel), esc(m.Kernel), esc(m.LoadStart))
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// opsLabel is a round figure the way people read it: 900, 12k, 1.5M.
func opsLabel(v float64) string {
	switch {
	case v >= 1e6:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", v/1e6), ".0") + "M"
	case v >= 1e4:
		return fmt.Sprintf("%.0fk", v/1e3)
	case v >= 1e3:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", v/1e3), ".0") + "k"
	default:
		return fmt.Sprintf("%.0f", v)
	}
}

func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}
