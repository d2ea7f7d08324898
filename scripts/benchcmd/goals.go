package main

import (
	"fmt"
	"strings"
)

// goal is one target with the figure this run measured for it.
type goal struct {
	Name string `json:"name"`
	// Figure is nil when the run did not measure it (a part skipped or
	// failed, a target not in --targets).
	Figure *float64 `json:"figure"`
	Unit   string   `json:"unit"` // "×" (of the loopback, or of a bare commit), "ms", "MiB"
	// AtMost: the figure must be at most Value; otherwise at least.
	AtMost bool    `json:"at_most"`
	Value  float64 `json:"value"`
	// Met is nil when there is no figure, or when the run measured
	// something other than what the target is about (Note says what).
	Met  *bool  `json:"met"`
	Note string `json:"note,omitempty"`
}

func (g goal) figure() string {
	if g.Figure == nil {
		return "not measured"
	}
	switch g.Unit {
	case "×":
		return fmt.Sprintf("%.2f×", *g.Figure)
	case "ms":
		return fmt.Sprintf("%.1f ms", *g.Figure)
	}
	return fmt.Sprintf("%.1f %s", *g.Figure, g.Unit)
}

func (g goal) target() string {
	op := "≥"
	if g.AtMost {
		op = "≤"
	}
	if g.Unit == "×" {
		// 1.0× and 0.75×: two decimals at most, one at least.
		v := strings.TrimRight(fmt.Sprintf("%.2f", g.Value), "0")
		if strings.HasSuffix(v, ".") {
			v += "0"
		}
		return fmt.Sprintf("%s %s×", op, v)
	}
	return fmt.Sprintf("%s %g %s", op, g.Value, g.Unit)
}

func (g goal) met() string {
	s := yesNo(g.Met)
	if g.Note != "" {
		s += " (" + g.Note + ")"
	}
	return s
}

// pgCeilings are the targets, with --db, for one memfs-pg operation's time
// in bare one-row commits on the same server (phaseResult.PgInBareCommits),
// in the summary's order.
var pgCeilings = []struct {
	phase string
	most  float64
}{{"create", 2.5}, {"overwrite", 2}, {"rename", 2.5}, {"delete", 2.5}}

// goalPhases are the phases with a target, in the order of the summary.
var goalPhases = []string{"stat", "list", "read", "create", "overwrite", "atomic-save", "rename", "delete"}

// goals lists every target with this run's figure for it. Call after the
// phases and writers are finished.
func (r *report) goals() []goal {
	var gs []goal
	check := func(g goal) goal {
		if g.Figure != nil && g.Met == nil && g.Note == "" {
			met := *g.Figure >= g.Value
			if g.AtMost {
				met = *g.Figure <= g.Value
			}
			g.Met = &met
		}
		return g
	}
	phase := map[string]phaseResult{}
	for _, p := range r.Phases {
		phase[p.Phase] = p
	}
	for _, p := range goalPhases {
		gs = append(gs, check(goal{Name: p + ", memfs/loopback ops/s", Figure: phase[p].MemfsVsLoopback, Unit: "×", Value: floors[p]}))
	}
	writers := map[string]writersResult{}
	for _, w := range r.Writers {
		writers[w.Variant] = w
	}
	for _, v := range writerVariants {
		name := fmt.Sprintf("%d writers, own files, memfs/loopback saves/s", r.writers)
		if v == "shared" {
			name = fmt.Sprintf("%d writers, %d shared files, memfs/loopback saves/s", r.writers, writerFiles)
		}
		g := goal{Name: name, Figure: writers[v].MemfsVsLoopback, Unit: "×", Value: writersFloor}
		if n := writers[v].Errors["memfs"]; n > 0 {
			// A save that failed or was lost is not a save: no ratio
			// makes up for it.
			no := false
			g.Met, g.Note = &no, fmt.Sprintf("%d failed or lost saves", n)
		}
		gs = append(gs, check(g))
	}
	vis := goal{Name: "save-to-visible p99, another mount", Unit: "ms", AtMost: true, Value: visibilityP99TargetMS}
	if v := r.Visibility; v != nil {
		vis.Figure = num(v.P99MS)
		if v.Timeouts > 0 {
			no := false
			vis.Met, vis.Note = &no, fmt.Sprintf("%d of %d samples timed out", v.Timeouts, v.Samples)
		}
	}
	gs = append(gs, check(vis))
	rss := goal{Name: fmt.Sprintf("daemon peak RSS, %d stores × %s memories", rssTargetStores, thousands(rssTargetMemories)), Unit: "MiB", AtMost: true, Value: rssTargetMiB}
	if s := r.RSS; s != nil {
		rss.Figure = num(s.MemfsPeakMiB)
		if s.Stores != rssTargetStores || s.MemoriesPerStore != rssTargetMemories {
			rss.Note = fmt.Sprintf("measured with %d × %s", s.Stores, thousands(s.MemoriesPerStore))
		}
	}
	gs = append(gs, check(rss))
	if r.BareCommitsPerSec != nil {
		for _, c := range pgCeilings {
			g := goal{Name: c.phase + ", memfs-pg in bare commits", Figure: phase[c.phase].PgInBareCommits,
				Unit: "×", AtMost: true, Value: c.most}
			if r.BareCommitsFsync != "on" {
				// A commit that skips the disk makes any save look dear.
				g.Note = "the server runs with fsync " + r.BareCommitsFsync
			}
			gs = append(gs, check(g))
		}
	}
	return gs
}

// thousands writes n with a comma between thousands, as the docs do.
func thousands(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
