package versions_test

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/versions"
	"github.com/memfs/memfs/versions/pgtest"
)

// BenchmarkPostgresSave puts the cost of one save on PostgreSQL beside a
// bare one-row commit on the same server in the same run: each op is one
// INSERT of 2 KiB in autocommit on a plain connection (the probe), then
// one save of 2 KiB by one writer. It reports the saves per second of each
// operation and "save/commit", a save's time over the probe's. Run it with
// MEMFS_TEST_POSTGRES set:
//
//	go test -run XXX -bench PostgresSave -benchtime 2000x ./versions
func BenchmarkPostgresSave(b *testing.B) {
	dsn := pgtest.Database(b)
	db, err := versions.Open(dsn, versions.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	probe, err := sql.Open("pgx", dsn)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { probe.Close() })
	probe.SetMaxOpenConns(1)
	if _, err := probe.Exec("CREATE TABLE probe (id BIGSERIAL PRIMARY KEY, body BYTEA NOT NULL)"); err != nil {
		b.Fatal(err)
	}
	body := []byte(strings.Repeat("x", 2048))
	s := newStore(b, db, versions.StoreParams{MaxMemories: 1 << 30, MaxHistoryBytes: -1})
	// A store already in use: the server's statistics count its rows, so
	// that the functions' plans are those of a store, not of empty tables
	// (a plan made then stays until the next ANALYZE).
	for i := range 1000 {
		if _, err := db.CreateMemory(ctx, s.ID, fmt.Sprintf("/seed/%d.md", i), string(body), me); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := probe.Exec("ANALYZE"); err != nil {
		b.Fatal(err)
	}
	// Each sub-benchmark runs more than once (b.N grows): the files each
	// run creates, renames and deletes are counted across runs.
	var created, renamed, deleted int
	type head struct{ id, version, sha, content string }
	heads := map[int]head{}
	ops := []struct {
		name string
		save func(n int) error
	}{
		{"create", func(int) error {
			created++
			_, err := db.CreateMemory(ctx, s.ID, fmt.Sprintf("/c/%d.md", created), string(body), me)
			return err
		}},
		{"overwrite", func(n int) error {
			c := fmt.Sprintf("%d %s", n, body)
			_, err := db.UpdateMemory(ctx, s.ID, fmt.Sprintf("/c/%d.md", 1+n%100), versions.MemoryUpdate{Content: &c}, me)
			return err
		}},
		{"overwrite-known-head", func(n int) error {
			// As a mount saves: it knows the head, so nothing is read.
			i := 1 + n%100
			h, ok := heads[i]
			if !ok {
				m, err := db.GetMemory(ctx, s.ID, fmt.Sprintf("/c/%d.md", i))
				if err != nil {
					return err
				}
				h = head{m.ID, m.VersionID, m.ContentSHA256, *m.Content}
			}
			c := fmt.Sprintf("%d known %s", n, body)
			ch, err := db.Save(ctx, versions.SaveReq{StoreID: s.ID, Path: fmt.Sprintf("/c/%d.md", i), Content: c, By: me,
				MemoryID: h.id, HeadVersionID: h.version, HeadSHA256: h.sha, HeadContent: &h.content, BaseVersionID: h.version})
			if err != nil {
				return err
			}
			heads[i] = head{h.id, ch.VersionID, ch.SHA256, c}
			return nil
		}},
		{"rename", func(int) error {
			if renamed == created {
				return fmt.Errorf("rename: all %d files renamed; run create with as many ops first", created)
			}
			renamed++
			_, err := db.Rename(ctx, s.ID, fmt.Sprintf("/c/%d.md", renamed), fmt.Sprintf("/c/%d.md~", renamed), false, me)
			return err
		}},
		{"delete", func(int) error {
			if deleted == renamed {
				return fmt.Errorf("delete: all %d renamed files deleted", renamed)
			}
			deleted++
			return db.DeleteMemory(ctx, s.ID, fmt.Sprintf("/c/%d.md~", deleted), versions.MemoryDelete{}, me)
		}},
	}
	for _, op := range ops {
		b.Run(op.name, func(b *testing.B) {
			var commit, save time.Duration
			stmts := db.Statements()
			for n := range b.N {
				t0 := time.Now()
				if _, err := probe.Exec("INSERT INTO probe (body) VALUES ($1)", body); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if err := op.save(n); err != nil {
					b.Fatal(err)
				}
				commit, save = commit+t1.Sub(t0), save+time.Since(t1)
			}
			b.ReportMetric(float64(b.N)/commit.Seconds(), "commits/s")
			b.ReportMetric(float64(b.N)/save.Seconds(), "saves/s")
			b.ReportMetric(save.Seconds()/commit.Seconds(), "save/commit")
			b.ReportMetric(float64(db.Statements()-stmts)/float64(b.N), "stmts/op")
		})
	}
}

// BenchmarkPostgresSaveConcurrent is BenchmarkPostgresSave's known-head
// saves and creates made by 8 writers of one store at once, as the
// processes of one mount save. It reports the saves per second and the
// transactions per save, counted from the versions' xmin (each
// transaction that inserted one).
//
//	go test -run XXX -bench PostgresSaveConcurrent -benchtime 1000x ./versions
func BenchmarkPostgresSaveConcurrent(b *testing.B) {
	const writers = 8
	dsn := pgtest.Database(b)
	db, err := versions.Open(dsn, versions.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	probe, err := sql.Open("pgx", dsn)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { probe.Close() })
	body := strings.Repeat("x", 2048)
	s := newStore(b, db, versions.StoreParams{MaxMemories: 1 << 30, MaxHistoryBytes: -1})
	heads := make([]*versions.Memory, writers)
	for w := range heads {
		heads[w] = create(b, db, s.ID, fmt.Sprintf("/w%d.md", w), body)
	}
	// Each sub-benchmark runs more than once (b.N grows): what each writer
	// saved is counted across runs, so that no save repeats its head.
	var saved, created [writers]int
	ops := []struct {
		name string
		save func(w, n int) error
	}{
		{"overwrite-known-head", func(w, _ int) error {
			m := heads[w]
			saved[w]++
			c := fmt.Sprintf("%d %s", saved[w], body)
			ch, err := db.Save(ctx, versions.SaveReq{StoreID: s.ID, Path: m.Path, Content: c, By: me, MemoryID: m.ID,
				HeadVersionID: m.VersionID, HeadSHA256: m.ContentSHA256, HeadContent: m.Content, BaseVersionID: m.VersionID})
			if err != nil {
				return err
			}
			heads[w] = &versions.Memory{ID: m.ID, Path: m.Path, VersionID: ch.VersionID, ContentSHA256: ch.SHA256, Content: &c}
			return nil
		}},
		{"create", func(w, _ int) error {
			created[w]++
			_, err := db.Save(ctx, versions.SaveReq{StoreID: s.ID, Path: fmt.Sprintf("/c%d/%d.md", w, created[w]), Content: body, By: me})
			return err
		}},
	}
	last := func() (seq, xacts int64) {
		err := probe.QueryRow("SELECT coalesce(max(seq), 0), count(DISTINCT xmin::text) FROM versions").Scan(&seq, &xacts)
		if err != nil {
			b.Fatal(err)
		}
		return seq, xacts
	}
	for _, op := range ops {
		b.Run(op.name, func(b *testing.B) {
			seq0, xacts0 := last()
			stmts := db.Statements()
			errs := make(chan error, writers)
			t0 := time.Now()
			for w := range writers {
				go func() {
					var err error
					for n := w; n < b.N && err == nil; n += writers {
						err = op.save(w, n)
					}
					errs <- err
				}()
			}
			for range writers {
				if err := <-errs; err != nil {
					b.Fatal(err)
				}
			}
			elapsed := time.Since(t0)
			seq, xacts := last()
			if got := seq - seq0; got != int64(b.N) {
				b.Fatalf("%d versions written for %d saves", got, b.N)
			}
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "saves/s")
			b.ReportMetric(float64(xacts-xacts0)/float64(b.N), "xacts/save")
			b.ReportMetric(float64(db.Statements()-stmts)/float64(b.N), "stmts/op")
		})
	}
}
