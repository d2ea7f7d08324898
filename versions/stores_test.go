package versions_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/versions"
)

func TestS13Stores(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{Name: "Demo Memory", Description: "d", Metadata: map[string]string{"team": "a"}})

	t.Run("create-and-get", func(t *testing.T) {
		if !strings.HasPrefix(s.ID, "memstore_") || s.ArchivedAt != nil || s.Metadata["team"] != "a" {
			t.Fatalf("created %+v", s)
		}
		got, err := db.GetStore(ctx, s.ID)
		ok(t, err)
		if got.Name != "Demo Memory" || got.Description != "d" || !got.CreatedAt.Equal(s.CreatedAt) {
			t.Fatalf("got %+v", got)
		}
		b, err := json.Marshal(got)
		ok(t, err)
		if !strings.Contains(string(b), `"type":"memory_store"`) || !strings.Contains(string(b), `"archived_at":null`) {
			t.Fatalf("json %s", b)
		}
	})
	t.Run("get-unknown", func(t *testing.T) {
		_, err := db.GetStore(ctx, "memstore_nope")
		wantCode(t, err, versions.CodeNotFound)
	})
	t.Run("resolve-by-id-or-unique-name", func(t *testing.T) {
		for _, ref := range []string{s.ID, "Demo Memory"} {
			got, err := db.ResolveStore(ctx, ref)
			ok(t, err)
			if got.ID != s.ID {
				t.Fatalf("ResolveStore(%s) = %s", ref, got.ID)
			}
		}
		newStore(t, db, versions.StoreParams{Name: "twin"})
		newStore(t, db, versions.StoreParams{Name: "twin"})
		_, err := db.ResolveStore(ctx, "twin")
		wantCode(t, err, versions.CodeInvalid)
		_, err = db.ResolveStore(ctx, "nobody")
		wantCode(t, err, versions.CodeNotFound)
	})
	t.Run("update-merges-metadata", func(t *testing.T) {
		time.Sleep(time.Millisecond) // updated_at must move past created_at
		u, err := db.UpdateStore(ctx, s.ID, versions.StoreUpdate{Name: ptr("Renamed"),
			Metadata: map[string]*string{"team": nil, "owner": ptr("bo")}})
		ok(t, err)
		if u.Name != "Renamed" || u.Description != "d" || len(u.Metadata) != 1 || u.Metadata["owner"] != "bo" {
			t.Fatalf("updated %+v", u)
		}
		if !u.UpdatedAt.After(s.UpdatedAt) {
			t.Fatalf("updated_at did not move")
		}
	})
	t.Run("memory-changes-do-not-touch-updated_at", func(t *testing.T) {
		before, err := db.GetStore(ctx, s.ID)
		ok(t, err)
		create(t, db, s.ID, "/x", "x")
		after, err := db.GetStore(ctx, s.ID)
		ok(t, err)
		if !after.UpdatedAt.Equal(before.UpdatedAt) {
			t.Fatalf("updated_at moved with a memory change")
		}
	})
	t.Run("list-excludes-archived", func(t *testing.T) {
		arch := newStore(t, db, versions.StoreParams{Name: "to archive"})
		_, err := db.ArchiveStore(ctx, arch.ID)
		ok(t, err)
		p, err := db.ListStores(ctx, versions.StoreListOptions{})
		ok(t, err)
		for _, st := range p.Data {
			if st.ID == arch.ID {
				t.Fatalf("archived store listed")
			}
		}
		p, err = db.ListStores(ctx, versions.StoreListOptions{IncludeArchived: true})
		ok(t, err)
		found := false
		for _, st := range p.Data {
			found = found || st.ID == arch.ID
		}
		if !found {
			t.Fatalf("archived store missing with IncludeArchived")
		}
	})
	t.Run("list-pages-and-dates", func(t *testing.T) {
		db := openDB(t)
		var ids []string
		for i := range 5 {
			ids = append(ids, newStore(t, db, versions.StoreParams{Name: fmt.Sprint("s", i)}).ID)
		}
		var got []string
		page := ""
		for {
			p, err := db.ListStores(ctx, versions.StoreListOptions{Limit: 2, Page: page})
			ok(t, err)
			for _, st := range p.Data {
				got = append(got, st.ID)
			}
			if p.NextPage == nil {
				break
			}
			page = *p.NextPage
		}
		if strings.Join(got, ",") != strings.Join(ids, ",") {
			t.Fatalf("paged %v, want %v", got, ids)
		}
		third, err := db.GetStore(ctx, ids[2])
		ok(t, err)
		p, err := db.ListStores(ctx, versions.StoreListOptions{CreatedGTE: third.CreatedAt, CreatedLTE: third.CreatedAt})
		ok(t, err)
		if len(p.Data) != 1 || p.Data[0].ID != ids[2] {
			t.Fatalf("date filter gave %d stores", len(p.Data))
		}
	})
}

func TestS13Archive(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{})
	m := create(t, db, s.ID, "/a", "one")
	m = update(t, db, s.ID, m.ID, versions.MemoryUpdate{Content: ptr("two")})
	create(t, db, s.ID, "/dir/b", "b")
	ok(t, db.MakeDir(ctx, s.ID, "/empty"))
	a, err := db.ArchiveStore(ctx, s.ID)
	ok(t, err)
	if a.ArchivedAt == nil {
		t.Fatalf("archived_at not set")
	}

	t.Run("archive-twice-harmless", func(t *testing.T) {
		again, err := db.ArchiveStore(ctx, s.ID)
		ok(t, err)
		if !again.ArchivedAt.Equal(*a.ArchivedAt) {
			t.Fatalf("second archive moved archived_at")
		}
	})
	t.Run("archived-refuses-writes", func(t *testing.T) {
		_, err := db.CreateMemory(ctx, s.ID, "/new", "x", me)
		wantCode(t, err, versions.CodeReadOnly)
		_, err = db.UpdateMemory(ctx, s.ID, m.ID, versions.MemoryUpdate{Content: ptr("three")}, me)
		wantCode(t, err, versions.CodeReadOnly)
		_, err = db.UpdateMemory(ctx, s.ID, m.ID, versions.MemoryUpdate{Path: ptr("/moved")}, me)
		wantCode(t, err, versions.CodeReadOnly)
		wantCode(t, db.MakeDir(ctx, s.ID, "/d2"), versions.CodeReadOnly)
		wantCode(t, db.RemoveDir(ctx, s.ID, "/empty"), versions.CodeReadOnly)
		wantCode(t, errOf(db.Rename(ctx, s.ID, "/a", "/b", false, me)), versions.CodeReadOnly)
		_, err = db.UpdateStore(ctx, s.ID, versions.StoreUpdate{Name: ptr("x")})
		wantCode(t, err, versions.CodeReadOnly)
		h := history(t, db, s.ID, m.ID)
		_, err = db.Restore(ctx, s.ID, h[1].ID, "", me)
		wantCode(t, err, versions.CodeReadOnly)
	})
	t.Run("archived-allows-reads-deletes-redaction", func(t *testing.T) {
		got, err := db.GetMemory(ctx, s.ID, m.ID)
		ok(t, err)
		if *got.Content != "two" {
			t.Fatalf("content %q", *got.Content)
		}
		h := history(t, db, s.ID, m.ID)
		_, err = db.RedactVersion(ctx, s.ID, h[1].ID, me)
		ok(t, err)
		ok(t, db.DeleteMemory(ctx, s.ID, m.ID, versions.MemoryDelete{}, me))
	})
	t.Run("delete-archived-store", func(t *testing.T) {
		ok(t, db.DeleteStore(ctx, s.ID))
		_, err := db.GetStore(ctx, s.ID)
		wantCode(t, err, versions.CodeNotFound)
	})
}

func TestS13DeleteStore(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{})
	keep := newStore(t, db, versions.StoreParams{Name: "keep"})
	m := create(t, db, s.ID, "/a", "one")
	k := create(t, db, keep.ID, "/a", "kept")
	ok(t, db.MakeDir(ctx, s.ID, "/d"))
	ok(t, db.DeleteStore(ctx, s.ID))

	t.Run("everything-goes", func(t *testing.T) {
		_, err := db.GetMemory(ctx, s.ID, m.ID)
		wantCode(t, err, versions.CodeNotFound)
		_, err = db.GetVersion(ctx, s.ID, m.VersionID)
		wantCode(t, err, versions.CodeNotFound)
		_, err = db.ListVersions(ctx, s.ID, versions.VersionListOptions{})
		wantCode(t, err, versions.CodeNotFound)
		wantCode(t, db.DeleteStore(ctx, s.ID), versions.CodeNotFound)
	})
	t.Run("other-stores-untouched", func(t *testing.T) {
		got, err := db.GetMemory(ctx, keep.ID, k.ID)
		ok(t, err)
		if *got.Content != "kept" || countVersions(t, db, keep.ID) != 1 {
			t.Fatalf("other store damaged")
		}
	})
}

func TestStoreFieldLimits(t *testing.T) {
	db := openDB(t)
	long := func(n int) string { return strings.Repeat("é", n) } // characters, not bytes
	meta := func(n int) map[string]string {
		m := map[string]string{}
		for i := range n {
			m[fmt.Sprint("k", i)] = "v"
		}
		return m
	}
	good := []versions.StoreParams{
		{Name: long(255)},
		{Name: "x", Description: long(1024)},
		{Name: "x", Metadata: meta(16)},
		{Name: "x", Metadata: map[string]string{long(64): long(512)}},
	}
	bad := []versions.StoreParams{
		{Name: ""},
		{Name: long(256)},
		{Name: "tab\there"},
		{Name: "x", Description: long(1025)},
		{Name: "x", Metadata: meta(17)},
		{Name: "x", Metadata: map[string]string{"": "v"}},
		{Name: "x", Metadata: map[string]string{long(65): "v"}},
		{Name: "x", Metadata: map[string]string{"k": long(513)}},
	}
	for i, p := range good {
		t.Run(fmt.Sprint("limits/accepted-", i), func(t *testing.T) {
			_, err := db.CreateStore(ctx, p)
			ok(t, err)
		})
	}
	for i, p := range bad {
		t.Run(fmt.Sprint("limits/refused-", i), func(t *testing.T) {
			_, err := db.CreateStore(ctx, p)
			wantCode(t, err, versions.CodeInvalid)
		})
	}
	t.Run("limits/update-over-16-keys-refused", func(t *testing.T) {
		s := newStore(t, db, versions.StoreParams{Metadata: meta(16)})
		_, err := db.UpdateStore(ctx, s.ID, versions.StoreUpdate{Metadata: map[string]*string{"extra": ptr("v")}})
		wantCode(t, err, versions.CodeInvalid)
	})
	t.Run("limits/update-below-1-refused", func(t *testing.T) {
		s := newStore(t, db, versions.StoreParams{})
		for _, c := range []struct {
			name string
			u    versions.StoreUpdate
		}{
			{"max_memories 0", versions.StoreUpdate{MaxMemories: ptr(0)}},
			{"max_memory_bytes -5", versions.StoreUpdate{MaxMemories: ptr(10), MaxMemoryBytes: ptr(-5)}},
		} {
			_, err := db.UpdateStore(ctx, s.ID, c.u)
			wantCode(t, err, versions.CodeInvalid)
			if !strings.Contains(err.Error(), c.name) || !strings.Contains(err.Error(), "give 1 or more") {
				t.Errorf("%s: %v, want the limit and its value named, and what to give", c.name, err)
			}
		}
	})
}

func TestOpen(t *testing.T) {
	t.Run("creates-directory", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "a", "b", "memfs.db")
		db, err := versions.Open(p, versions.Options{Durability: versions.DurabilityFull})
		ok(t, err)
		db.Close()
		db, err = versions.Open(p, versions.Options{}) // reopening migrates nothing twice
		ok(t, err)
		ok(t, db.Close())
		ok(t, db.Close())
	})
	t.Run("default-path", func(t *testing.T) {
		t.Setenv("MEMFS_DB", "/x/y.db")
		p, err := versions.DefaultPath()
		ok(t, err)
		if p != "/x/y.db" {
			t.Fatalf("MEMFS_DB ignored: %s", p)
		}
		t.Setenv("MEMFS_DB", "")
		t.Setenv("XDG_DATA_HOME", "/data")
		if p, _ = versions.DefaultPath(); p != "/data/memfs/memfs.db" {
			t.Fatalf("XDG_DATA_HOME ignored: %s", p)
		}
		t.Setenv("XDG_DATA_HOME", "")
		t.Setenv("HOME", "/home/u")
		if p, _ = versions.DefaultPath(); p != "/home/u/.local/share/memfs/memfs.db" {
			t.Fatalf("home default: %s", p)
		}
	})
	t.Run("odd-characters-in-path", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "my dir?#%20", "memfs.db")
		db, err := versions.Open(p, versions.Options{})
		ok(t, err)
		s := newStore(t, db, versions.StoreParams{})
		db.Close()
		db, err = versions.Open(p, versions.Options{})
		ok(t, err)
		defer db.Close()
		if _, err := db.GetStore(ctx, s.ID); err != nil {
			t.Fatalf("reopened database lost the store: %v", err)
		}
		if db.Path() != p {
			t.Fatalf("Path() = %s", db.Path())
		}
	})
	t.Run("not-a-database", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "junk.db")
		ok(t, writeFile(p, strings.Repeat("not sqlite ", 1000)))
		if _, err := versions.Open(p, versions.Options{}); err == nil {
			t.Fatalf("opened a file that is not a database")
		}
	})
}

func TestDatabaseFileIsPrivate(t *testing.T) {
	p := filepath.Join(t.TempDir(), "memfs.db")
	db, err := versions.Open(p, versions.Options{})
	ok(t, err)
	newStore(t, db, versions.StoreParams{})
	for _, f := range []string{p, p + "-wal"} {
		st, err := os.Stat(f)
		ok(t, err)
		if mode := st.Mode().Perm(); mode != 0o600 {
			t.Errorf("%s has mode %o, want 600", f, mode)
		}
	}
	ok(t, db.Close())
}
