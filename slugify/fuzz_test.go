package slugify_test

import (
	"bufio"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/memfs/memfs/slugify"
)

var slugRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// readSeeds loads a seed corpus kept at the top of the repository; each line
// is a Go quoted string, so any byte sequence can be a seed.
func readSeeds(t testing.TB, name string) []string {
	t.Helper()
	f, err := os.Open("../testdata/fuzz/" + name)
	if err != nil {
		t.Fatalf("open seed corpus: %v (run the test from its package directory)", err)
	}
	defer f.Close()
	var seeds []string
	sc := bufio.NewScanner(f)
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

func FuzzMake(f *testing.F) {
	for _, s := range readSeeds(f, "slugs.txt") {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		s := slugify.Make(name)
		if !slugRE.MatchString(s) {
			t.Fatalf("Make(%q) = %q, not a slug", name, s)
		}
		if again := slugify.Make(s); again != s {
			t.Fatalf("Make is not idempotent: Make(%q) = %q, Make(%q) = %q", name, s, s, again)
		}
	})
}

func FuzzUnique(f *testing.F) {
	seeds := readSeeds(f, "slugs.txt")
	for i := range seeds {
		f.Add(seeds[i], seeds[(i+1)%len(seeds)], seeds[(i+2)%len(seeds)])
	}
	f.Fuzz(func(t *testing.T, a, b, c string) {
		// Repeats and a name that looks like another's suffixed slug are the
		// collisions Unique must resolve.
		names := []string{a, b, c, a, slugify.Make(a) + "-2", b}
		got := slugify.Unique(names)
		if len(got) != len(names) {
			t.Fatalf("Unique(%q) returned %d slugs, want %d", names, len(got), len(names))
		}
		seen := map[string]int{}
		for i, s := range got {
			if !slugRE.MatchString(s) {
				t.Fatalf("Unique(%q)[%d] = %q, not a slug", names, i, s)
			}
			base := slugify.Make(names[i])
			if s != base && !(strings.HasPrefix(s, base+"-") && isNumber(s[len(base)+1:])) {
				t.Fatalf("Unique(%q)[%d] = %q, want %q or %q-N", names, i, s, base, base)
			}
			if j, dup := seen[s]; dup {
				t.Fatalf("Unique(%q) gave %q to names %d and %d", names, s, j, i)
			}
			seen[s] = i
		}
		if again := slugify.Unique(names); strings.Join(again, "/") != strings.Join(got, "/") {
			t.Fatalf("Unique is not stable: %q then %q", got, again)
		}
	})
}

func isNumber(s string) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n >= 2 && strconv.Itoa(n) == s
}
