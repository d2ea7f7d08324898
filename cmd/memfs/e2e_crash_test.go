package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/versions"
)

// TestE2EKillBetweenCloseAndRename plays an atomic-save tool against a real
// daemon: it writes a temporary file, closes it, and the daemon is killed
// with SIGKILL before the rename that would have followed. The close()
// acknowledged the temporary content, so the next mount on the same path
// publishes it as a file of its own (one "created" version); a target that
// existed keeps its head, and nothing else enters the history: no
// created-then-deleted temporary, no version of the target. While no
// daemon runs, the store shows nothing of the half-made save.
func TestE2EKillBetweenCloseAndRename(t *testing.T) {
	cases := []struct {
		name string
		temp string // the tool's temporary name (not a scratch name)
		old  string // the target's content before the save; "" when new
	}{
		// The SDK memory tool's write-temp-then-rename of a new file.
		{"NewTarget", ".tmp-4242-0b8e5a4c-6f1d-4c1e-9d52-0a6f2b7e1c3d", ""},
		// sed -i's temporary, over an existing memory.
		{"ExistingTarget", "sedQ3xZ9a", "old notes\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := newE2EEnv(t)
			storeID, slug := env.createStore(t, "Crash "+c.name)
			mnt := mountDir(t)
			d := env.startMount(t, mnt, "--store", storeID)
			dir := filepath.Join(mnt, slug)
			if c.old != "" {
				if err := os.WriteFile(filepath.Join(dir, "notes.md"), []byte(c.old), 0o644); err != nil {
					t.Fatal(err)
				}
				env.settle(t) // the target is a memory, published by the running daemon
			}
			before := env.versionList(t, storeID)

			const content = "new notes\nwritten by the tool\n"
			f, err := os.OpenFile(filepath.Join(dir, c.temp), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteString(content); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatalf("close of the temporary file: %v", err)
			}
			closed := time.Now()
			d.kill9(t) // instead of rename(temp, "notes.md")
			t.Logf("killed %v after the close: %v", time.Since(closed), d.state)

			// The kill came inside the grace period: the temporary file
			// is a pending row, not a memory, so nothing reading the store
			// sees it or a changed target.
			db, err := versions.Open(env.dbPath, versions.Options{})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			left, err := db.ListPending(ctx, storeID, mnt, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			if len(left) != 1 || left[0].Path != "/"+c.temp || left[0].Content != content {
				t.Fatalf("after the kill the store holds pending files %+v, want /%s with the temporary content (was the daemon killed after the grace period?)", left, c.temp)
			}
			page, err := db.ListVersions(ctx, storeID, versions.VersionListOptions{Limit: versions.MaxPageSize})
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Data) != len(before) {
				t.Errorf("while no daemon runs the history has %d versions, want the %d from before the save:%s", len(page.Data), len(before), describeVersions(page.Data))
			}
			db.Close()

			d2 := env.startMount(t, mnt, "--store", storeID)
			if log := d2.stderr.String(); !strings.Contains(log, "published a file saved before the daemon stopped") || !strings.Contains(log, c.temp) {
				t.Errorf("the new daemon's log does not say it published /%s:\n%s", c.temp, log)
			}

			live := env.memoryList(t, storeID)
			wantLive := 1
			if c.old != "" {
				wantLive = 2
			}
			if len(live) != wantLive {
				t.Errorf("live memories after the remount: %v, want %d", live, wantLive)
			}
			if got := env.cli(t, "memory", "get", storeID, "/"+c.temp); got != content {
				t.Errorf("the temporary file's content after the remount: %q, want %q (acknowledged by close)", got, content)
			}
			if got, err := os.ReadFile(filepath.Join(dir, c.temp)); err != nil || string(got) != content {
				t.Errorf("read /%s through the new mount: %q, %v; want %q", c.temp, got, err, content)
			}
			if c.old != "" {
				if got := env.cli(t, "memory", "get", storeID, "/notes.md"); got != c.old {
					t.Errorf("the target after the remount: %q, want its old head %q", got, c.old)
				}
				if got, err := os.ReadFile(filepath.Join(dir, "notes.md")); err != nil || string(got) != c.old {
					t.Errorf("read /notes.md through the new mount: %q, %v; want %q", got, err, c.old)
				}
			}

			// The history: what was there, plus one "created" of the
			// temporary file, and nothing else.
			added := newVersions(before, env.versionList(t, storeID))
			if len(added) != 1 || added[0].Operation != versions.OpCreated || added[0].Path == nil || *added[0].Path != "/"+c.temp {
				t.Errorf("versions added by the save and the crash:%s\nwant one created /%s", describeVersions(added), c.temp)
			}
			if log := env.cli(t, "log", storeID); strings.Contains(log, "deleted") || strings.Count(log, "created") != wantLive || strings.Contains(log, "modified") {
				t.Errorf("memfs log after the remount holds more than the creations of the target and the temporary file:\n%s", log)
			}
		})
	}
}

// TestE2EKillDuringEditorBackupSave: an editor (vim's writebackup, emacs)
// renames the file to a backup name, writes the new file and removes the
// backup. A daemon killed after the backup rename leaves the memory as it
// was; killed after the new file's close it leaves the new content as one
// "modified" version of the same memory. The backup, a scratch file, is
// never stored: its content is the previous version.
func TestE2EKillDuringEditorBackupSave(t *testing.T) {
	for _, writeNew := range []bool{false, true} {
		name := "AfterBackupRename"
		if writeNew {
			name = "AfterNewFileClosed"
		}
		t.Run(name, func(t *testing.T) {
			env := newE2EEnv(t)
			storeID, slug := env.createStore(t, "Editor "+name)
			mnt := mountDir(t)
			d := env.startMount(t, mnt, "--store", storeID)
			dir := filepath.Join(mnt, slug)
			target := filepath.Join(dir, "notes.md")
			if err := os.WriteFile(target, []byte("old notes\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			env.settle(t)
			before := env.versionList(t, storeID)
			mem := env.memoryList(t, storeID)["/notes.md"]

			if err := os.Rename(target, target+"~"); err != nil {
				t.Fatal(err)
			}
			want := "old notes\n"
			if writeNew {
				want = "new notes\n"
				if err := os.WriteFile(target, []byte(want), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			d.kill9(t)
			env.startMount(t, mnt, "--store", storeID)

			live := env.memoryList(t, storeID)
			if len(live) != 1 || live["/notes.md"].ID != mem.ID {
				t.Errorf("live memories after the remount: %v, want /notes.md alone, id %s kept", live, mem.ID)
			}
			if got := env.cli(t, "memory", "get", storeID, "/notes.md"); got != want {
				t.Errorf("/notes.md after the remount: %q, want %q", got, want)
			}
			if _, err := os.Stat(target + "~"); !os.IsNotExist(err) {
				t.Errorf("stat notes.md~ after the remount: %v, want ENOENT (a scratch file is never stored)", err)
			}
			added := newVersions(before, env.versionList(t, storeID))
			switch {
			case !writeNew && len(added) != 0:
				t.Errorf("the backup rename and the crash added versions:%s\nwant none", describeVersions(added))
			case writeNew && (len(added) != 1 || added[0].Operation != versions.OpModified || added[0].MemoryID != mem.ID):
				t.Errorf("the editor's save and the crash added versions:%s\nwant one modified of %s", describeVersions(added), mem.ID)
			}
		})
	}
}
