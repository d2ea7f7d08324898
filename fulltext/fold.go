// Package fulltext is what memfs search means by a word and by a query, the
// same on both backends: Fold turns text into the words an index holds,
// Parse reads the query grammar (words, "quoted phrases", -excluded words,
// prefix*), and a Query renders itself for SQLite's FTS4 and PostgreSQL's
// tsquery and finds the lines of a text it matches. It imports nothing of
// memfs.
//
// A word is a run of letters and digits, lowercased. Chinese, Japanese and
// Korean text has no spaces between words, so each run of those characters
// is indexed as its overlapping pairs of characters (bigrams) followed by
// its last character alone: 東京都 is "東京 京都 都". A query for 京都 is
// then the phrase of its bigrams, and a query of one such character is a
// prefix of them.
//
// PostgreSQL folds documents with the SQL function memfs_search_fold
// (versions/migrations/postgres/0020_search.sql), which follows the same
// rules; SQLite calls Fold itself, registered on each connection.
package fulltext

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// cjkRanges are the characters indexed as bigrams. The PostgreSQL fold
// names the same ranges.
var cjkRanges = [][2]rune{
	{0x3040, 0x30FF}, // Hiragana, Katakana
	{0x3400, 0x4DBF}, // CJK Unified Ideographs Extension A
	{0x4E00, 0x9FFF}, // CJK Unified Ideographs
	{0xAC00, 0xD7AF}, // Hangul Syllables
	{0xF900, 0xFAFF}, // CJK Compatibility Ideographs
}

func isCJK(r rune) bool {
	if r < 0x3040 {
		return false
	}
	for _, rg := range cjkRanges {
		if r >= rg[0] && r <= rg[1] {
			return true
		}
	}
	return false
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// token is one run of the text: a word, or a run of CJK characters.
type token struct {
	text string
	cjk  bool
}

// runs splits s into lowercased words and CJK runs, in order.
func runs(s string) []token {
	var out []token
	var b strings.Builder
	cjk := false
	flush := func() {
		if b.Len() > 0 {
			out = append(out, token{b.String(), cjk})
			b.Reset()
		}
	}
	for _, r := range s {
		switch {
		case isCJK(r):
			if !cjk {
				flush()
				cjk = true
			}
			b.WriteRune(r)
		case isWordRune(r):
			if cjk {
				flush()
				cjk = false
			}
			b.WriteRune(unicode.ToLower(r))
		default:
			flush()
			cjk = false
		}
	}
	flush()
	return out
}

// bigrams are the overlapping pairs of a CJK run; withLast adds its last
// character alone (as documents are indexed), so that a one-character
// query finds it at the end of a run.
func bigrams(run string, withLast bool) []string {
	rs := []rune(run)
	if len(rs) == 1 {
		return []string{run}
	}
	out := make([]string, 0, len(rs))
	for i := 0; i+1 < len(rs); i++ {
		out = append(out, string(rs[i:i+2]))
	}
	if withLast {
		out = append(out, string(rs[len(rs)-1:]))
	}
	return out
}

// Words are the words of s as an index holds them.
func Words(s string) []string {
	var out []string
	for _, t := range runs(s) {
		if t.cjk {
			out = append(out, bigrams(t.text, true)...)
		} else {
			out = append(out, t.text)
		}
	}
	return out
}

// Fold is s as the index stores it: its words separated by single spaces.
// Invalid UTF-8 is read as U+FFFD, which separates words.
func Fold(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return strings.Join(Words(s), " ")
}
