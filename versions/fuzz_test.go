package versions_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memfs/memfs/versions"
)

// FuzzValidatePath: whatever the input, ValidatePath answers with nil or a
// coded error, and what it accepts keeps every rule of API.md.
func FuzzValidatePath(f *testing.F) {
	for _, s := range []string{"/a", "/a/b.md", "", "/", "//", "/a/../b", "/é", "/e\u0301", "/a\x00", strings.Repeat("/x", 21)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		err := versions.ValidatePath(p)
		if err != nil {
			if c := versions.ErrorCode(err); c != versions.CodeInvalid && c != versions.CodeNameTooLong {
				t.Fatalf("ValidatePath(%q): code %d", p, c)
			}
			return
		}
		if !utf8.ValidString(p) || len(p) > versions.MaxPathBytes || !strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") {
			t.Fatalf("accepted %q", p)
		}
		segs := strings.Split(p[1:], "/")
		if len(segs) > versions.MaxPathSegments {
			t.Fatalf("accepted %q with %d segments", p, len(segs))
		}
		for _, s := range segs {
			if s == "" || s == "." || s == ".." || len(s) > versions.MaxSegmentBytes || strings.ContainsRune(s, 0) {
				t.Fatalf("accepted %q with segment %q", p, s)
			}
		}
	})
}
