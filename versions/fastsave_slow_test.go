package versions_test

import (
	"testing"

	"github.com/memfs/memfs/versions"
)

// At the history quota's exact boundary, with a pending file
// counted, each one-statement write (a create, a known head's save
// without its content, a rename within a directory) gives the answer the
// save that reads everything gives, and leaves the same counts.
func TestFastMatchesSlowAtQuota(t *testing.T) {
	dsn := testDSN(t)
	fast, err := versions.Open(dsn, versions.Options{})
	ok(t, err)
	t.Cleanup(func() { fast.Close() })
	holdLease(t, fast, "mount-r")
	cost := func(size int, path string) int { return size + 2*len(path) + len(me.ID) + versions.VersionRecordBytes }
	type scenario struct {
		name string
		cost int
		op   func(db *versions.DB, s string, m *versions.Memory) error
	}
	scenarios := []scenario{
		{"create", cost(3, "/d/new.md"), func(db *versions.DB, s string, m *versions.Memory) error {
			_, err := db.Save(ctx, versions.SaveReq{StoreID: s, Path: "/d/new.md", Content: "new", By: me})
			return err
		}},
		{"save", cost(5, "/d/src.md"), func(db *versions.DB, s string, m *versions.Memory) error {
			_, err := db.Save(ctx, versions.SaveReq{StoreID: s, Path: m.Path, Content: "later", By: me, MemoryID: m.ID, HeadVersionID: m.VersionID})
			return err
		}},
		{"rename", cost(len("content"), "/d/renamed.md"), func(db *versions.DB, s string, m *versions.Memory) error {
			_, err := db.Rename(ctx, s, "/d/src.md", "/d/renamed.md", false, me)
			return err
		}},
	}
	for _, sc := range scenarios {
		for _, delta := range []int{0, -1} {
			var got [2]versions.Code
			var counts [2][2]int
			for i, mode := range []string{"fast", "slow"} {
				s := newStore(t, fast, versions.StoreParams{MaxHistoryBytes: 1 << 30})
				prime(t, fast, s.ID)
				m := create(t, fast, s.ID, "/d/src.md", "content")
				_, err := fast.SavePending(ctx, s.ID, owned("mount-r"), "/d/.tmp", "pending", me, 0)
				ok(t, err)
				st, err := fast.GetStore(ctx, s.ID)
				ok(t, err)
				q := st.HistoryBytes + cost(len("pending"), "/d/.tmp") + sc.cost + delta
				_, err = fast.UpdateStore(ctx, s.ID, versions.StoreUpdate{MaxHistoryBytes: &q})
				ok(t, err)
				db := fast
				if mode == "slow" {
					db, err = versions.Open(dsn, versions.Options{}) // knows no store: reads and decides
					ok(t, err)
				}
				got[i] = codeOf(sc.op(db, s.ID, m))
				st, err = fast.GetStore(ctx, s.ID)
				ok(t, err)
				counts[i] = [2]int{st.HistoryBytes, st.MemoryCount}
				if db != fast {
					db.Close()
				}
			}
			if got[0] != got[1] || counts[0] != counts[1] {
				t.Errorf("%s at quota%+d: fast %v (history %d, memories %d), slow %v (history %d, memories %d)",
					sc.name, delta, got[0], counts[0][0], counts[0][1], got[1], counts[1][0], counts[1][1])
			}
			if want := map[int]versions.Code{0: -1, -1: versions.CodeOverQuota}[delta]; got[0] != want {
				t.Errorf("%s at quota%+d: %v, want %v", sc.name, delta, got[0], want)
			}
		}
	}
}

// codeOf is err's code, -1 for no error.
func codeOf(err error) versions.Code {
	if err == nil {
		return -1
	}
	return versions.ErrorCode(err)
}

// a create, and a rename within a directory, at a path whose
// ancestor is a file, or at or above a memory or a kept directory, gets
// the answer of the save that reads everything.
func TestFastMatchesSlowPaths(t *testing.T) {
	dsn := testDSN(t)
	fast, err := versions.Open(dsn, versions.Options{})
	ok(t, err)
	t.Cleanup(func() { fast.Close() })
	layout := func() string {
		s := newStore(t, fast, versions.StoreParams{})
		prime(t, fast, s.ID)
		for _, p := range []string{"/a", "/b/c.md", "/x/y/z.md", "/b/m/deep/n.md", "/b-/q.md", "/b.x"} {
			create(t, fast, s.ID, p, "c")
		}
		for _, d := range []string{"/k", "/k2", "/k2/sub", "/b/kd"} {
			ok(t, fast.MakeDir(ctx, s.ID, d))
		}
		return s.ID
	}
	type result struct {
		code versions.Code
		dump string
	}
	do := func(mode string, op func(db *versions.DB, s string) error) result {
		s := layout()
		db := fast
		if mode == "slow" {
			db, err = versions.Open(dsn, versions.Options{})
			ok(t, err)
			defer db.Close()
		}
		code := codeOf(op(db, s))
		var dump string
		for _, dir := range []string{"/", "/b", "/k", "/k2", "/x", "/x/y"} {
			l, err := fast.ReadDir(ctx, s, dir)
			ok(t, err)
			for _, e := range l {
				dump += e.Path + " "
			}
		}
		st, err := fast.GetStore(ctx, s)
		ok(t, err)
		return result{code, dump + string(rune('0'+st.MemoryCount))}
	}
	for _, p := range []string{"/a", "/a/b", "/a/b/c", "/b", "/b/c.md", "/b/c.md/d", "/k", "/k/new.md", "/k2", "/k2/sub",
		"/k2/sub/f", "/x", "/x/y", "/x/y/z.md/w", "/new.md", "/b/new.md", "/b/m", "/b/m/deep", "/b/kd", "/b-", "/b.x/y"} {
		var r [2]result
		for i, mode := range []string{"fast", "slow"} {
			r[i] = do(mode, func(db *versions.DB, s string) error {
				_, err := db.Save(ctx, versions.SaveReq{StoreID: s, Path: p, Content: "new", By: me, Exclusive: true})
				return err
			})
		}
		if r[0] != r[1] {
			t.Errorf("create at %s: fast %v [%s], slow %v [%s]", p, r[0].code, r[0].dump, r[1].code, r[1].dump)
		}
	}
	for _, to := range []string{"/b/e.md", "/b/m", "/b/kd", "/b/c.md", "/b/m/deep"} {
		var r [2]result
		for i, mode := range []string{"fast", "slow"} {
			r[i] = do(mode, func(db *versions.DB, s string) error {
				_, err := db.Rename(ctx, s, "/b/c.md", to, false, me)
				return err
			})
		}
		if r[0] != r[1] {
			t.Errorf("rename to %s: fast %v [%s], slow %v [%s]", to, r[0].code, r[0].dump, r[1].code, r[1].dump)
		}
	}
}

// two daemons creating a file and a file below it at once never
// both succeed (each statement checks after the store's lock).
func TestFastCreateRace(t *testing.T) {
	a, b := twoHandles(t)
	for i := range 20 {
		s := newStore(t, a, versions.StoreParams{})
		prime(t, a, s.ID)
		prime(t, b, s.ID)
		errs := make(chan error, 2)
		go func() {
			_, err := a.Save(ctx, versions.SaveReq{StoreID: s.ID, Path: "/p", Content: "file", By: me})
			errs <- err
		}()
		go func() {
			_, err := b.Save(ctx, versions.SaveReq{StoreID: s.ID, Path: "/p/q.md", Content: "below", By: me})
			errs <- err
		}()
		e1, e2 := <-errs, <-errs
		if e1 == nil && e2 == nil {
			t.Fatalf("round %d: a file at /p and a memory at /p/q.md both created", i)
		}
	}
}
