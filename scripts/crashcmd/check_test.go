package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/memfs/memfs/versions"
)

// TestCheckVersionsFindsLossAndTears feeds the checker a real database with
// good saves, a torn one and an acknowledgement of a save that never became
// a version: it must count exactly those.
func TestCheckVersionsFindsLossAndTears(t *testing.T) {
	ctx := context.Background()
	dbPath := filepath.Join(t.TempDir(), "memfs.db")
	db, err := versions.Open(dbPath, versions.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := db.CreateStore(ctx, versions.StoreParams{Name: "crash"})
	if err != nil {
		t.Fatal(err)
	}
	by := versions.SessionActor("sesn_test")
	first, second := payload(saveID{1, 1, 1}), payload(saveID{1, 1, 2})
	m, err := db.CreateMemory(ctx, st.ID, "/w1/f1.txt", first, by)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.UpdateMemory(ctx, st.ID, m.ID, versions.MemoryUpdate{Content: &second}, by); err != nil {
		t.Fatal(err)
	}
	torn := payload(saveID{2, 1, 1})
	torn = torn[:len(torn)/2]
	if _, err := db.CreateMemory(ctx, st.ID, "/w2/f1.txt", torn, by); err != nil {
		t.Fatal(err)
	}
	db.Close()

	acks := []ack{
		{"w1/c1/s1", sha256Hex(first)},
		{"w1/c1/s2", sha256Hex(second)},
		{"w1/c1/s3", sha256Hex(payload(saveID{1, 1, 3}))}, // acknowledged, never saved
	}
	for name, since := range map[string]time.Time{"Export": {}, "ListSince": time.Now().Add(-time.Hour)} {
		t.Run(name, func(t *testing.T) {
			v, err := checkVersions(ctx, dbPath, st.ID, since, acks)
			if err != nil {
				t.Fatal(err)
			}
			if !v.Integrity {
				t.Fatalf("integrity_check failed on a sound database: %v", v.Failures)
			}
			if got, want := v.Versions, 3; got != want {
				t.Fatalf("examined %d versions, want %d", got, want)
			}
			if got, want := len(v.Lost), 1; got != want {
				t.Fatalf("lost = %v, want exactly the never-saved s3", v.Lost)
			}
			// The torn content is reported as a version, and (Export only)
			// as the live memory it is the head of.
			wantFailures := 1
			if since.IsZero() {
				wantFailures = 2
			}
			if got := len(v.Failures); got != wantFailures {
				t.Fatalf("failures = %q, want %d (the torn save)", v.Failures, wantFailures)
			}
		})
	}
}

func TestIntegrityCheckFindsCorruption(t *testing.T) {
	ctx := context.Background()
	dbPath := filepath.Join(t.TempDir(), "memfs.db")
	db, err := versions.Open(dbPath, versions.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := db.CreateStore(ctx, versions.StoreParams{Name: "crash"})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		if _, err := db.CreateMemory(ctx, st.ID, "/f"+string(rune('a'+i%26))+string(rune('a'+i/26)), payload(saveID{1, 1, i}), versions.UserActor("t")); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	if err := integrityCheck(dbPath); err != nil {
		t.Fatalf("integrity_check of a sound database: %v", err)
	}
	f, err := os.OpenFile(dbPath, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := f.Stat()
	garbage := make([]byte, 4096)
	for i := range garbage {
		garbage[i] = byte(i*7 + 3)
	}
	// Overwrite the middle of the file, past the header page.
	if _, err := f.WriteAt(garbage, fi.Size()/2/4096*4096); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := integrityCheck(dbPath); err == nil {
		t.Fatal("integrity_check passed a database with a page of garbage")
	}
}
