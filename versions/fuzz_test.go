package versions_test

import (
	"bufio"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/memfs/memfs/versions"
)

// readSeeds loads a seed corpus kept at the top of the repository so that
// every package fuzzing paths or names starts from the same hostile inputs.
// Each line is a Go quoted string, so any byte sequence can be a seed.
func readSeeds(t testing.TB, name string) []string {
	t.Helper()
	f, err := os.Open("../testdata/fuzz/" + name)
	if err != nil {
		t.Fatalf("open seed corpus: %v (run the test from its package directory)", err)
	}
	defer f.Close()
	var seeds []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		s, err := strconv.Unquote(sc.Text())
		if err != nil {
			t.Fatalf("%s:%d: not a Go quoted string: %v", name, n, err)
		}
		seeds = append(seeds, s)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read seed corpus %s: %v", name, err)
	}
	if len(seeds) == 0 {
		t.Fatalf("seed corpus %s is empty", name)
	}
	return seeds
}

// pathProblem returns why p breaks the hosted API's path rules, or "" if it keeps
// them; it is written from the rules, independently of the engine.
func pathProblem(p string) (reason string, tooLong bool) {
	if !utf8.ValidString(p) {
		return "invalid UTF-8", false
	}
	if !norm.NFC.IsNormalString(p) {
		return "not NFC", false
	}
	if len(p) > versions.MaxPathBytes {
		return "over 1024 bytes", true
	}
	if !strings.HasPrefix(p, "/") {
		return "does not start with /", false
	}
	segs := strings.Split(p[1:], "/")
	if len(segs) > versions.MaxPathSegments {
		return "over 20 segments", true
	}
	for _, s := range segs {
		switch {
		case s == "":
			return "empty segment", false
		case s == "." || s == "..":
			return "dot segment", false
		case len(s) > versions.MaxSegmentBytes:
			return "segment over 255 bytes", true
		}
		if k := norm.NFKC.String(s); k == "." || k == ".." || strings.Contains(k, "/") {
			return "a segment whose NFKC form is a dot segment or holds a slash", false
		}
		for _, r := range s {
			if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029' {
				return "control or format character", false
			}
		}
	}
	return "", false
}

func FuzzValidatePath(f *testing.F) {
	for _, s := range readSeeds(f, "paths.txt") {
		f.Add(s)
	}
	for _, s := range []string{"/a", "/a/b.md", "", "/", "//", "/a/../b", "/é", "/e\u0301", "/a\x00", strings.Repeat("/x", 21)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		err := versions.ValidatePath(p)
		reason, _ := pathProblem(p)
		if err == nil {
			if reason != "" {
				t.Fatalf("ValidatePath(%q) accepted a path that is %s", p, reason)
			}
			return
		}
		var e *versions.Error
		if !errors.As(err, &e) {
			t.Fatalf("ValidatePath(%q) = %T %v, want a *versions.Error", p, err, err)
		}
		if e.Code != versions.CodeInvalid && e.Code != versions.CodeNameTooLong {
			t.Fatalf("ValidatePath(%q) code %d, want CodeInvalid or CodeNameTooLong", p, e.Code)
		}
		if e.Message == "" {
			t.Fatalf("ValidatePath(%q) refused it without a message", p)
		}
	})
}

// TestValidatePathTable pins the decisions the fuzz test cannot: paths that
// must be accepted, and which refusals are length refusals.
func TestValidatePathTable(t *testing.T) {
	deep20 := "/" + strings.Repeat("d/", 19) + "f"
	long1024 := "/" + strings.Repeat(strings.Repeat("y", 204)+"/", 4) + strings.Repeat("z", 203)
	for _, tc := range []struct {
		name string
		path string
		want versions.Code // -1: accepted
	}{
		{"Simple", "/notes/todo.md", -1},
		{"Name255", "/" + strings.Repeat("x", 255), -1},
		{"Depth20", deep20, -1},
		{"Bytes1024", long1024, -1},
		{"PercentDots", "/%2e%2e%2f", -1},
		{"BackslashDots", `/..\`, -1},
		{"LeadingDash", "/-rf", -1},
		{"ThreeDots", "/...", -1},
		{"Cyrillic", "/Заметки/день.md", -1},
		{"Name256", "/" + strings.Repeat("x", 256), versions.CodeNameTooLong},
		{"Depth21", deep20 + "/g", versions.CodeNameTooLong},
		{"Bytes1025", long1024 + "z", versions.CodeNameTooLong},
		{"Empty", "", versions.CodeInvalid},
		{"Root", "/", versions.CodeInvalid},
		{"Relative", "a", versions.CodeInvalid},
		{"TrailingSlash", "/a/", versions.CodeInvalid},
		{"EmptySegment", "/a//b", versions.CodeInvalid},
		{"Dot", "/a/./b", versions.CodeInvalid},
		{"DotDot", "/a/../b", versions.CodeInvalid},
		{"NUL", "/a\x00b", versions.CodeInvalid},
		{"Newline", "/a\nb", versions.CodeInvalid},
		{"DEL", "/a\x7fb", versions.CodeInvalid},
		{"LineSeparator", "/a\u2028b", versions.CodeInvalid},
		{"ZeroWidthSpace", "/a\u200bb", versions.CodeInvalid},
		{"InvalidUTF8", "/a\xffb", versions.CodeInvalid},
		{"NotNFC", "/cafe\u0301", versions.CodeInvalid},
		{"FullwidthDotDot", "/a/\uff0e\uff0e/b", versions.CodeInvalid},
		{"OneDotLeader", "/\u2024", versions.CodeInvalid},
		{"OneDotLeaderPair", "/a/\u2024\u2024", versions.CodeInvalid},
		{"TwoDotLeader", "/\u2025/b", versions.CodeInvalid},
		{"FullwidthSlash", "/a\uff0fb", versions.CodeInvalid},
		{"FullwidthThreeDots", "/\uff0e\uff0e\uff0e", -1},
		{"FullwidthLetters", "/\uff41", -1},
	} {
		if tc.name == "Bytes1024" && len(tc.path) != versions.MaxPathBytes {
			t.Fatalf("test path Bytes1024 is %d bytes", len(tc.path))
		}
		t.Run(tc.name, func(t *testing.T) {
			err := versions.ValidatePath(tc.path)
			if tc.want == -1 {
				if err != nil {
					t.Fatalf("ValidatePath(%q) = %v, want accepted", tc.path, err)
				}
				return
			}
			if got := versions.ErrorCode(err); err == nil || got != tc.want {
				t.Fatalf("ValidatePath(%q) = %v (code %d), want code %d", tc.path, err, got, tc.want)
			}
		})
	}
}
