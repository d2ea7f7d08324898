package versions

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestMeasureSearch measures what docs/search.md reports; it asserts
// nothing and runs only with MEMFS_MEASURE_SEARCH=1:
//
//	MEMFS_MEASURE_SEARCH=1 go test -count=1 -run TestMeasureSearch -v ./versions/
//
// On SQLite: a search of 2,000 memories (2 MB) and of the history of
// 100,000 versions, the index built for 100,000 existing versions (what
// the migration does at upgrade), and the cost of keeping the index on a
// 2 KiB save, against the same build with the index's triggers dropped,
// alternated in one run.
func TestMeasureSearch(t *testing.T) {
	if os.Getenv("MEMFS_MEASURE_SEARCH") == "" {
		t.Skip("a measurement: set MEMFS_MEASURE_SEARCH=1")
	}
	ctx := context.Background()
	words := strings.Fields(`memory laptop project deploy billing export queue review design onboarding
		schedule meeting notes budget release staging database migration runbook retry customer invoice
		catalog supplier pricing editor terminal shell python golang rust docker kubernetes cluster
		backup restore archive policy secret token rotate weekly monthly quarterly goal metric`)
	rng := rand.New(rand.NewSource(1))
	text := func(n int) string {
		var b strings.Builder
		for b.Len() < n {
			if b.Len() > 0 && rng.Intn(10) == 0 {
				b.WriteString("\n")
			}
			b.WriteString(words[rng.Intn(len(words))])
			b.WriteString(" ")
			if rng.Intn(8) == 0 {
				b.WriteString(fmt.Sprintf("%d ", rng.Intn(500)))
			}
		}
		return b.String()
	}
	median := func(ds []time.Duration) time.Duration {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		return ds[len(ds)/2]
	}
	open := func() *DB {
		db, err := Open(filepath.Join(t.TempDir(), "m.db"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}

	// Search over 2,000 memories of about 1 KiB.
	db := open()
	s, err := db.CreateStore(ctx, StoreParams{Name: "heads"})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2000; i++ {
		if _, err := db.CreateMemory(ctx, s.ID, fmt.Sprintf("/d%02d/m%04d.md", i%50, i), text(1024), UserActor("m")); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{"laptop", "deploy staging", `"billing export"`, "rotat* -secret"} {
		var ds []time.Duration
		var n int
		for r := 0; r < 21; r++ {
			start := time.Now()
			res, err := db.Search(ctx, []string{s.ID}, q, SearchOptions{})
			ds = append(ds, time.Since(start))
			if err != nil {
				t.Fatal(err)
			}
			n = len(res)
		}
		t.Logf("search 2,000 memories (2 MB) for %-18q: median %v over 21 runs (%d results shown)", q, median(ds), n)
	}

	// History of 100,000 versions: 2,000 memories saved 50 times each,
	// written in bulk in one transaction per 10,000 so the triggers index
	// them as saves would.
	hs, err := db.CreateStore(ctx, StoreParams{Name: "history"})
	if err != nil {
		t.Fatal(err)
	}
	var seq int64
	err = db.read(ctx, "seq", func(r *run) error { seq, err = db.storeSeq(r, hs.ID); return err })
	if err != nil {
		t.Fatal(err)
	}
	lo, _ := versionRange(seq)
	bulk := func(from, to int) {
		err := db.write(ctx, "bulk", func(r *run) error {
			for i := from; i < to; i++ {
				c := text(300)
				if _, err := r.exec(`INSERT INTO versions (seq, store, memory_id, operation, created_at, actor_type, actor_id, path, sha, size, content)
					VALUES (?, ?, ?, 'modified', ?, 'user_actor', 'm', ?, 'x', ?, ?)`,
					lo+1+int64(i), seq, fmt.Sprintf("mem_%04d", i%2000), time.Now().UnixNano(), fmt.Sprintf("/h/m%04d.md", i%2000), len(c), c); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	for i := 0; i < 100000; i += 10000 {
		bulk(i, i+10000)
	}
	t.Logf("100,000 versions of 300 bytes written with their index: %v", time.Since(start))
	for _, q := range []string{"laptop", "deploy staging", `"billing export"`} {
		var ds []time.Duration
		for r := 0; r < 7; r++ {
			start := time.Now()
			if _, err := db.Search(ctx, []string{hs.ID}, q, SearchOptions{History: true}); err != nil {
				t.Fatal(err)
			}
			ds = append(ds, time.Since(start))
		}
		t.Logf("search --history of 100,000 versions for %-18q: median %v over 7 runs", q, median(ds))
	}

	// The index built at upgrade: the migration's statement over the
	// 100,000 (and 2,000) versions already there.
	err = db.write(ctx, "rebuild", func(r *run) error {
		if _, err := r.exec("DELETE FROM search_versions"); err != nil {
			return err
		}
		start := time.Now()
		_, err := r.exec(`INSERT INTO search_versions (docid, path, content)
			SELECT v.seq, memfs_search_fold(v.path), memfs_search_fold(coalesce(v.content, c.content))
			FROM versions v LEFT JOIN versions c ON c.seq = v.content_of
			WHERE v.redacted_at IS NULL AND (v.content IS NOT NULL OR v.content_of IS NOT NULL)`)
		t.Logf("index built for 102,000 existing versions (the upgrade's migration): %v", time.Since(start))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	// A 2 KiB save with the index and without it (its triggers dropped in
	// the second database), alternated.
	with, without := open(), open()
	err = without.write(ctx, "drop", func(r *run) error {
		for _, tr := range []string{"search_versions_insert", "search_versions_redact", "search_versions_delete"} {
			if _, err := r.exec("DROP TRIGGER " + tr); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	type target struct {
		db  *DB
		sid string
		mid string
	}
	var ts []target
	for _, d := range []*DB{with, without} {
		st, err := d.CreateStore(ctx, StoreParams{Name: "saves"})
		if err != nil {
			t.Fatal(err)
		}
		m, err := d.CreateMemory(ctx, st.ID, "/m.md", "x", UserActor("m"))
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, target{d, st.ID, m.ID})
	}
	contents := make([]string, 400)
	for i := range contents {
		contents[i] = text(2048)[:2048]
	}
	var ratios []float64
	per := [2][]time.Duration{}
	for round := 0; round < 7; round++ {
		var took [2]time.Duration
		for k, tg := range ts {
			start := time.Now()
			for _, c := range contents {
				c := c
				if _, err := tg.db.UpdateMemory(ctx, tg.sid, tg.mid, MemoryUpdate{Content: &c}, UserActor("m")); err != nil {
					t.Fatal(err)
				}
			}
			took[k] = time.Since(start) / time.Duration(len(contents))
			per[k] = append(per[k], took[k])
		}
		ratios = append(ratios, float64(took[0])/float64(took[1]))
	}
	sort.Float64s(ratios)
	t.Logf("2 KiB save: with the index median %v, without %v; ratio with/without over 7 alternated rounds: min %.2f median %.2f max %.2f",
		median(per[0]), median(per[1]), ratios[0], ratios[len(ratios)/2], ratios[len(ratios)-1])
}
