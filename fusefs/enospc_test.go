package fusefs

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/versions"
)

// smallDisk mounts a 2 MiB tmpfs for the database; Cleanup unmounts it
// after everything registered later (the database, the FUSE mount) is gone.
func smallDisk(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "disk")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size=2m"); err != nil {
		t.Fatalf("mount a 2 MiB tmpfs on %s (needs root): %v", dir, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, 0); err != nil {
			t.Errorf("unmount tmpfs %s: %v", dir, err)
			unix.Unmount(dir, unix.MNT_DETACH)
		}
	})
	return dir
}

// fillDisk writes a file until the file system refuses more bytes.
func fillDisk(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatalf("create filler: %v", err)
	}
	defer f.Close()
	for _, chunk := range []int{64 << 10, 4 << 10, 1} {
		buf := make([]byte, chunk)
		for {
			if _, err := f.Write(buf); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatalf("filling the disk: %v", err)
				}
				break
			}
		}
	}
}

// checkHistory verifies that every version with content matches its
// sha256 and returns how many versions the store holds.
func checkHistory(t *testing.T, e *env, storeID string) int {
	t.Helper()
	vs := e.allVersions(t, storeID)
	for _, v := range vs {
		full, err := e.db.GetVersion(t.Context(), storeID, v.ID)
		if err != nil {
			t.Fatalf("get version %s: %v", v.ID, err)
		}
		if full.Content == nil {
			continue
		}
		sum := sha256.Sum256([]byte(*full.Content))
		if full.ContentSHA256 == nil || *full.ContentSHA256 != hex.EncodeToString(sum[:]) {
			t.Fatalf("version %s: content_sha256 %v does not match its %d bytes of content", v.ID, full.ContentSHA256, len(*full.Content))
		}
	}
	return len(vs)
}

// TestDiskFull: with the database on a full disk, saves fail with ENOSPC at
// close, write no partial version, the mount keeps serving reads, and saves
// work again once space is freed.
func TestDiskFull(t *testing.T) {
	disk := smallDisk(t)
	db, err := versions.Open(filepath.Join(disk, "memfs.db"), versions.Options{})
	if err != nil {
		t.Fatalf("open database on tmpfs: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	e := &env{db: db, dir: disk, log: &logBuffer{}}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("daemon log:\n%s", e.log.String())
		}
	})
	st := e.store(t, "disk full")
	_, dir := e.mountStore(t, st, Options{})

	kept := filepath.Join(dir, "kept.md")
	if err := create(kept, "written before the disk filled up"); err != nil {
		t.Fatalf("save before filling the disk: %v", err)
	}
	before := checkHistory(t, e, st.ID)

	filler := filepath.Join(disk, "filler")
	fillDisk(t, filler)
	big := strings.Repeat("memory that does not fit on the disk\n", 2800)[:versions.DefaultMaxMemoryBytes]

	t.Run("NewFile", func(t *testing.T) {
		err := create(filepath.Join(dir, "new.md"), big)
		wantErrno(t, "save a new file on a full disk", err, syscall.ENOSPC)
	})
	t.Run("Overwrite", func(t *testing.T) {
		err := create(kept, big)
		wantErrno(t, "overwrite a file on a full disk", err, syscall.ENOSPC)
	})
	t.Run("NoPartialVersion", func(t *testing.T) {
		if got := checkHistory(t, e, st.ID); got != before {
			t.Fatalf("the store holds %d versions after the refused saves, want %d", got, before)
		}
		if m := e.memory(t, st.ID, "/kept.md"); m.Content == nil || *m.Content != "written before the disk filled up" {
			t.Fatalf("kept.md changed by a refused save: %+v", m)
		}
		if _, err := e.db.GetMemory(t.Context(), st.ID, "/new.md"); versions.ErrorCode(err) != versions.CodeNotFound {
			t.Fatalf("new.md exists after its save failed (err %v)", err)
		}
	})
	t.Run("ReadsStillServed", func(t *testing.T) {
		// The refused content stays in the shared buffer until the kernel
		// releases the writer's handle, which it does after close() returns.
		err := eventually(visibilityLimit, func() error {
			got, err := os.ReadFile(kept)
			if err != nil || string(got) != "written before the disk filled up" {
				return fmt.Errorf("read on a full disk: %.60q…, %v", got, err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.ReadDir(dir); err != nil {
			t.Fatalf("readdir on a full disk: %v", err)
		}
	})
	t.Run("LogNamesPath", func(t *testing.T) {
		if log := e.log.String(); !strings.Contains(log, "new.md") || !strings.Contains(log, "kept.md") {
			t.Fatalf("the daemon did not log the refused saves with their paths:\n%s", log)
		}
	})

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	t.Run("SavesWorkAfterFreeingSpace", func(t *testing.T) {
		if err := create(kept, big); err != nil {
			t.Fatalf("save after freeing space: %v", err)
		}
		got, err := os.ReadFile(kept)
		if err != nil || string(got) != big {
			t.Fatalf("read back after freeing space: %d bytes, %v", len(got), err)
		}
		if got := checkHistory(t, e, st.ID); got != before+1 {
			t.Fatalf("the store holds %d versions, want %d (one new save)", got, before+1)
		}
		checkAlive(t, dir)
	})
}
