package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memfs/memfs/versions"
)

// TestE2EKillBetweenCloseAndRename plays an atomic-save tool against a real
// daemon: it writes a temporary file, closes it, and the daemon is killed
// with SIGKILL before the rename that would have followed, once the file
// is durable (its pending row is written Settle after the close; a kill
// before then loses it, as an atomic save cut short). Once the dead mount's lease
// lapses the CLI, with no mount running, publishes it as a file of its own
// (one "created" version); a target that existed keeps its head, and
// nothing else enters the history: no created-then-deleted temporary, no
// version of the target.
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
			awaitDurable(t, env, storeID, "/"+c.temp)
			d.kill9(t) // instead of rename(temp, "notes.md")
			t.Logf("killed %v after the close: %v", time.Since(closed), d.state)

			// No mount runs: the CLI publishes what the dead mount held
			// once its lease lapsed.
			if got, after := awaitCLI(t, env, lapseBound, "memory", "get", storeID, "/"+c.temp); got != content {
				t.Errorf("the temporary file's content %v after the kill: %q, want %q (acknowledged by close)", after, got, content)
			} else {
				t.Logf("the CLI read the temporary file %v after the kill", after)
			}
			detachDead(t, mnt)

			env.startMount(t, mnt, "--store", storeID)

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

// lapseBound is how soon after a daemon's death the CLI must return what
// it acknowledged: a lease lapses versions.LeaseTTL after its last renewal.
const lapseBound = versions.LeaseTTL + time.Second

// awaitCLI runs the CLI (without waiting for pending files, as a user's
// command does) until it exits 0 or within passed, and returns its output
// and how long it took from the call.
func awaitCLI(t *testing.T, env *e2eEnv, within time.Duration, args ...string) (string, time.Duration) {
	t.Helper()
	start := time.Now()
	for {
		c := exec.Command(memfsBin, args...)
		c.Env = env.environ()
		out, err := c.Output()
		if err == nil {
			return string(out), time.Since(start)
		}
		if time.Since(start) > within {
			t.Errorf("memfs %s: still failing %v after the kill: %v", strings.Join(args, " "), within, err)
			return "", time.Since(start)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// awaitDurable waits until a live mount has written the pending rows of
// its temporary files at paths, which it does Settle after their close:
// from then on a kill -9 loses none of them.
func awaitDurable(t *testing.T, env *e2eEnv, store string, paths ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c := exec.Command(memfsBin, "--format", "json", "pending", "list", store)
		c.Env = env.environ()
		out, err := c.Output()
		var list struct {
			Data []versions.PendingFile `json:"data"`
		}
		missing := paths
		if err == nil {
			if err = json.Unmarshal(out, &list); err == nil {
				missing = slices.DeleteFunc(slices.Clone(paths), func(p string) bool {
					return slices.ContainsFunc(list.Data, func(f versions.PendingFile) bool { return f.Path == p })
				})
			}
		}
		if len(missing) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pending row for %v 10s after their close (%v)", missing, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// detachDead takes a killed daemon's mount off mnt.
func detachDead(t *testing.T, mnt string) {
	t.Helper()
	if err := syscall.Unmount(mnt, syscall.MNT_DETACH); err != nil {
		t.Logf("umount -l %s: %v", mnt, err)
	}
}

// TestE2EKillAfterNewFileClose: a daemon killed right after a new file's
// close() leaves nothing waiting for it. An ordinary name is a memory from
// its close; a temporary name is published, and the daemon's session shown
// ended, within lapseBound, with no mount running. MEMFS_KILL_LOOPS sets
// the number of tries (default 3).
func TestE2EKillAfterNewFileClose(t *testing.T) {
	loops := 3
	if n, err := strconv.Atoi(os.Getenv("MEMFS_KILL_LOOPS")); err == nil && n > 0 {
		loops = n
	}
	env := newE2EEnv(t)
	storeID, slug := env.createStore(t, "Kill after close")
	var worst time.Duration
	seen := 0
	for i := range loops {
		mnt := mountDir(t)
		d := env.startMount(t, mnt, "--store", storeID)
		m := regexp.MustCompile(`session=(sesn_[0-9A-Za-z]+)`).FindStringSubmatch(d.stderr.String())
		if m == nil {
			t.Fatalf("the daemon's log names no session:\n%s", d.stderr.String())
		}
		ordinary, temp := fmt.Sprintf("/new-%d.md", i), fmt.Sprintf("/.tmp-%d-%d", os.Getpid(), i)
		for _, p := range []string{ordinary, temp} {
			if err := os.WriteFile(filepath.Join(mnt, slug, p), []byte("saved "+p), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		awaitDurable(t, env, storeID, temp)
		d.kill9(t)
		killed := time.Now()
		if got, _ := awaitCLI(t, env, 0, "memory", "get", storeID, ordinary); got != "saved "+ordinary {
			t.Errorf("try %d: %s right after the kill: %q, want it final since its close", i, ordinary, got)
		}
		got, _ := awaitCLI(t, env, lapseBound, "memory", "get", storeID, temp)
		var sess struct {
			EndedAt *time.Time `json:"ended_at"`
		}
		out, _ := awaitCLI(t, env, lapseBound, "--format", "json", "session", "get", m[1])
		json.Unmarshal([]byte(out), &sess)
		for sess.EndedAt == nil && time.Since(killed) < lapseBound {
			time.Sleep(50 * time.Millisecond)
			out, _ = awaitCLI(t, env, 0, "--format", "json", "session", "get", m[1])
			json.Unmarshal([]byte(out), &sess)
		}
		after := time.Since(killed)
		worst = max(worst, after)
		if got == "saved "+temp && sess.EndedAt != nil && after <= lapseBound {
			seen++
		} else {
			t.Errorf("try %d: %s %q, session ended %v, %v after the kill", i, temp, got, sess.EndedAt, after)
		}
		detachDead(t, mnt)
	}
	t.Logf("%d of %d kills: the temporary file published and the session ended within %v (slowest %v)", seen, loops, lapseBound, worst)
}
