package lint

import (
	"fmt"
	"sort"
	"strings"
)

// Thresholds of the similarity checks (docs/lint.md).
const (
	// A line takes part in similarity when it has at least minLineWords
	// words (a CJK bigram counts as one).
	minLineWords = 3
	// A line found in more memories than boilerplateDocs is a template's,
	// not a sign of copying.
	boilerplateDocs = 20
	// Near duplicates share at least dupMinShared lines, and either half
	// of their lines together (Jaccard) or most of the smaller one's.
	dupMinShared   = 3
	dupJaccard     = 0.5
	dupContainment = 0.8
	// Copies by name share this much, unless a frontmatter name ties them.
	copyMinShared = 2
	copyJaccard   = 0.3
	// At most this many lines of each side are shown.
	maxShownLines = 20
)

type pair struct{ a, b int }

// significant are a doc's lines that count for similarity, by their
// folded text, with the first line number of each.
func significant(d *doc) map[string]int {
	out := map[string]int{}
	for _, i := range d.body {
		l := d.lines[i]
		if l.heading || len(l.words) < minLineWords {
			continue
		}
		if _, ok := out[l.norm]; !ok {
			out[l.norm] = l.n
		}
	}
	return out
}

// similarity finds near-duplicate memories and diverged copies; related
// are the pairs either found, which the contradiction check compares
// line by line.
func similarity(docs []*doc) (map[pair]bool, []Finding) {
	sig := make([]map[string]int, len(docs))
	index := map[string][]int{}
	for i, d := range docs {
		sig[i] = significant(d)
		for norm := range sig[i] {
			index[norm] = append(index[norm], i)
		}
	}
	shared := map[pair]int{}
	for _, ds := range index {
		if len(ds) > boilerplateDocs {
			continue
		}
		for x := 0; x < len(ds); x++ {
			for y := x + 1; y < len(ds); y++ {
				shared[pair{ds[x], ds[y]}]++
			}
		}
	}
	// Copies by name: the same file name, or a frontmatter name or alias in
	// common, at two places.
	byName := map[string][]int{}
	for i, d := range docs {
		keys := map[string]bool{"file:" + strings.ToLower(d.fileName): true}
		for _, n := range d.fmNames {
			if n != "" {
				keys["name:"+n] = true
			}
		}
		for k := range keys {
			byName[k] = append(byName[k], i)
		}
	}
	named := map[pair]string{}
	for k, ds := range byName {
		for x := 0; x < len(ds); x++ {
			for y := x + 1; y < len(ds); y++ {
				p := pair{ds[x], ds[y]}
				if prev, ok := named[p]; !ok || strings.HasPrefix(k, "name:") && !strings.HasPrefix(prev, "name:") {
					named[p] = k
				}
			}
		}
	}
	related := map[pair]bool{}
	var out []Finding
	for p, key := range named {
		a, b := docs[p.a], docs[p.b]
		if a.m.Content == b.m.Content {
			continue // identical: reported as a duplicate below
		}
		n := shared[p]
		union := len(sig[p.a]) + len(sig[p.b]) - n
		byFM := strings.HasPrefix(key, "name:")
		if !byFM && (n < copyMinShared && (union == 0 || float64(n)/float64(union) < copyJaccard || n == 0)) {
			continue
		}
		related[p] = true
		what := "the same file name"
		if byFM {
			what = fmt.Sprintf("the same frontmatter name %q", strings.TrimPrefix(key, "name:"))
		}
		out = append(out, Finding{
			Kind:    KindDiverged,
			Message: fmt.Sprintf("%s at two places (%s and %s), with %d lines in common and these that differ: keep one copy, or make them agree", what, place(a), place(b), n),
			Ref:     ref(a, 0), Other: refPtr(b, 0),
			Lines: differing(a, b),
		})
	}
	for p, n := range shared {
		if related[p] {
			continue
		}
		a, b := len(sig[p.a]), len(sig[p.b])
		jac := float64(n) / float64(a+b-n)
		con := float64(n) / float64(min(a, b))
		identical := docs[p.a].m.Content == docs[p.b].m.Content
		if !identical && (n < dupMinShared || jac < dupJaccard && con < dupContainment) {
			continue
		}
		related[p] = true
		msg := fmt.Sprintf("%d lines in common (%.0f%% of both, %.0f%% of the smaller): merge them into one memory", n, jac*100, con*100)
		if identical {
			msg = "the same content at two places: keep one"
		}
		out = append(out, Finding{Kind: KindNearDuplicate, Message: msg,
			Ref: ref(docs[p.a], 0), Other: refPtr(docs[p.b], 0), Lines: sharedLines(docs[p.a], sig[p.a], sig[p.b])})
	}
	sortFindings(out)
	return related, out
}

func place(d *doc) string {
	return d.m.StoreName + ":" + d.m.Path
}

// sharedLines are a's lines that b holds too, in a's order.
func sharedLines(a *doc, sa, sb map[string]int) []string {
	var out []string
	for _, i := range a.body {
		l := a.lines[i]
		if n, ok := sa[l.norm]; ok && n == l.n {
			if _, in := sb[l.norm]; in && len(out) < maxShownLines {
				out = append(out, l.text)
			}
		}
	}
	return out
}

// differing are the lines of a that b lacks ("< ") and of b that a lacks
// ("> "), each in its memory's order; headings and blank lines aside.
func differing(a, b *doc) []string {
	all := func(d *doc) map[string]bool {
		set := map[string]bool{}
		for _, i := range d.body {
			set[d.lines[i].norm] = true
		}
		return set
	}
	var out []string
	side := func(d *doc, other map[string]bool, mark string) {
		k := 0
		for _, i := range d.body {
			l := d.lines[i]
			if !l.heading && !other[l.norm] && k < maxShownLines {
				out = append(out, fmt.Sprintf("%s%d: %s", mark, l.n, l.text))
				k++
			}
		}
	}
	side(a, all(b), "< ")
	side(b, all(a), "> ")
	return out
}

func sortFindings(out []Finding) {
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Ref.StoreID != b.Ref.StoreID {
			return a.Ref.StoreID < b.Ref.StoreID
		}
		if a.Ref.Path != b.Ref.Path {
			return a.Ref.Path < b.Ref.Path
		}
		if a.Ref.Line != b.Ref.Line {
			return a.Ref.Line < b.Ref.Line
		}
		ao, bo := "", ""
		if a.Other != nil {
			ao = a.Other.StoreID + a.Other.Path
		}
		if b.Other != nil {
			bo = b.Other.StoreID + b.Other.Path
		}
		return ao < bo
	})
}
