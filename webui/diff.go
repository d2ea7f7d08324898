package webui

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/pmezard/go-difflib/difflib"
)

// A diff is computed line by line (difflib's matcher, as `memfs diff`),
// then each changed line paired with the line it replaced is compared word
// by word, so that a page can mark the words that changed. The pieces are
// plain text: the template escapes them.

// piece is a run of a line's text, changed or not.
type piece struct {
	Text    string
	Changed bool
}

// side is one line of one version: its number (0: no line) and its pieces.
type side struct {
	No     int
	Pieces []piece
}

// row is one line of a diff: Kind is "same", "del", "add" or "gap" (a
// hunk's header, Text). Old and New are the two sides; a unified view shows
// Old for "del" and New for "add" and "same".
type row struct {
	Kind     string
	Text     string
	Old, New side
}

// diffContext is how many unchanged lines surround a change.
const diffContext = 3

// maxWordDiffBytes bounds the lines compared word by word: a longer one is
// marked changed as a whole.
const maxWordDiffBytes = 4096

// splitLines cuts text into lines without their newlines.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// diffRows compares a and b and returns the rows of a unified diff with
// context; for a side-by-side view, pairs joins them (sideBySide).
func diffRows(a, b string) []row {
	al, bl := splitLines(a), splitLines(b)
	m := difflib.NewMatcher(al, bl)
	var rows []row
	for _, group := range m.GetGroupedOpCodes(diffContext) {
		first, last := group[0], group[len(group)-1]
		rows = append(rows, row{Kind: "gap", Text: hunkHeader(first.I1, last.I2, first.J1, last.J2)})
		for _, op := range group {
			switch op.Tag {
			case 'e':
				for i, j := op.I1, op.J1; i < op.I2; i, j = i+1, j+1 {
					rows = append(rows, row{Kind: "same", Old: plain(i+1, al[i]), New: plain(j+1, bl[j])})
				}
			case 'd':
				for i := op.I1; i < op.I2; i++ {
					rows = append(rows, row{Kind: "del", Old: whole(i+1, al[i])})
				}
			case 'i':
				for j := op.J1; j < op.J2; j++ {
					rows = append(rows, row{Kind: "add", New: whole(j+1, bl[j])})
				}
			case 'r':
				n := min(op.I2-op.I1, op.J2-op.J1)
				var dels, adds []row
				for k := 0; k < n; k++ {
					o, nw := wordDiff(al[op.I1+k], bl[op.J1+k])
					dels = append(dels, row{Kind: "del", Old: side{op.I1 + k + 1, o}})
					adds = append(adds, row{Kind: "add", New: side{op.J1 + k + 1, nw}})
				}
				for i := op.I1 + n; i < op.I2; i++ {
					dels = append(dels, row{Kind: "del", Old: whole(i+1, al[i])})
				}
				for j := op.J1 + n; j < op.J2; j++ {
					adds = append(adds, row{Kind: "add", New: whole(j+1, bl[j])})
				}
				rows = append(append(rows, dels...), adds...)
			}
		}
	}
	return rows
}

func hunkHeader(i1, i2, j1, j2 int) string {
	return "@@ -" + span(i1, i2) + " +" + span(j1, j2) + " @@"
}

func span(lo, hi int) string {
	n := hi - lo
	start := lo + 1
	if n == 0 {
		start = lo
	}
	return strconv.Itoa(start) + "," + strconv.Itoa(n)
}

func plain(no int, s string) side { return side{no, []piece{{Text: s}}} }
func whole(no int, s string) side { return side{no, []piece{{Text: s, Changed: true}}} }

// sideBySide pairs a unified diff's rows: each run of deletions faces the
// run of additions that follows it.
func sideBySide(rows []row) []row {
	var out []row
	for i := 0; i < len(rows); {
		switch rows[i].Kind {
		case "del":
			var dels, adds []row
			for ; i < len(rows) && rows[i].Kind == "del"; i++ {
				dels = append(dels, rows[i])
			}
			for ; i < len(rows) && rows[i].Kind == "add"; i++ {
				adds = append(adds, rows[i])
			}
			for k := 0; k < max(len(dels), len(adds)); k++ {
				r := row{Kind: "change"}
				if k < len(dels) {
					r.Old = dels[k].Old
				}
				if k < len(adds) {
					r.New = adds[k].New
				}
				out = append(out, r)
			}
		case "add":
			out = append(out, row{Kind: "change", New: rows[i].New})
			i++
		default:
			out = append(out, rows[i])
			i++
		}
	}
	return out
}

// wordDiff marks the words of a and b that differ.
func wordDiff(a, b string) (old, new []piece) {
	if len(a) > maxWordDiffBytes || len(b) > maxWordDiffBytes {
		return []piece{{a, true}}, []piece{{b, true}}
	}
	at, bt := words(a), words(b)
	m := difflib.NewMatcher(at, bt)
	for _, op := range m.GetOpCodes() {
		oa, ob := strings.Join(at[op.I1:op.I2], ""), strings.Join(bt[op.J1:op.J2], "")
		changed := op.Tag != 'e'
		old = addPiece(old, oa, changed)
		new = addPiece(new, ob, changed)
	}
	return old, new
}

func addPiece(ps []piece, s string, changed bool) []piece {
	if s == "" {
		return ps
	}
	if n := len(ps); n > 0 && ps[n-1].Changed == changed {
		ps[n-1].Text += s
		return ps
	}
	return append(ps, piece{s, changed})
}

// words cuts a line into runs of letters and digits, runs of spaces, and
// single other characters.
func words(s string) []string {
	var out []string
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		kind := runeKind(r)
		if kind == 2 {
			out = append(out, s[:n])
			s = s[n:]
			continue
		}
		i := n
		for i < len(s) {
			r2, n2 := utf8.DecodeRuneInString(s[i:])
			if runeKind(r2) != kind {
				break
			}
			i += n2
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}

func runeKind(r rune) int {
	switch {
	case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_':
		return 0
	case unicode.IsSpace(r):
		return 1
	}
	return 2
}
