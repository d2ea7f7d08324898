package lint

import (
	"path"
	"strings"

	"github.com/memfs/memfs/fulltext"
)

// line is one line of a memory with what the checks compare.
type line struct {
	n    int    // from 1
	text string // as written, trimmed
	// norm is the line folded to its words (fulltext.Words) joined by
	// spaces: case, punctuation and list bullets do not count.
	norm    string
	words   []string
	heading bool
	// section is the path of headings the line is under, each folded,
	// outermost first (empty at the top).
	section []string
}

// doc is a memory parsed once for every check.
type doc struct {
	m     *Memory
	idx   int
	lines []line
	// body are the lines outside frontmatter and code blocks.
	body []int
	// fm is the frontmatter, nil when the memory has none.
	fm *frontmatter
	// names are what identify the memory as a copy: its file name (with
	// its extension) and its frontmatter name and aliases, folded.
	fileName string
	fmNames  []string
}

func ref(d *doc, n int) Ref {
	return Ref{StoreID: d.m.StoreID, MemoryID: d.m.ID, Path: d.m.Path, Line: n, VersionID: d.m.VersionID}
}

func refPtr(d *doc, n int) *Ref { r := ref(d, n); return &r }

func parseDoc(m *Memory, idx int) *doc {
	d := &doc{m: m, idx: idx, fileName: path.Base(m.Path)}
	raw := strings.Split(m.Content, "\n")
	d.fm, raw = splitFrontmatter(raw)
	offset := 0
	if d.fm != nil {
		offset = d.fm.lines
		if d.fm.name != "" {
			d.fmNames = append(d.fmNames, fold(d.fm.name))
		}
		for _, a := range d.fm.aliases {
			d.fmNames = append(d.fmNames, fold(a))
		}
	}
	inCode := false
	var section []string
	levels := []int{}
	for i, t := range raw {
		t = strings.TrimSpace(strings.TrimSuffix(t, "\r"))
		l := line{n: offset + i + 1, text: t}
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			inCode = !inCode
			d.lines = append(d.lines, l)
			continue
		}
		if !inCode {
			l.words = fulltext.Words(t)
			l.norm = strings.Join(l.words, " ")
			if level := len(t) - len(strings.TrimLeft(t, "#")); level > 0 {
				l.heading = true
				for len(levels) > 0 && levels[len(levels)-1] >= level {
					levels, section = levels[:len(levels)-1], section[:len(section)-1]
				}
				levels = append(levels, level)
				section = append(section[:len(section):len(section)], l.norm)
			}
			l.section = section
			if l.norm != "" {
				d.body = append(d.body, len(d.lines))
			}
		}
		d.lines = append(d.lines, l)
	}
	return d
}

func fold(s string) string { return strings.Join(fulltext.Words(s), " ") }
