package versions

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// ValidatePath checks a memory path against the hosted API's rules; the error's code
// is CodeNameTooLong for length limits and CodeInvalid otherwise.
func ValidatePath(p string) error {
	if !utf8.ValidString(p) {
		return errorf(CodeInvalid, "path %q is not valid UTF-8: use UTF-8 text", p)
	}
	if len(p) > MaxPathBytes {
		return errorf(CodeNameTooLong, "path is %d bytes, over the limit of %d bytes: use a shorter path", len(p), MaxPathBytes)
	}
	if p == "" || p[0] != '/' {
		return errorf(CodeInvalid, "path %q must start with /, e.g. /notes.md", p)
	}
	if strings.IndexByte(p, 0) >= 0 {
		return errorf(CodeInvalid, "path %q contains a NUL byte: remove it", p)
	}
	if p == "/" {
		return errorf(CodeInvalid, "path / is the store's root, not a memory: add a file name, e.g. /notes.md")
	}
	if strings.HasSuffix(p, "/") {
		return errorf(CodeInvalid, "path %q ends with /: a memory path names a file; drop the trailing /", p)
	}
	segs := strings.Split(p[1:], "/")
	if len(segs) > MaxPathSegments {
		return errorf(CodeNameTooLong, "path %q has %d segments, over the limit of %d: use a shallower path", p, len(segs), MaxPathSegments)
	}
	for _, s := range segs {
		switch {
		case s == "":
			return errorf(CodeInvalid, "path %q has an empty segment (//): remove it", p)
		case s == "." || s == "..":
			return errorf(CodeInvalid, "path %q has a %q segment: write the path without . and .. segments", p, s)
		case len(s) > MaxSegmentBytes:
			return errorf(CodeNameTooLong, "path segment %.40q… is %d bytes, over the limit of %d bytes per name: use a shorter name", s, len(s), MaxSegmentBytes)
		}
		// A name that compatibility normalisation turns into a dot segment
		// or a name holding a slash (fullwidth "．．", the one-dot leader
		// "․", fullwidth "／") reads as traversal to any tool that applies
		// NFKC, so it is refused like the plain spelling.
		if k := norm.NFKC.String(s); k == "." || k == ".." || strings.ContainsRune(k, '/') {
			return errorf(CodeInvalid, "path %q has the segment %q, which reads as %q once compatibility characters are normalised (NFKC): use other characters", p, s, k)
		}
	}
	for i, r := range p {
		if unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029' {
			return errorf(CodeInvalid, "path %q contains the control or format character U+%04X at byte %d: remove it", p, r, i)
		}
	}
	if !norm.NFC.IsNormalString(p) {
		return errorf(CodeInvalid, "path %q is not in Unicode NFC form: normalise it to NFC (for example é as one code point, U+00E9)", p)
	}
	return nil
}

// checkContent applies the content rules (UTF-8, the byte limit) for a store's size limit.
func checkContent(content string, maxBytes int) error {
	if !utf8.ValidString(content) {
		return errorf(CodeNotUTF8, "content is not valid UTF-8 text: memories hold UTF-8 text only; convert it or store it elsewhere")
	}
	if len(content) > maxBytes {
		return errorf(CodeTooLarge, "content is %d bytes, over this store's limit of %d bytes per memory: shorten it or split it into several memories", len(content), maxBytes)
	}
	return nil
}

func validateStoreName(name string) error {
	if !utf8.ValidString(name) {
		return errorf(CodeInvalid, "store name is not valid UTF-8: use UTF-8 text")
	}
	n := utf8.RuneCountInString(name)
	if n == 0 {
		return errorf(CodeInvalid, "store name is empty: give the store a name of 1 to %d characters", MaxStoreNameChars)
	}
	if n > MaxStoreNameChars {
		return errorf(CodeInvalid, "store name is %d characters, over the limit of %d: use a shorter name", n, MaxStoreNameChars)
	}
	for _, r := range name {
		if unicode.Is(unicode.Cc, r) {
			return errorf(CodeInvalid, "store name %q contains the control character U+%04X: remove it", name, r)
		}
	}
	return nil
}

func validateDescription(d string) error {
	if !utf8.ValidString(d) {
		return errorf(CodeInvalid, "description is not valid UTF-8: use UTF-8 text")
	}
	if n := utf8.RuneCountInString(d); n > MaxDescriptionChars {
		return errorf(CodeInvalid, "description is %d characters, over the limit of %d: shorten it", n, MaxDescriptionChars)
	}
	return nil
}

// patchMetadata applies an update's metadata to m, a nil value removing its
// key, and tells whether m changed.
func patchMetadata(m map[string]string, patch map[string]*string) bool {
	changed := false
	for k, v := range patch {
		old, had := m[k]
		switch {
		case v == nil && had:
			delete(m, k)
			changed = true
		case v != nil && (!had || old != *v):
			m[k] = *v
			changed = true
		}
	}
	return changed
}

func validateMetadata(m map[string]string) error {
	if len(m) > MaxMetadataPairs {
		return errorf(CodeInvalid, "metadata has %d keys, over the limit of %d: remove some", len(m), MaxMetadataPairs)
	}
	for k, v := range m {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return errorf(CodeInvalid, "metadata key or value %q is not valid UTF-8: use UTF-8 text", k)
		}
		if n := utf8.RuneCountInString(k); n == 0 || n > MaxMetadataKeyChars {
			return errorf(CodeInvalid, "metadata key %q is %d characters: keys must be 1 to %d characters", k, n, MaxMetadataKeyChars)
		}
		if n := utf8.RuneCountInString(v); n > MaxMetadataValueChars {
			return errorf(CodeInvalid, "metadata value of %q is %d characters, over the limit of %d: shorten it", k, n, MaxMetadataValueChars)
		}
	}
	return nil
}

func validateInstructions(s string) error {
	if !utf8.ValidString(s) {
		return errorf(CodeInvalid, "instructions are not valid UTF-8: use UTF-8 text")
	}
	if n := utf8.RuneCountInString(s); n > MaxInstructionsChars {
		return errorf(CodeInvalid, "instructions are %d characters, over the limit of %d: shorten them", n, MaxInstructionsChars)
	}
	return nil
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// parentOf returns the directory holding p ("/" for a top-level path).
func parentOf(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

func baseName(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }

// subtree returns the bounds [lo, hi) of the paths strictly below dir: every
// path that starts with dir+"/" sorts in that range and no other does,
// because '0' is the byte after '/'.
func subtree(dir string) (lo, hi string) {
	if dir == "/" {
		return "/", "0"
	}
	return dir + "/", dir + "0"
}

// ancestors returns the proper ancestors of p, nearest last ("/a/b/c" →
// "/a", "/a/b").
func ancestors(p string) []string {
	var out []string
	for i := 1; i < len(p); i++ {
		if p[i] == '/' {
			out = append(out, p[:i])
		}
	}
	return out
}

// CheckJSONText refuses JSON text that would decode to something other than
// what was sent: bytes that are not UTF-8, and \u escapes of a lone UTF-16
// surrogate ("\ud800"), both of which encoding/json quietly turns into
// U+FFFD. It does not check the rest of the syntax.
func CheckJSONText(b []byte) error {
	if !utf8.Valid(b) {
		return errorf(CodeInvalid, "the JSON is not valid UTF-8: send UTF-8 text")
	}
	for i := 0; i+1 < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		// A backslash occurs only inside a string, before one escaped
		// character; skipping that character keeps "\\u" from being
		// taken for an escape.
		i++
		if b[i] != 'u' {
			continue
		}
		r, ok := hex4(b[i+1:])
		if !ok || r < 0xd800 || r > 0xdfff {
			continue
		}
		if r <= 0xdbff && i+10 < len(b) && b[i+5] == '\\' && b[i+6] == 'u' {
			if lo, ok := hex4(b[i+7:]); ok && lo >= 0xdc00 && lo <= 0xdfff {
				i += 10
				continue
			}
		}
		return errorf(CodeInvalid, "the JSON holds the escape %s, half of a UTF-16 surrogate pair with no other half: send the character itself or a complete pair", b[i-1:i+5])
	}
	return nil
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
