package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/memfs/memfs/versions"
)

// overwriteAfterOther opens path in one mount and reads it, lets other save
// the same memory through another mount, then writes content over the open
// handle and closes it, returning close's error: the race of two saves made
// deterministic.
func overwriteAfterOther(t *testing.T, path, content string, other func()) error {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	if _, err := io.ReadAll(f); err != nil {
		f.Close()
		t.Fatalf("read %s: %v", path, err)
	}
	other()
	if err := f.Truncate(0); err != nil {
		f.Close()
		t.Fatalf("truncate %s: %v", path, err)
	}
	if _, err := f.WriteAt([]byte(content), 0); err != nil {
		f.Close()
		t.Fatalf("write %s: %v", path, err)
	}
	return f.Close()
}

// TestE2EConcurrentSessions: two sessions in two daemons save one memory.
// No save is lost; the one that started from an old head is marked as
// a conflict, or with --strict fails with ESTALE and changes nothing.
func TestE2EConcurrentSessions(t *testing.T) {
	env := newE2EEnv(t)
	storeID, slug := env.createStore(t, "Shared")
	env.cli(t, "memory", "create", storeID, "--path", "/c.txt", "--content", "v1\n")
	mntA, mntB, mntS := mountDir(t), mountDir(t), mountDir(t)
	env.startMount(t, mntA, "--store", "Shared")
	env.startMount(t, mntB, "--store", "Shared")
	env.startMount(t, mntS, "--strict", "--store", "Shared")
	inA, inB, inS := filepath.Join(mntA, slug, "c.txt"), filepath.Join(mntB, slug, "c.txt"), filepath.Join(mntS, slug, "c.txt")
	saveInB := func(content string) func() {
		return func() {
			if err := os.WriteFile(inB, []byte(content), 0o644); err != nil {
				t.Fatalf("save in mount B: %v", err)
			}
		}
	}

	t.Run("ConflictMarked", func(t *testing.T) {
		before := env.versionList(t, storeID)
		if err := overwriteAfterOther(t, inA, "from A\n", saveInB("from B\n")); err != nil {
			t.Fatalf("close in mount A: %v (without --strict a racing save goes through)", err)
		}
		added := newVersions(before, env.versionList(t, storeID))
		if len(added) != 2 {
			t.Fatalf("got %d new versions, want B's and A's:%s", len(added), describeVersions(added))
		}
		b, a := added[0], added[1]
		if b.Conflict {
			t.Errorf("B's save %s is marked as a conflict; it started from the head", b.ID)
		}
		if !a.Conflict {
			t.Errorf("A's save %s is not marked as a conflict; it started from v1 while B's save was head", a.ID)
		}
		if a.Operation != versions.OpModified || b.Operation != versions.OpModified {
			t.Errorf("want two modified versions:%s", describeVersions(added))
		}
		if got := env.cli(t, "memory", "get", storeID, "/c.txt"); got != "from A\n" {
			t.Errorf("head = %q, want the last save %q", got, "from A\n")
		}
		if log := env.cli(t, "log", storeID, "/c.txt"); !strings.Contains(log, "conflict") {
			t.Errorf("memfs log does not mark the conflict:\n%s", log)
		}
	})

	t.Run("StrictRefuses", func(t *testing.T) {
		before := env.versionList(t, storeID)
		err := overwriteAfterOther(t, inS, "from strict\n", saveInB("from B again\n"))
		if !errors.Is(err, syscall.ESTALE) {
			t.Errorf("close in the --strict mount: %v, want ESTALE", err)
		}
		added := newVersions(before, env.versionList(t, storeID))
		if len(added) != 1 {
			t.Errorf("got %d new versions, want only B's:%s", len(added), describeVersions(added))
		}
		if got := env.cli(t, "memory", "get", storeID, "/c.txt"); got != "from B again\n" {
			t.Errorf("head = %q, want B's %q", got, "from B again\n")
		}
	})
}
