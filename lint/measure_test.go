package lint_test

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/lint"
	"github.com/memfs/memfs/versions"
)

// TestMeasureLint times lint.Run over 2,000 memories of about 1 KiB on
// SQLite (docs/lint.md); it asserts nothing and runs only with
// MEMFS_MEASURE_LINT=1:
//
//	MEMFS_MEASURE_LINT=1 go test -count=1 -run TestMeasureLint -v ./lint/
func TestMeasureLint(t *testing.T) {
	if os.Getenv("MEMFS_MEASURE_LINT") == "" {
		t.Skip("a measurement: set MEMFS_MEASURE_LINT=1")
	}
	ctx := context.Background()
	db, err := versions.Open(filepath.Join(t.TempDir(), "m.db"), versions.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := db.CreateStore(ctx, versions.StoreParams{Name: "big"})
	if err != nil {
		t.Fatal(err)
	}
	words := strings.Fields("memory laptop project deploy billing export queue review design onboarding schedule meeting notes budget release staging database migration runbook retry customer invoice catalog supplier pricing")
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 2000; i++ {
		var b strings.Builder
		fmt.Fprintf(&b, "# Note %d\n\n", i)
		for b.Len() < 1024 {
			if rng.Intn(3) == 0 {
				fmt.Fprintf(&b, "- %s: %s %d\n", words[rng.Intn(len(words))], words[rng.Intn(len(words))], rng.Intn(100))
			} else {
				for j := 0; j < 8; j++ {
					b.WriteString(words[rng.Intn(len(words))] + " ")
				}
				b.WriteString("\n")
			}
		}
		if _, err := db.CreateMemory(ctx, s.ID, fmt.Sprintf("/d%02d/n%04d.md", i%40, i), b.String(), versions.UserActor("m")); err != nil {
			t.Fatal(err)
		}
	}
	for r := 0; r < 3; r++ {
		start := time.Now()
		found, err := lint.Run(ctx, db, []string{s.ID})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("lint of 2,000 memories (2 MB): %v, %d findings", time.Since(start), len(found))
	}
}
