package versions

import (
	"io/fs"
	"strconv"
	"strings"
	"testing"
)

// Two migrations with one number would apply only the first: the second's
// number is then recorded as done.
func TestMigrationNumbersUnique(t *testing.T) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		names, err := fs.Glob(migrationFiles, "migrations/"+dialect+"/*.sql")
		if err != nil || len(names) == 0 {
			t.Fatalf("%s migrations: %v %v", dialect, names, err)
		}
		seen := map[int]string{}
		for _, n := range names {
			base := n[strings.LastIndexByte(n, '/')+1:]
			num, err := strconv.Atoi(strings.SplitN(base, "_", 2)[0])
			if err != nil {
				t.Errorf("%s: no number", n)
			}
			if other, ok := seen[num]; ok {
				t.Errorf("%s and %s share the number %d: renumber the newer one", other, n, num)
			}
			seen[num] = n
		}
	}
}
