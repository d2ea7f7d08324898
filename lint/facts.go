package lint

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode"

	"github.com/memfs/memfs/fulltext"
)

// The contradiction heuristic's bounds (docs/lint.md).
const (
	maxKeyWords   = 4  // a key is a short name: "RAM", "preferred editor"
	maxValueWords = 10 // a value is short: longer is prose
	// Statements: lines of at least minStatementWords words that agree on
	// their first minPrefixWords or more and differ in a short tail.
	minStatementWords = 5
	minPrefixWords    = 4
	maxTailWords      = 3
	maxSuffixWords    = 2
	maxGroup          = 50
)

// fact is a key: value line.
type fact struct {
	doc     *doc
	line    line
	subject string // the key, folded
	key     string // the key as written
	value   string // folded words joined without spaces: "32 GB" = "32GB"
	words   []string
}

// bullet is what starts a list item.
var bullet = regexp.MustCompile(`^(?:[-*+•・]\s*|\d{1,3}[.)]\s+)`)

// keyValue reads "key: value" (also "：", " = ", " → ", " -> ") from a list
// item or a plain line; ok is false for anything else.
func keyValue(text string) (key, value string, ok bool) {
	t := bullet.ReplaceAllString(text, "")
	t = strings.ReplaceAll(t, "**", "")
	best := -1
	sepLen := 0
	for _, sep := range []string{": ", "：", " = ", " → ", " -> "} {
		if i := strings.Index(t, sep); i > 0 && (best < 0 || i < best) {
			best, sepLen = i, len(sep)
		}
	}
	if best < 0 && strings.HasSuffix(t, ":") {
		return "", "", false
	}
	if best < 0 {
		return "", "", false
	}
	return t[:best], t[best+sepLen:], true
}

func hasDigit(s string) bool { return strings.IndexFunc(s, unicode.IsDigit) >= 0 }

// facts are the key: value lines of a doc.
func facts(d *doc) []fact {
	var out []fact
	for _, i := range d.body {
		l := d.lines[i]
		if l.heading {
			continue
		}
		k, v, ok := keyValue(l.text)
		if !ok {
			continue
		}
		kw, vw := fulltext.Words(k), fulltext.Words(v)
		if len(kw) == 0 || len(kw) > maxKeyWords || hasDigit(k) || len(vw) == 0 || len(vw) > maxValueWords {
			continue
		}
		out = append(out, fact{doc: d, line: l, subject: strings.Join(kw, " "), key: strings.TrimSpace(k), value: strings.Join(vw, ""), words: vw})
	}
	return out
}

// compatible: one value is the other, or holds it (a refinement such as
// "Debian" and "Debian 12" is no contradiction).
func compatible(a, b fact) bool {
	if a.value == b.value {
		return true
	}
	return containsWords(a.words, b.words) || containsWords(b.words, a.words)
}

func containsWords(long, short []string) bool {
	for i := 0; i+len(short) <= len(long); i++ {
		match := true
		for j := range short {
			if long[i+j] != short[j] {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

// contradictions finds lines that give the same subject different values:
// key: value facts within one memory and between related memories (copies
// and near duplicates), and statements anywhere that differ only in their
// last words.
func contradictions(docs []*doc, related map[pair]bool) []Finding {
	var out []Finding
	seen := map[string]bool{}
	report := func(a, b *doc, la, lb line, why string) {
		if a.idx > b.idx || a.idx == b.idx && la.n > lb.n {
			a, b, la, lb = b, a, lb, la
		}
		k := fmt.Sprintf("%d:%d|%d:%d", a.idx, la.n, b.idx, lb.n)
		if seen[k] {
			return
		}
		seen[k] = true
		msg := fmt.Sprintf("%s; check which is true and correct the other", why)
		if a != b {
			msg = fmt.Sprintf("%s (the other in %s); check which is true and correct the other", why, place(b))
		}
		out = append(out, Finding{Kind: KindContradiction, Message: msg, Ref: ref(a, la.n), Other: refPtr(b, lb.n),
			Lines: []string{la.text, lb.text}})
	}
	all := make([][]fact, len(docs))
	for i, d := range docs {
		all[i] = facts(d)
		// Within one memory: a key stated exactly twice, in one section or
		// in a section and one below it, not as neighbouring items of one
		// list.
		by := map[string][]fact{}
		for _, f := range all[i] {
			by[f.subject] = append(by[f.subject], f)
		}
		for _, fs := range by {
			if len(fs) == 2 && fs[1].line.n-fs[0].line.n > 1 && nested(fs[0], fs[1]) && !compatible(fs[0], fs[1]) {
				report(d, d, fs[0].line, fs[1].line, fmt.Sprintf("%q and %q give %s two values", fs[0].line.text, fs[1].line.text, keyOf(fs[0])))
			}
		}
	}
	pairs := make([]pair, 0, len(related))
	for p := range related {
		pairs = append(pairs, p)
	}
	sort.Slice(pairs, func(i, j int) bool {
		if pairs[i].a != pairs[j].a {
			return pairs[i].a < pairs[j].a
		}
		return pairs[i].b < pairs[j].b
	})
	for _, p := range pairs {
		once := func(fs []fact) map[string]fact {
			count := map[string]int{}
			for _, f := range fs {
				count[f.subject]++
			}
			m := map[string]fact{}
			for _, f := range fs {
				if count[f.subject] == 1 {
					m[f.subject] = f
				}
			}
			return m
		}
		fa, fb := once(all[p.a]), once(all[p.b])
		for subj, a := range fa {
			if b, ok := fb[subj]; ok && nested(a, b) && !compatible(a, b) {
				report(docs[p.a], docs[p.b], a.line, b.line, fmt.Sprintf("%q and %q give %s two values", a.line.text, b.line.text, keyOf(a)))
			}
		}
	}
	out = append(out, statements(docs, report)...)
	sortFindings(out)
	return out
}

func keyOf(f fact) string { return fmt.Sprintf("%q", f.key) }

// nested: one fact's headings are the other's or enclose them (a section
// and its "Update" below it); facts under sibling headings ("## Anna",
// "## Ben") are about different things.
func nested(a, b fact) bool {
	x, y := a.line.section, b.line.section
	if len(x) > len(y) {
		x, y = y, x
	}
	for i := range x {
		if x[i] != y[i] {
			return false
		}
	}
	return true
}

// statements compares lines that start with the same words: two that
// agree on at least minPrefixWords words and differ only in a short
// tail ("… si consulta con Alfa" and "… si consulta con Beta") state two
// values for one thing. The findings go through report.
func statements(docs []*doc, report func(a, b *doc, la, lb line, why string)) []Finding {
	type stmt struct {
		d *doc
		l line
	}
	groups := map[string][]stmt{}
	var keys []string
	for _, d := range docs {
		for _, i := range d.body {
			l := d.lines[i]
			if l.heading || len(l.words) < minStatementWords || hasCJK(l.text) {
				continue
			}
			if _, _, kv := keyValue(l.text); kv {
				continue
			}
			k := strings.Join(l.words[:minPrefixWords], " ")
			if _, ok := groups[k]; !ok {
				keys = append(keys, k)
			}
			groups[k] = append(groups[k], stmt{d, l})
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		g := groups[k]
		if len(g) < 2 || len(g) > maxGroup {
			continue
		}
		for x := 0; x < len(g); x++ {
			for y := x + 1; y < len(g); y++ {
				a, b := g[x].l.words, g[y].l.words
				if tail, ok := differOnlyInTail(a, b); ok {
					report(g[x].d, g[y].d, g[x].l, g[y].l, fmt.Sprintf("the same statement ends %q in one line and %q in the other", tail[0], tail[1]))
				}
			}
		}
	}
	return nil
}

// differOnlyInTail: a and b share a prefix of at least minPrefixWords
// words, then differ in 1 to maxTailWords words each, followed by at most
// maxSuffixWords words in common, and the prefix is most of the line.
func differOnlyInTail(a, b []string) ([2]string, bool) {
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	da, db := len(a)-p-s, len(b)-p-s
	if p < minPrefixWords || da < 1 || db < 1 || da > maxTailWords || db > maxTailWords || s > maxSuffixWords {
		return [2]string{}, false
	}
	if float64(p) < 0.6*float64(p+s+max(da, db)) {
		return [2]string{}, false
	}
	ta, tb := a[p:len(a)-s], b[p:len(b)-s]
	if containsWords(ta, tb) || containsWords(tb, ta) {
		return [2]string{}, false
	}
	return [2]string{strings.Join(ta, " "), strings.Join(tb, " ")}, true
}

func hasCJK(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool {
		return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
	}) >= 0
}
