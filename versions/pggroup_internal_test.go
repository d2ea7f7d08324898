package versions

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/memfs/memfs/versions/pgtest"
)

// pgGroupDB opens a fresh PostgreSQL database twice: as the engine, and
// as a plain connection that holds store locks and reads the rows.
func pgGroupDB(t *testing.T) (*DB, *sql.DB) {
	t.Helper()
	dsn := pgtest.Database(t)
	db, err := Open(dsn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	return db, admin
}

// pgGroupStore creates a store and n memories in it, through the save
// that reads first, so that the later saves are one statement each.
func pgGroupStore(t *testing.T, db *DB, name string, n int) (*Store, []*Memory) {
	t.Helper()
	s, err := db.CreateStore(context.Background(), StoreParams{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	ms := make([]*Memory, n)
	for i := range ms {
		ms[i] = &Memory{}
		if _, err := db.Save(context.Background(), SaveReq{StoreID: s.ID, Path: fmt.Sprintf("/m%d.md", i), Content: "one",
			By: UserActor("tester"), Memory: ms[i]}); err != nil {
			t.Fatal(err)
		}
	}
	return s, ms
}

// saveOver saves content over m with the head the caller knows.
func saveOver(db *DB, s *Store, m *Memory, content string, by Actor) (Change, error) {
	return db.Save(context.Background(), SaveReq{StoreID: s.ID, Path: m.Path, Content: content, By: by, MemoryID: m.ID,
		HeadVersionID: m.VersionID, HeadSHA256: m.ContentSHA256, HeadContent: m.Content, BaseVersionID: m.VersionID})
}

// lockedRound runs the saves of each store at once while admin holds the
// stores' row locks: a store's first save is in flight (waiting for the
// lock) before its others start, and the lock is released once every
// other waits in its store's queue. It returns when all are done.
func lockedRound(t *testing.T, db *DB, admin *sql.DB, saves map[string][]func()) {
	t.Helper()
	ctx := context.Background()
	tx, err := admin.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var wg sync.WaitGroup
	for id, fns := range saves {
		if _, err := tx.ExecContext(ctx, "SELECT 1 FROM stores WHERE id = $1 FOR UPDATE", id); err != nil {
			t.Fatal(err)
		}
		v, _ := db.seqs.Load(id)
		seq := v.(int64)
		waiting := func() (inFlight bool, queued int) {
			db.pgGroup.mu.Lock()
			defer db.pgGroup.mu.Unlock()
			q, ok := db.pgGroup.stores[seq]
			if !ok {
				return false, 0
			}
			return true, len(q.calls)
		}
		wg.Go(fns[0])
		for start := time.Now(); ; wait(t) {
			if in, _ := waiting(); in {
				break
			}
			if time.Since(start) > 10*time.Second {
				tx.Rollback()
				wg.Wait()
				t.Fatalf("the first save of store %s is not in flight after 10s", id)
			}
		}
		for _, fn := range fns[1:] {
			wg.Go(fn)
		}
		for start := time.Now(); ; wait(t) {
			_, n := waiting()
			if n == len(fns)-1 {
				break
			}
			if time.Since(start) > 10*time.Second {
				tx.Rollback()
				wg.Wait()
				t.Fatalf("%d of the %d saves of store %s queued behind the first after 10s", n, len(fns)-1, id)
			}
		}
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
}

// transactions counts the transactions that wrote store's versions after
// the row seq: each version's xmin is the one that inserted it.
func transactions(t *testing.T, admin *sql.DB, store *Store, seq int64) (xacts []string) {
	t.Helper()
	rows, err := admin.Query(`SELECT DISTINCT xmin::text FROM versions
		WHERE store = (SELECT seq FROM stores WHERE id = $1) AND seq > $2`, store.ID, seq)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var x string
		if err := rows.Scan(&x); err != nil {
			t.Fatal(err)
		}
		xacts = append(xacts, x)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return xacts
}

// lastSeq is the row of store's latest version.
func lastSeq(t *testing.T, admin *sql.DB, store *Store) int64 {
	t.Helper()
	var seq int64
	if err := admin.QueryRow(`SELECT max(seq) FROM versions WHERE store = (SELECT seq FROM stores WHERE id = $1)`, store.ID).Scan(&seq); err != nil {
		t.Fatal(err)
	}
	return seq
}

// One-statement saves and creates of one store that arrive while one is
// in flight share one transaction, sent in one round trip: every save
// lands with its version as the memory's head, and the store counts every
// new memory.
func TestPostgresGroupCommit(t *testing.T) {
	db, admin := pgGroupDB(t)
	ctx := context.Background()
	by := UserActor("tester")
	const n = 6
	s, ms := pgGroupStore(t, db, "group", n)
	seq0 := lastSeq(t, admin, s)
	db.HoldSweeps()
	writes, stmts, batches := db.Writes(), db.Statements(), db.pgGroup.batches

	chs := make([]Change, 2*n)
	errs := make([]error, 2*n)
	var fns []func()
	for i := range 2 * n {
		fns = append(fns, func() {
			if i < n {
				chs[i], errs[i] = saveOver(db, s, ms[i], fmt.Sprintf("two %d", i), by)
			} else {
				chs[i], errs[i] = db.Save(ctx, SaveReq{StoreID: s.ID, Path: fmt.Sprintf("/new/%d.md", i), Content: "new", By: by})
			}
		})
	}
	lockedRound(t, db, admin, map[string][]func(){s.ID: fns})

	for i, err := range errs {
		if err != nil {
			t.Fatalf("save %d: %v", i, err)
		}
	}
	if got := db.pgGroup.batches - batches; got != 1 {
		t.Errorf("%d shared transactions for %d saves queued behind one, want 1", got, 2*n-1)
	}
	if got, want := len(transactions(t, admin, s, seq0)), 2; got != want {
		t.Errorf("%d saves written by %d transactions, want %d (the first alone, then the others together)", 2*n, got, want)
	}
	if got, want := db.Writes()-writes, int64(2*n); got != want {
		t.Errorf("%d writes counted for %d saves, want %d", got, 2*n, want)
	}
	// The first save's call; BEGIN, the others' calls and COMMIT.
	if got, want := db.Statements()-stmts, int64(1+2*n-1+2); got != want {
		t.Errorf("%d statements sent, want %d", got, want)
	}
	for i, ch := range chs {
		m, err := db.GetMemory(ctx, s.ID, ch.MemoryID)
		if err != nil {
			t.Fatalf("save %d's memory %s: %v", i, ch.MemoryID, err)
		}
		want, op := "new", ChangeCreated
		if i < n {
			want, op = fmt.Sprintf("two %d", i), ChangeModified
		}
		if ch.Op != op || ch.Conflict || ch.Seq <= seq0 || m.VersionID != ch.VersionID || *m.Content != want || m.Path != ch.Path {
			t.Errorf("save %d: change %+v, memory after it %+v", i, ch, m)
		}
		versions := 1
		if i < n {
			versions = 2
		}
		h, err := db.ListVersions(ctx, s.ID, VersionListOptions{MemoryID: ch.MemoryID})
		if err != nil || len(h.Data) != versions || h.Data[0].ID != ch.VersionID {
			t.Errorf("save %d: history %+v %v", i, h.Data, err)
		}
	}
	st, err := db.GetStore(ctx, s.ID)
	if err != nil || st.MemoryCount != 2*n {
		t.Errorf("store counts %d memories, want %d (%v)", st.MemoryCount, 2*n, err)
	}
}

// A call of a shared transaction that writes nothing (its head moved) is
// decided again alone, by the save that reads, and the others land in
// the shared transaction.
func TestPostgresGroupCommitStale(t *testing.T) {
	db, admin := pgGroupDB(t)
	ctx := context.Background()
	by := UserActor("tester")
	const n = 5
	s, ms := pgGroupStore(t, db, "stale", n)
	moved, err := saveOver(db, s, ms[1], "moved on", by)
	if err != nil {
		t.Fatal(err)
	}
	seq0 := lastSeq(t, admin, s)
	batches := db.pgGroup.batches

	chs := make([]Change, n)
	errs := make([]error, n)
	var fns []func()
	for i := range n {
		fns = append(fns, func() { chs[i], errs[i] = saveOver(db, s, ms[i], fmt.Sprintf("two %d", i), by) })
	}
	lockedRound(t, db, admin, map[string][]func(){s.ID: fns})

	for i, err := range errs {
		if err != nil {
			t.Fatalf("save %d: %v", i, err)
		}
	}
	if got := db.pgGroup.batches - batches; got != 1 {
		t.Errorf("%d shared transactions, want 1", got)
	}
	// The first alone, the others but the stale one together, the stale
	// one decided again alone.
	if got, want := len(transactions(t, admin, s, seq0)), 3; got != want {
		t.Errorf("%d saves written by %d transactions, want %d", n, got, want)
	}
	for i, ch := range chs {
		m, err := db.GetMemory(ctx, s.ID, ms[i].ID)
		if err != nil {
			t.Fatal(err)
		}
		if m.VersionID != ch.VersionID || *m.Content != fmt.Sprintf("two %d", i) || ch.Conflict != (i == 1) {
			t.Errorf("save %d: change %+v, memory after it %+v", i, ch, m)
		}
	}
	h, err := db.ListVersions(ctx, s.ID, VersionListOptions{MemoryID: ms[1].ID})
	if err != nil || len(h.Data) != 3 || h.Data[0].ID != chs[1].VersionID || h.Data[1].ID != moved.VersionID || !h.Data[0].Conflict {
		t.Errorf("the stale save's memory: history %+v %v", h.Data, err)
	}
}

// A call that fails aborts its shared transaction: every call it held
// runs again alone, the failing one fails alone and the others land.
func TestPostgresGroupCommitFails(t *testing.T) {
	db, admin := pgGroupDB(t)
	ctx := context.Background()
	const n = 5
	s, ms := pgGroupStore(t, db, "fails", n)
	seq0 := lastSeq(t, admin, s)
	writes, batches := db.Writes(), db.pgGroup.batches

	errs := make([]error, n)
	var fns []func()
	for i := range n {
		by := UserActor("tester")
		if i == 2 {
			by = UserActor("nul\x00") // PostgreSQL's text refuses NUL
		}
		fns = append(fns, func() { _, errs[i] = saveOver(db, s, ms[i], fmt.Sprintf("two %d", i), by) })
	}
	lockedRound(t, db, admin, map[string][]func(){s.ID: fns})

	for i, err := range errs {
		if i == 2 && ErrorCode(err) != CodeInvalid {
			t.Errorf("the save by an actor holding NUL: %v, want %v", err, CodeInvalid)
		}
		if i != 2 && err != nil {
			t.Errorf("save %d: %v", i, err)
		}
	}
	if got := db.pgGroup.batches - batches; got != 0 {
		t.Errorf("%d shared transactions committed, want none", got)
	}
	if got, want := db.Writes()-writes, int64(n-1); got != want {
		t.Errorf("%d writes counted, want %d", got, want)
	}
	if got, want := len(transactions(t, admin, s, seq0)), n-1; got != want {
		t.Errorf("%d transactions wrote, want %d (each save alone)", got, want)
	}
	for i := range n {
		m, err := db.GetMemory(ctx, s.ID, ms[i].ID)
		want := fmt.Sprintf("two %d", i)
		if i == 2 {
			want = "one"
		}
		if err != nil || *m.Content != want {
			t.Errorf("memory %d: %+v %v, want %q", i, m, err, want)
		}
	}
}

// Saves to two stores at once never share a transaction: each store's
// own are grouped.
func TestPostgresGroupCommitStores(t *testing.T) {
	db, admin := pgGroupDB(t)
	by := UserActor("tester")
	const n = 4
	a, as := pgGroupStore(t, db, "a", n)
	b, bs := pgGroupStore(t, db, "b", n)
	a0, b0 := lastSeq(t, admin, a), lastSeq(t, admin, b)
	batches := db.pgGroup.batches

	var errs sync.Map
	saves := map[string][]func(){}
	for _, st := range []struct {
		s  *Store
		ms []*Memory
	}{{a, as}, {b, bs}} {
		for i, m := range st.ms {
			saves[st.s.ID] = append(saves[st.s.ID], func() {
				if _, err := saveOver(db, st.s, m, fmt.Sprintf("two %d", i), by); err != nil {
					errs.Store(st.s.Name+m.Path, err)
				}
			})
		}
	}
	lockedRound(t, db, admin, saves)

	errs.Range(func(k, v any) bool {
		t.Errorf("save %s: %v", k, v)
		return true
	})
	if got := db.pgGroup.batches - batches; got != 2 {
		t.Errorf("%d shared transactions, want 2 (one per store)", got)
	}
	xa, xb := transactions(t, admin, a, a0), transactions(t, admin, b, b0)
	if len(xa) != 2 || len(xb) != 2 {
		t.Errorf("store a written by %d transactions, b by %d, want 2 each", len(xa), len(xb))
	}
	for _, x := range xa {
		for _, y := range xb {
			if x == y {
				t.Errorf("transaction %s wrote both stores", x)
			}
		}
	}
}
