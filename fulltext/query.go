package fulltext

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits on a query: it is user input, and every term is a phrase the
// index looks up.
const (
	MaxQueryBytes = 1024
	MaxTerms      = 32
)

// Term is one element of a query: a phrase of one or more index words that
// must appear in a row (a single word is a phrase of one), the last of them
// matched as a prefix when Prefix is set. Exclude: no result holds it.
type Term struct {
	Words   []string
	Prefix  bool
	Exclude bool
}

// Query is a parsed query: every term not excluded must match, and no
// excluded one may.
type Query struct {
	Terms []Term
	// Text is the query as given.
	Text string
}

// SyntaxError is a query that cannot be read; its message is one line
// that says what to change.
type SyntaxError struct{ Msg string }

func (e *SyntaxError) Error() string { return e.Msg }

func syntaxErr(format string, a ...any) error { return &SyntaxError{fmt.Sprintf(format, a...)} }

// Parse reads a query: words, "quoted phrases", -excluded words or
// phrases, and word* or "a phrase*" for a prefix. Words are folded as Fold
// folds text; a word that folds into several (snake_case, 東京都) is a
// phrase of them. Nothing else is an operator: AND, OR, NEAR, parentheses
// and column names are words or separators.
func Parse(text string) (*Query, error) {
	if len(text) > MaxQueryBytes {
		return nil, syntaxErr("the query is %d bytes long, over the limit of %d: search for fewer or shorter words", len(text), MaxQueryBytes)
	}
	if !utf8.ValidString(text) {
		return nil, syntaxErr("the query is not valid UTF-8: give it as UTF-8 text")
	}
	q := &Query{Text: text}
	rest := text
	for {
		rest = strings.TrimLeftFunc(rest, unicode.IsSpace)
		if rest == "" {
			break
		}
		exclude := false
		if rest[0] == '-' {
			exclude = true
			rest = rest[1:]
		}
		var raw string
		if strings.HasPrefix(rest, `"`) {
			end := strings.IndexByte(rest[1:], '"')
			if end < 0 {
				return nil, syntaxErr("the query has an unclosed quote (%s): close the phrase with a second \" or remove the quote", abbreviate(rest))
			}
			raw, rest = rest[1:1+end], rest[2+end:]
			if strings.HasPrefix(rest, "*") {
				raw += "*"
				rest = rest[1:]
			}
		} else {
			end := strings.IndexFunc(rest, func(r rune) bool { return unicode.IsSpace(r) || r == '"' })
			if end < 0 {
				end = len(rest)
			}
			raw, rest = rest[:end], rest[end:]
		}
		t, ok := queryTerm(raw)
		if !ok {
			continue
		}
		t.Exclude = exclude
		q.Terms = append(q.Terms, t)
		if len(q.Terms) > MaxTerms {
			return nil, syntaxErr("the query has more than %d terms: search for fewer words", MaxTerms)
		}
	}
	if len(q.Positive()) == 0 {
		if len(q.Terms) > 0 {
			return nil, syntaxErr("the query %q only excludes: add a word that results must hold", text)
		}
		return nil, syntaxErr("the query %q holds no word to search for: give letters or digits", text)
	}
	return q, nil
}

func abbreviate(s string) string {
	if len(s) <= 40 {
		return s
	}
	cut := 40
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// queryTerm folds one raw term; false when it holds no word.
func queryTerm(raw string) (Term, bool) {
	prefix := strings.HasSuffix(raw, "*")
	raw = strings.TrimRight(raw, "*")
	var t Term
	toks := runs(raw)
	for i, tok := range toks {
		if !tok.cjk {
			t.Words = append(t.Words, tok.text)
			continue
		}
		rs := []rune(tok.text)
		last := i == len(toks)-1
		if len(rs) == 1 && !(last && prefix) {
			// One character alone is the first of a document's bigrams or
			// the last of its run: a prefix of the index's words. Only at
			// the end of a phrase can a word be a prefix.
			if !last {
				t.Words = append(t.Words, tok.text)
				continue
			}
			prefix = true
		}
		t.Words = append(t.Words, bigrams(tok.text, false)...)
	}
	t.Prefix = prefix
	return t, len(t.Words) > 0
}

// Positive are the terms a result must hold.
func (q *Query) Positive() []Term {
	var out []Term
	for _, t := range q.Terms {
		if !t.Exclude {
			out = append(out, t)
		}
	}
	return out
}

// FTS4 is the query in SQLite FTS4's enhanced query syntax: each term a
// quoted phrase (index words hold only letters and digits, so nothing in a
// phrase is syntax), the positive terms first and each excluded one after
// NOT. Phrases come in the order of Positive, which matchinfo follows.
func (q *Query) FTS4() string {
	var b strings.Builder
	phrase := func(t Term) {
		b.WriteByte('"')
		b.WriteString(strings.Join(t.Words, " "))
		if t.Prefix {
			b.WriteByte('*')
		}
		b.WriteByte('"')
	}
	for i, t := range q.Positive() {
		if i > 0 {
			b.WriteByte(' ')
		}
		phrase(t)
	}
	for _, t := range q.Terms {
		if t.Exclude {
			b.WriteString(" NOT ")
			phrase(t)
		}
	}
	return b.String()
}

// TSQuery is the query as PostgreSQL tsquery text, to be cast (::tsquery)
// rather than parsed again: each word a quoted lexeme, a phrase joined by
// <->, a prefix marked :*, excluded terms negated.
func (q *Query) TSQuery() string {
	var parts []string
	for _, t := range q.Terms {
		lex := make([]string, len(t.Words))
		for i, w := range t.Words {
			lex[i] = "'" + strings.ReplaceAll(w, "'", "''") + "'"
		}
		if t.Prefix {
			lex[len(lex)-1] += ":*"
		}
		p := strings.Join(lex, " <-> ")
		if len(lex) > 1 {
			p = "(" + p + ")"
		}
		if t.Exclude {
			p = "!" + p
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, " & ")
}

// MatchesWords reports whether t occurs in words, a text's folded words.
func (t Term) MatchesWords(words []string) bool {
	n := len(t.Words)
	for i := 0; i+n <= len(words); i++ {
		ok := true
		for j, w := range t.Words {
			if j == n-1 && t.Prefix {
				ok = strings.HasPrefix(words[i+j], w)
			} else {
				ok = words[i+j] == w
			}
			if !ok {
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// Line is a line of a text that holds one of a query's terms.
type Line struct {
	Number int    `json:"line"` // from 1
	Text   string `json:"text"`
}

// MatchingLines are the lines of text that hold a positive term of q, at
// most max of them (0: all). A phrase is looked for within a line.
func (q *Query) MatchingLines(text string, max int) []Line {
	pos := q.Positive()
	var out []Line
	for i, line := range strings.Split(text, "\n") {
		words := Words(line)
		for _, t := range pos {
			if t.MatchesWords(words) {
				out = append(out, Line{Number: i + 1, Text: strings.TrimSuffix(line, "\r")})
				break
			}
		}
		if max > 0 && len(out) == max {
			break
		}
	}
	return out
}
