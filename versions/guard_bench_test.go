package versions_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/guard"
	"github.com/memfs/memfs/versions"
)

// BenchmarkGuardSave measures what the guard adds to a save. Each
// iteration saves the same content on a store whose guard is off and on one
// whose guard refuses, one after the other, and times each save; the
// medians of the two, and the median time of the guard's own check of that
// content (guard.ScanChange, or guard.Scan for a new memory), are printed
// with the guard's share of a save. Medians of interleaved saves, because
// the machine this runs on is shared: a mean would carry whatever else ran.
//
// "edit" changes one line of a memory of the size (what a mount save or an
// API update usually is: the guard reads the previous content and checks
// the changed line); "new" writes a memory of that size (all of it is
// checked).
func BenchmarkGuardSave(b *testing.B) {
	doc, err := os.ReadFile("../docs/design.md")
	if err != nil {
		b.Fatal(err)
	}
	guard.Scan("warm up: the rules compile once per process")
	for _, size := range []int{2 << 10, 100 << 10} {
		// Room for the line a save adds, under the store's limit.
		text := strings.Repeat(string(doc), size/len(doc)+1)[:size-64]
		for _, kind := range []string{"edit", "new"} {
			b.Run(fmt.Sprintf("%s-%dKiB", kind, size>>10), func(b *testing.B) { guardSaves(b, kind, text) })
		}
	}
}

func guardSaves(b *testing.B, kind, text string) {
	db := openDB(b)
	var stores [2]*versions.Store
	var mems [2]*versions.Memory
	for i, p := range []guard.Policy{guard.Off, guard.Refuse} {
		stores[i] = newStore(b, db, versions.StoreParams{Guard: p, MaxHistoryBytes: -1, MaxMemories: 1 << 20})
		mems[i] = create(b, db, stores[i].ID, "/notes.md", text)
	}
	// Each save changes one line in the middle: alternate between two.
	mid := strings.IndexByte(text[len(text)/2:], '\n') + len(text)/2 + 1
	variants := [2]string{text[:mid] + "a line the agent added\n" + text[mid:], text[:mid] + "another line instead\n" + text[mid:]}
	save := func(i, n int) time.Duration {
		start := time.Now()
		var err error
		if kind == "edit" {
			_, err = db.UpdateMemory(ctx, stores[i].ID, mems[i].ID, versions.MemoryUpdate{Content: &variants[n%2]}, me)
		} else {
			_, err = db.CreateMemory(ctx, stores[i].ID, fmt.Sprintf("/new/%d.md", n), variants[n%2], me)
		}
		if err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	var off, on, check []time.Duration
	b.ResetTimer()
	for n := range b.N {
		off = append(off, save(0, n))
		on = append(on, save(1, n))
		start := time.Now()
		if kind == "edit" {
			guard.ScanChange(variants[(n+1)%2], variants[n%2])
		} else {
			guard.Scan(variants[n%2])
		}
		check = append(check, time.Since(start))
	}
	b.StopTimer()
	mOff, mOn, mCheck := median(off), median(on), median(check)
	b.ReportMetric(float64(mOff.Nanoseconds()), "off-ns/save")
	b.ReportMetric(float64(mOn.Nanoseconds()), "refuse-ns/save")
	b.ReportMetric(float64(mCheck.Nanoseconds()), "check-ns")
	if b.N >= 100 {
		fmt.Printf("guard on a %s save of %d bytes: the check takes %v, %.1f%% of a save (%v with the guard off); saves with the guard on: %v (%+.1f%%)\n",
			kind, len(variants[0]), mCheck, 100*float64(mCheck)/float64(mOff), mOff, mOn, 100*float64(mOn-mOff)/float64(mOff))
	}
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
