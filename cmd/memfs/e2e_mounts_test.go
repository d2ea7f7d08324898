package main

// End-to-end tests of mounts as processes: a daemon killed with SIGKILL,
// the CLI next to a mount, signals, read-only.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memfs/memfs/versions"
)

func TestE2EKill9(t *testing.T) {
	env := newE2EEnv(t)
	storeID, slug := env.createStore(t, "Burst")
	mnt := mountDir(t)
	d := env.startMount(t, mnt, "--store", "Burst")
	dir := filepath.Join(mnt, slug, "burst")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}

	const files = 200
	saved := map[string]string{} // memory path → content, for every close that succeeded
	for i := 0; i < files; i++ {
		name := fmt.Sprintf("f%03d.txt", i)
		content := fmt.Sprintf("burst %d\n%s\n", i, strings.Repeat("x", i))
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Errorf("save %s: %v", name, err)
			continue
		}
		saved["/burst/"+name] = content
	}
	d.kill9(t)
	t.Logf("killed the daemon after %d successful saves: %v", len(saved), d.state)
	// New files are durable from close() as pending files; the next mount
	// on the mountpoint publishes what the dead daemon left.
	env.startMount(t, mnt, "--store", "Burst")

	t.Run("EverySaveStored", func(t *testing.T) {
		db, err := versions.Open(env.dbPath, versions.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		ctx := context.Background()
		for p, want := range saved {
			m, err := db.GetMemory(ctx, storeID, p)
			if err != nil {
				t.Errorf("save of %s returned success but the store has no memory: %v", p, err)
				continue
			}
			if m.Content == nil || *m.Content != want {
				t.Errorf("memory %s holds %v, want %q", p, m.Content, want)
			}
		}
		page, err := db.ListVersions(ctx, storeID, versions.VersionListOptions{Limit: versions.MaxPageSize})
		if err != nil {
			t.Fatal(err)
		}
		if got := len(page.Data); got != len(saved) {
			t.Errorf("%d versions after %d saves of new files, want one created version each", got, len(saved))
		}
	})

	t.Run("RemountWithoutCleanup", func(t *testing.T) {
		for p, want := range saved {
			got, err := os.ReadFile(filepath.Join(mnt, slug, p))
			if err != nil || string(got) != want {
				t.Errorf("after remount %s reads %q, %v; want %q", p, got, err, want)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "after.txt"), []byte("after\n"), 0o644); err != nil {
			t.Errorf("save through the new mount: %v", err)
		}
		if got := env.cli(t, "memory", "get", storeID, "/burst/after.txt"); got != "after\n" {
			t.Errorf("memory get /burst/after.txt = %q, want %q", got, "after\n")
		}
	})
}

func TestE2ECLIWhileMounted(t *testing.T) {
	env := newE2EEnv(t)
	storeID, slug := env.createStore(t, "Ops Notes")
	mnt := mountDir(t)
	env.startMount(t, mnt, "--store", "Ops Notes")
	dir := filepath.Join(mnt, slug)
	sh(t, dir, "mkdir notes && printf 'buy milk\\n' > notes/todo.md")
	file := filepath.Join(dir, "notes", "todo.md")

	t.Run("Log", func(t *testing.T) {
		for _, args := range [][]string{{"log", storeID}, {"log", "Ops Notes", "/notes/todo.md"}} {
			out := env.cli(t, args...)
			if !strings.Contains(out, "/notes/todo.md") || !strings.Contains(out, "created") {
				t.Errorf("memfs %s does not show the created /notes/todo.md:\n%s", strings.Join(args, " "), out)
			}
		}
	})

	t.Run("Get", func(t *testing.T) {
		if got := env.cli(t, "memory", "get", storeID, "/notes/todo.md"); got != "buy milk\n" {
			t.Errorf("memory get = %q, want %q", got, "buy milk\n")
		}
	})

	t.Run("UpdateShowsInMount", func(t *testing.T) {
		// Read first so the kernel holds the old content in its cache.
		if got, err := os.ReadFile(file); err != nil || string(got) != "buy milk\n" {
			t.Fatalf("read through the mount: %q, %v", got, err)
		}
		start := time.Now()
		env.cli(t, "memory", "update", storeID, "/notes/todo.md", "--content", "buy oat milk\n")
		d, ok := waitContent(file, "buy oat milk\n", start, visibilityLimit)
		if !ok {
			got, err := os.ReadFile(file)
			t.Fatalf("a CLI update is not in the mount after %v: reads %q, %v", visibilityLimit, got, err)
		}
		t.Logf("CLI update visible in the mount after %v (including the CLI's run)", d)
	})

	t.Run("CreateAndDeleteShowInMount", func(t *testing.T) {
		added := filepath.Join(dir, "notes", "added.md")
		if _, err := os.Stat(added); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("stat before create: %v, want ENOENT", err)
		}
		start := time.Now()
		env.cli(t, "memory", "create", storeID, "--path", "/notes/added.md", "--content", "new\n")
		if _, ok := waitContent(added, "new\n", start, visibilityLimit); !ok {
			t.Fatalf("a CLI create is not in the mount after %v", visibilityLimit)
		}
		env.cli(t, "memory", "delete", storeID, "/notes/added.md")
		start = time.Now()
		for {
			_, err := os.Stat(added)
			if errors.Is(err, fs.ErrNotExist) {
				break
			}
			if time.Since(start) > visibilityLimit {
				t.Fatalf("a CLI delete is not seen by the mount after %v: stat %v", visibilityLimit, err)
			}
			time.Sleep(time.Millisecond)
		}
	})
}

func TestE2ESignalUnmount(t *testing.T) {
	cases := []struct {
		name  string
		sig   syscall.Signal
		write bool // save a file before the signal, and find it after
		busy  bool // a file in the mount is open when the signal comes
	}{
		{"SIGINT", syscall.SIGINT, true, false},
		{"SIGTERM", syscall.SIGTERM, true, false},
		{"SIGTERMWhileFileOpen", syscall.SIGTERM, true, true},
		// A supervisor whose command exited at once stops the mount as
		// soon as it is ready: the signal must not find the daemon
		// without its handler.
		{"SIGTERMRightAfterReady", syscall.SIGTERM, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := newE2EEnv(t)
			storeID, slug := env.createStore(t, "Sig")
			mnt := mountDir(t)
			d := env.startMount(t, mnt, "--store", "Sig")
			file := filepath.Join(mnt, slug, "f")
			if c.write {
				if err := os.WriteFile(file, []byte("kept\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if c.busy {
				// An agent still inside the mount must not keep the
				// daemon from going away nor leave a dead mount.
				f, err := os.Open(file)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
			}
			st := d.stop(t, c.sig)
			if !st.Exited() || st.ExitCode() != 0 {
				t.Errorf("memfs mount after %v: %v, want exit status 0", c.sig, st)
			}
			if isMounted(t, mnt) {
				t.Errorf("%s still mounted after %v", mnt, c.sig)
			}
			if !c.write {
				return
			}
			if got := env.cli(t, "memory", "get", storeID, "/f"); got != "kept\n" {
				t.Errorf("memory get /f = %q, want %q", got, "kept\n")
			}
		})
	}
}

func TestE2EReadOnly(t *testing.T) {
	env := newE2EEnv(t)
	storeID, slug := env.createStore(t, "Reference")
	env.cli(t, "memory", "create", storeID, "--path", "/r.txt", "--content", "hello\n")
	env.cli(t, "memory", "create", storeID, "--path", "/docs/a.txt", "--content", "a\n")
	mnt := mountDir(t)
	env.startMount(t, mnt, "--store", "Reference:read_only")
	dir := filepath.Join(mnt, slug)
	before := env.versionList(t, storeID)

	t.Run("ShellWrite", func(t *testing.T) {
		out, err := shErr(dir, "echo x > f")
		if err == nil {
			t.Fatal("echo x > f succeeded on a read_only mount")
		}
		if !strings.Contains(out, "Read-only file system") {
			t.Errorf("echo x > f failed with %q, want EROFS (Read-only file system)", out)
		}
	})

	t.Run("Errno", func(t *testing.T) {
		ops := map[string]func() error{
			"create": func() error { return os.WriteFile(filepath.Join(dir, "new"), []byte("x"), 0o644) },
			"append": func() error {
				f, err := os.OpenFile(filepath.Join(dir, "r.txt"), os.O_WRONLY|os.O_APPEND, 0)
				if err == nil {
					f.Close()
				}
				return err
			},
			"truncate": func() error { return os.Truncate(filepath.Join(dir, "r.txt"), 0) },
			"remove":   func() error { return os.Remove(filepath.Join(dir, "r.txt")) },
			"rename":   func() error { return os.Rename(filepath.Join(dir, "r.txt"), filepath.Join(dir, "s.txt")) },
			"mkdir":    func() error { return os.Mkdir(filepath.Join(dir, "d"), 0o755) },
			"mountRoot": func() error {
				return os.WriteFile(filepath.Join(mnt, "x"), []byte("x"), 0o644)
			},
		}
		for name, op := range ops {
			if err := op(); !errors.Is(err, syscall.EROFS) {
				t.Errorf("%s: %v, want EROFS", name, err)
			}
		}
	})

	t.Run("Reads", func(t *testing.T) {
		if got := sh(t, dir, "cat r.txt docs/a.txt"); got != "hello\na\n" {
			t.Errorf("cat = %q, want %q", got, "hello\na\n")
		}
	})

	if added := newVersions(before, env.versionList(t, storeID)); len(added) != 0 {
		t.Errorf("a read_only mount wrote versions:%s", describeVersions(added))
	}
}
