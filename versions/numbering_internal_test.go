package versions

import (
	"context"
	"path/filepath"
	"testing"
)

// A memory is found by id through its latest version in its own store:
// versions of the same id in another store (which an import before such
// imports were refused could leave) neither hide it nor let its head be
// redacted.
func TestMemoryByIDStaysInItsStore(t *testing.T) {
	ctx := context.Background()
	db := openSQLite(t)
	by := UserActor("u")
	a, err := db.CreateStore(ctx, StoreParams{Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := db.CreateStore(ctx, StoreParams{Name: "b"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := db.CreateMemory(ctx, a.ID, "/x.md", "one", by)
	if err != nil {
		t.Fatal(err)
	}
	err = db.write(ctx, "plant a version of the id in another store", func(r *run) error {
		s, err := loadStore(r, b.ID)
		if err != nil {
			return err
		}
		_, _, err = insertVersion(r, s, newVersion{memoryID: m.ID, op: OpDeleted, path: "/elsewhere.md", at: r.db.nowNanos(), by: by})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := db.GetMemory(ctx, a.ID, m.ID)
	if err != nil || got.Path != "/x.md" || *got.Content != "one" {
		t.Fatalf("memory by id: %+v %v", got, err)
	}
	if _, err := db.RedactVersion(ctx, a.ID, m.VersionID, by); ErrorCode(err) != CodeConflict {
		t.Fatalf("redacting the head: %v, want a conflict", err)
	}
}

// A store's row number bounds its versions' numbers, and with them its
// memories' inode numbers: the last row number that keeps them below 2^61
// is given, the next is refused, and nothing of that store is kept.
func TestStoreRowNumbersEnd(t *testing.T) {
	ctx := context.Background()
	db := openSQLite(t)
	if _, err := db.CreateStore(ctx, StoreParams{Name: "first"}); err != nil {
		t.Fatal(err)
	}
	err := db.write(ctx, "skip row numbers", func(r *run) error {
		_, err := r.exec("UPDATE sqlite_sequence SET seq = ? WHERE name = 'stores'", maxStoreSeq-1)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	last, err := db.CreateStore(ctx, StoreParams{Name: "last"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := db.CreateMemory(ctx, last.ID, "/a.md", "a", UserActor("u"))
	if err != nil || m.Ino >= 1<<61 {
		t.Fatalf("memory of the last store: %+v %v", m, err)
	}
	if _, err := db.CreateStore(ctx, StoreParams{Name: "beyond"}); ErrorCode(err) != CodeConflict {
		t.Fatalf("a store beyond the last row number: %v", err)
	}
	if p, err := db.ListStores(ctx, StoreListOptions{}); err != nil || len(p.Data) != 2 {
		t.Fatalf("stores after the refusal: %+v %v", p, err)
	}
}

func openSQLite(t *testing.T) *DB {
	t.Helper()
	db, err := Open(filepath.Join(t.TempDir(), "memfs.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
