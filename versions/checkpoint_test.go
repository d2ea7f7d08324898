package versions_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/memfs/memfs/versions"
)

// Under a stream of saves that never pauses, the WAL must still start over
// (checkpoint.go): otherwise it grows without bound and a crash leaves all
// of it to be read at the next open. SQLite counts restarts in the WAL
// header's checkpoint sequence number.
func TestWALRestartsUnderSustainedSaves(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memfs.db")
	db, err := versions.Open(path, versions.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st, err := db.CreateStore(ctx, versions.StoreParams{Name: "wal"})
	ok(t, err)
	m, err := db.CreateMemory(ctx, st.ID, "/f", "x", me)
	ok(t, err)
	first := walCheckpointSeq(t, path)
	deadline := time.Now().Add(20 * time.Second)
	for i := 0; ; i++ {
		content := fmt.Sprintf("save %d %2000d", i, i)
		_, err := db.UpdateMemory(context.Background(), st.ID, m.ID, versions.MemoryUpdate{Content: &content}, me)
		ok(t, err)
		if i%100 == 0 {
			if walCheckpointSeq(t, path) != first {
				return
			}
			if time.Now().After(deadline) {
				fi, _ := os.Stat(path + "-wal")
				t.Fatalf("the WAL never started over in %d saves without a pause (now %d bytes)", i, fi.Size())
			}
		}
	}
}

// walCheckpointSeq reads the checkpoint sequence number of the WAL header.
func walCheckpointSeq(t *testing.T, dbPath string) uint32 {
	t.Helper()
	f, err := os.Open(dbPath + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var hdr [16]byte
	if _, err := f.ReadAt(hdr[:], 0); err != nil {
		t.Fatal(err)
	}
	return binary.BigEndian.Uint32(hdr[12:16])
}
