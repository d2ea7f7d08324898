// Package slugify turns a store's display name into the directory name it is
// mounted under.
package slugify

import (
	"strconv"
	"strings"

	"github.com/gosimple/slug"
)

// Fallback is the slug of a name that has nothing to transliterate into ASCII
// letters or digits, so that every store still gets a usable directory.
const Fallback = "store"

// Make returns the slug of name: lowercased, every run of characters other
// than ASCII letters and digits replaced by one "-", leading and trailing "-"
// dropped ("R&D Notes" → "r-d-notes"). Runs of non-ASCII characters are first
// transliterated by gosimple/slug ("Café" → "cafe", "Заметки" → "zametki");
// ASCII punctuation is never substituted by words, so "&" is a separator,
// not "and".
func Make(name string) string {
	var b strings.Builder
	sep := false
	emit := func(s string) {
		for _, r := range s {
			switch {
			case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
				if sep && b.Len() > 0 {
					b.WriteByte('-')
				}
				sep = false
				b.WriteRune(r)
			case r >= 'A' && r <= 'Z':
				if sep && b.Len() > 0 {
					b.WriteByte('-')
				}
				sep = false
				b.WriteRune(r + ('a' - 'A'))
			default:
				sep = true
			}
		}
	}
	for len(name) > 0 {
		i := strings.IndexFunc(name, func(r rune) bool { return r >= 0x80 })
		if i < 0 {
			emit(name)
			break
		}
		emit(name[:i])
		name = name[i:]
		j := strings.IndexFunc(name, func(r rune) bool { return r < 0x80 })
		if j < 0 {
			j = len(name)
		}
		emit(slug.Make(name[:j]))
		name = name[j:]
	}
	if b.Len() == 0 {
		return Fallback
	}
	return b.String()
}

// Unique returns the slugs of names in order, suffixing "-2", "-3", … to later
// names whose slug is already taken so every directory is distinct. The result
// depends only on the order of names, so a session's directories are stable.
func Unique(names []string) []string {
	taken := make(map[string]bool, len(names))
	out := make([]string, len(names))
	for i, name := range names {
		base := Make(name)
		s := base
		for n := 2; taken[s]; n++ {
			s = base + "-" + strconv.Itoa(n)
		}
		taken[s] = true
		out[i] = s
	}
	return out
}
