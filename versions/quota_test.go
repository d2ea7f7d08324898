package versions_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/versions"
)

// historyBytes reads the store's count of retained history bytes.
func historyBytes(t *testing.T, db *versions.DB, storeID string) int {
	t.Helper()
	s, err := db.GetStore(ctx, storeID)
	ok(t, err)
	return s.HistoryBytes
}

// cost is what a version of content at path written by me counts toward
// the history quota: its content, its path twice, its actor and its record.
func cost(content, path string) int {
	return len(content) + 2*len(path) + len(me.ID) + versions.VersionRecordBytes
}

func TestHistoryQuota(t *testing.T) {
	db, clk := openClocked(t)
	a40, b40, c20 := strings.Repeat("a", 40), strings.Repeat("b", 40), strings.Repeat("c", 20)
	quota := cost(a40, "/notes") + cost(b40, "/notes") + cost(c20, "/notes")
	s := newStore(t, db, versions.StoreParams{MaxHistoryBytes: quota})
	if s.MaxHistoryBytes != quota {
		t.Fatalf("quota %d, want %d", s.MaxHistoryBytes, quota)
	}
	m := create(t, db, s.ID, "/notes", a40)
	m = update(t, db, s.ID, m.ID, versions.MemoryUpdate{Content: ptr(b40)})
	two := cost(a40, "/notes") + cost(b40, "/notes")
	if n := historyBytes(t, db, s.ID); n != two {
		t.Fatalf("history bytes %d, want %d", n, two)
	}

	t.Run("save-past-quota-refused", func(t *testing.T) {
		before := countVersions(t, db, s.ID)
		_, err := db.UpdateMemory(ctx, s.ID, m.ID, versions.MemoryUpdate{Content: ptr(strings.Repeat("c", 21))}, me)
		e := wantCode(t, err, versions.CodeOverQuota)
		for _, w := range []string{fmt.Sprintf("%d bytes", quota), "memfs version prune"} {
			if !strings.Contains(e.Message, w) {
				t.Errorf("message %q lacks %q", e.Message, w)
			}
		}
		got, err := db.GetMemory(ctx, s.ID, m.ID)
		ok(t, err)
		if *got.Content != b40 || got.VersionID != m.VersionID {
			t.Fatalf("head changed to %s %q", got.VersionID, *got.Content)
		}
		if n := countVersions(t, db, s.ID); n != before {
			t.Fatalf("%d versions after a refused save, want %d", n, before)
		}
		if n := historyBytes(t, db, s.ID); n != two {
			t.Fatalf("history bytes %d after a refused save, want %d", n, two)
		}
		wantCode(t, errOf(db.CreateMemory(ctx, s.ID, "/other", strings.Repeat("d", 21), me)), versions.CodeOverQuota)
		// A longer path costs more: the same content is refused there.
		wantCode(t, errOf(db.CreateMemory(ctx, s.ID, "/notes2", c20, me)), versions.CodeOverQuota)
	})
	t.Run("save-up-to-quota-allowed", func(t *testing.T) {
		m = update(t, db, s.ID, m.ID, versions.MemoryUpdate{Content: ptr(c20)})
		if n := historyBytes(t, db, s.ID); n != quota {
			t.Fatalf("history bytes %d, want %d", n, quota)
		}
		// A rename is a version like a save: refused too.
		wantCode(t, errOf(db.UpdateMemory(ctx, s.ID, m.ID, versions.MemoryUpdate{Path: ptr("/moved")}, me)), versions.CodeOverQuota)
	})
	t.Run("delete-allowed-over-quota", func(t *testing.T) {
		d := create(t, db, newStore(t, db, versions.StoreParams{MaxHistoryBytes: cost("12345", "/x")}).ID, "/x", "12345")
		ok(t, db.DeleteMemory(ctx, d.StoreID, d.ID, versions.MemoryDelete{}, me))
	})
	e80 := strings.Repeat("e", 80)
	t.Run("prune-frees-quota", func(t *testing.T) {
		clk.advance(31 * 24 * time.Hour)
		got, err := db.PruneVersions(ctx, s.ID, 30*24*time.Hour, 1)
		ok(t, err)
		if len(got) != 2 {
			t.Fatalf("pruned %d versions, want 2", len(got))
		}
		if n, want := historyBytes(t, db, s.ID), cost(c20, "/notes"); n != want {
			t.Fatalf("history bytes %d after prune, want %d (the head)", n, want)
		}
		m = update(t, db, s.ID, m.ID, versions.MemoryUpdate{Content: ptr(e80)})
		if n, want := historyBytes(t, db, s.ID), cost(c20, "/notes")+cost(e80, "/notes"); n != want {
			t.Fatalf("history bytes %d, want %d", n, want)
		}
	})
	t.Run("redaction-frees-quota", func(t *testing.T) {
		vs := history(t, db, s.ID, m.ID)
		var old string
		for _, v := range vs {
			if v.ID != m.VersionID {
				old = v.ID
			}
		}
		ok(t, errOf(db.RedactVersion(ctx, s.ID, old, me)))
		// Its record stays; its content and path are gone.
		if n, want := historyBytes(t, db, s.ID), cost(e80, "/notes")+cost("", ""); n != want {
			t.Fatalf("history bytes %d after redaction, want %d", n, want)
		}
	})
	f33 := strings.Repeat("f", 33)
	t.Run("raise-and-lift-quota", func(t *testing.T) {
		wantCode(t, errOf(db.UpdateMemory(ctx, s.ID, m.ID, versions.MemoryUpdate{Content: ptr(f33)}, me)), versions.CodeOverQuota)
		st, err := db.UpdateStore(ctx, s.ID, versions.StoreUpdate{MaxHistoryBytes: ptr(-1)})
		ok(t, err)
		if st.MaxHistoryBytes != 0 {
			t.Fatalf("quota %d after lifting it, want 0 (none)", st.MaxHistoryBytes)
		}
		m = update(t, db, s.ID, m.ID, versions.MemoryUpdate{Content: ptr(f33)})
		st, err = db.UpdateStore(ctx, s.ID, versions.StoreUpdate{MaxHistoryBytes: ptr(0)})
		ok(t, err)
		if st.MaxHistoryBytes != versions.DefaultMaxHistoryBytes {
			t.Fatalf("quota %d, want the default", st.MaxHistoryBytes)
		}
	})
	t.Run("restore-counts", func(t *testing.T) {
		_, err := db.UpdateStore(ctx, s.ID, versions.StoreUpdate{MaxHistoryBytes: ptr(historyBytes(t, db, s.ID))})
		ok(t, err)
		var old string
		for _, v := range history(t, db, s.ID, m.ID) {
			if v.ID != m.VersionID && v.RedactedAt == nil {
				old = v.ID
			}
		}
		wantCode(t, errOf(db.Restore(ctx, s.ID, old, "", me)), versions.CodeOverQuota)
	})
}

// Renames between two long names cost their paths: they reach the quota
// long before the content would, with the quota's error.
func TestQuotaCountsRenames(t *testing.T) {
	db := openDB(t)
	long1, long2 := "/"+strings.Repeat("a", 250), "/"+strings.Repeat("b", 250)
	quota := 100 << 10
	s := newStore(t, db, versions.StoreParams{MaxHistoryBytes: quota})
	m := create(t, db, s.ID, long1, "x")
	renames := 0
	var err error
	for to := long2; renames < 10000; renames++ {
		if _, err = db.Rename(ctx, s.ID, m.Path, to, false, me); err != nil {
			break
		}
		m.Path, to = to, m.Path
	}
	wantCode(t, err, versions.CodeOverQuota)
	// Each rename costs at least its path twice and its record.
	if max := quota / (2*251 + versions.VersionRecordBytes); renames > max {
		t.Errorf("%d renames of a 1-byte memory between 251-byte paths fit a %d-byte quota, want at most %d", renames, quota, max)
	}
	if n := historyBytes(t, db, s.ID); n > quota {
		t.Errorf("history bytes %d past the quota %d", n, quota)
	}
}

func TestHistoryQuotaDefault(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{})
	if s.MaxHistoryBytes != versions.DefaultMaxHistoryBytes {
		t.Fatalf("quota %d, want the default %d", s.MaxHistoryBytes, versions.DefaultMaxHistoryBytes)
	}
	none := newStore(t, db, versions.StoreParams{MaxHistoryBytes: -1})
	if none.MaxHistoryBytes != 0 {
		t.Fatalf("quota %d, want 0 (none)", none.MaxHistoryBytes)
	}
}

func TestHistoryQuotaExportRoundTrip(t *testing.T) {
	src := openDB(t)
	var stores []*versions.Store
	for _, q := range []int{12345, -1, 0} {
		s := newStore(t, src, versions.StoreParams{MaxHistoryBytes: q})
		create(t, src, s.ID, "/a", "hello")
		stores = append(stores, s)
	}
	export := func(db *versions.DB) []byte {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		for _, s := range stores {
			ok(t, db.Export(ctx, s.ID, func(v any) error { return enc.Encode(v) }))
		}
		return buf.Bytes()
	}
	first := export(src)
	dst := openDB(t)
	ok(t, errOf(dst.Import(ctx, bytes.NewReader(first))))
	if second := export(dst); !bytes.Equal(first, second) {
		t.Fatalf("round trip changed the export:\n%s\n%s", first, second)
	}
	for i, want := range []int{12345, 0, versions.DefaultMaxHistoryBytes} {
		got, err := dst.GetStore(ctx, stores[i].ID)
		ok(t, err)
		if got.MaxHistoryBytes != want || got.HistoryBytes != cost("hello", "/a") {
			t.Errorf("store %d: quota %d, history %d; want %d, %d", i, got.MaxHistoryBytes, got.HistoryBytes, want, cost("hello", "/a"))
		}
	}
	// An export from before the quota: the default.
	old := strings.Replace(string(first), `,"max_history_bytes":12345`, "", 1)
	third := openDB(t)
	ok(t, errOf(third.Import(ctx, strings.NewReader(old))))
	got, err := third.GetStore(ctx, stores[0].ID)
	ok(t, err)
	if got.MaxHistoryBytes != versions.DefaultMaxHistoryBytes {
		t.Fatalf("quota %d from an old export, want the default", got.MaxHistoryBytes)
	}
}

// TestStoreCountsExact checks the store's memory count and history bytes
// against what its memories and versions hold, through every kind of
// change, with two stores interleaved (each store's counts ride on its own
// versions).
func TestStoreCountsExact(t *testing.T) {
	db, clk := openClocked(t)
	a := newStore(t, db, versions.StoreParams{Name: "a"})
	b := newStore(t, db, versions.StoreParams{Name: "b"})
	check := func(step string) {
		t.Helper()
		for _, s := range []*versions.Store{a, b} {
			st, err := db.GetStore(ctx, s.ID)
			ok(t, err)
			bytes := 0
			page := ""
			for {
				p, err := db.ListVersions(ctx, s.ID, versions.VersionListOptions{Limit: versions.MaxPageSize, Page: page, View: versions.ViewFull})
				ok(t, err)
				for i := range p.Data {
					bytes += versions.VersionCost(&p.Data[i])
				}
				if p.NextPage == nil {
					break
				}
				page = *p.NextPage
			}
			ms, err := db.ListMemories(ctx, s.ID, versions.MemoryListOptions{Limit: versions.MaxPageSize})
			ok(t, err)
			if st.HistoryBytes != bytes || st.MemoryCount != len(ms.Data) {
				t.Fatalf("after %s, store %s counts %d memories and %d bytes; it holds %d and %d", step, s.Name, st.MemoryCount, st.HistoryBytes, len(ms.Data), bytes)
			}
		}
	}
	check("nothing")
	x := create(t, db, a.ID, "/x", "12345")
	create(t, db, b.ID, "/y", "123")
	x = update(t, db, a.ID, x.ID, versions.MemoryUpdate{Content: ptr("1234567")})
	check("creates and an update")
	_, err := db.Rename(ctx, a.ID, "/x", "/z", false, me)
	ok(t, err)
	create(t, db, a.ID, "/w", "ww")
	_, err = db.Rename(ctx, a.ID, "/w", "/z", false, me) // onto /z: a version of it, /w deleted
	ok(t, err)
	check("renames")
	ok(t, db.DeleteMemory(ctx, b.ID, "/y", versions.MemoryDelete{}, me))
	holdLease(t, db, "owner")
	id, err := db.SavePending(ctx, b.ID, owned("owner"), "/p", "pending", me, 0)
	ok(t, err)
	_, _, err = db.PublishPending(ctx, b.ID, owned("owner"), id, "/p")
	ok(t, err)
	check("a delete and a publication")
	clk.advance(48 * time.Hour)
	pruned, err := db.PruneVersions(ctx, a.ID, time.Hour, 1)
	ok(t, err)
	if len(pruned) == 0 {
		t.Fatal("pruned nothing")
	}
	check("a prune")
	update(t, db, a.ID, x.ID, versions.MemoryUpdate{Content: ptr("again")})
	h := history(t, db, a.ID, x.ID)
	ok(t, errOf(db.RedactVersion(ctx, a.ID, h[len(h)-1].ID, me)))
	check("a redaction")
	create(t, db, a.ID, "/after", "after")
	ok(t, db.DeleteMemory(ctx, a.ID, "/after", versions.MemoryDelete{}, me))
	check("saves after a prune and a redaction")
}
