package main

// A second adversarial review of `memfs run`, replayed through the built
// binary as root inside and as --user 65534.

import (
	"bufio"
	"bytes"
	"os"

	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hostDir is a directory outside /tmp (the command's /tmp is its own), 0755
// so that --user 65534 may pass it, removed after the test.
func hostDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "memfs-redteam-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// sharedBind makes dir a shared mount of its own, as a host with systemd's
// shared root has: a mount below it propagates to every copy.
func sharedBind(t *testing.T, dir string) {
	t.Helper()
	if err := syscall.Mount(dir, dir, "", syscall.MS_BIND, ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	if err := syscall.Mount("", dir, "", syscall.MS_SHARED, ""); err != nil {
		t.Fatal(err)
	}
}

// hostMount starts another session's `memfs mount --store STORE MNT` on the
// host and waits until it serves; cleanup stops it.
func (e *runEnv) hostMount(t *testing.T, store, mnt string) {
	t.Helper()
	if err := os.MkdirAll(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := e.command("mount", "--store", store, "--ready-fd", "3", mnt)
	var errb syncBuffer
	cmd.Stderr = &errb
	cmd.ExtraFiles = []*os.File{w}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		_ = syscall.Unmount(mnt, syscall.MNT_DETACH)
	})
	ready := make(chan bool, 1)
	go func() {
		line, _ := bufio.NewReader(r).ReadString('\n')
		ready <- strings.Contains(line, "ready")
	}()
	select {
	case ok := <-ready:
		if !ok {
			t.Fatalf("memfs mount %s did not become ready:\n%s", mnt, errb.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("memfs mount %s not ready after 30s:\n%s", mnt, errb.String())
	}
}

// Another session's `memfs mount`, live on the host outside /tmp when the
// run started, was readable to the command; one started while it runs,
// below a shared mount, must not reach it either.
func TestRunRedTeamOtherSessionsMounts(t *testing.T) {
	for _, u := range runUsers {
		t.Run(u.name, func(t *testing.T) {
			e := newRunEnv(t)
			e.stores(t)
			e.ok(t, "store", "create", "--name", "Secret", "--description", "another session's")
			e.ok(t, "memory", "create", "Secret", "--path", "/secret.md", "--content", "the other session's secret\n")
			host := hostDir(t)
			sharedBind(t, host)
			before, later := filepath.Join(host, "agent1"), filepath.Join(host, "agent2")
			e.hostMount(t, "Secret", before)
			if b, err := os.ReadFile(filepath.Join(before, "secret", "secret.md")); err != nil || !strings.Contains(string(b), "secret") {
				t.Fatalf("the host's own mount does not serve the secret (%q, %v)", b, err)
			}
			started, goOn := filepath.Join(e.out, "started"), filepath.Join(e.out, "go")
			script := `
fails read-before cat "$BEFORE/secret/secret.md"
fails list-before sh -c 'ls -A "$BEFORE" | grep -q .'
check own-store test -d "$ROOT/agent-notes"
touch "$STARTED"
while [ ! -e "$GO" ]; do sleep 0.05; done
fails read-later cat "$LATER/secret/secret.md"
fails list-later sh -c 'ls -A "$LATER" | grep -q .'
`
			args := append([]string{"run", "--store", "Agent Notes", "--mount-root", e.root, "--pass-env", "ROOT", "--rw", e.out,
				"--env", "BEFORE=" + before, "--env", "LATER=" + later, "--env", "STARTED=" + started, "--env", "GO=" + goOn}, u.args...)
			cmd := e.command(append(args, "--", "sh", "-c", attackPrelude+script)...)
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waitForFile(t, started, &errb)
			e.hostMount(t, "Secret", later)
			if err := os.WriteFile(goOn, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := cmd.Wait(); err != nil {
				t.Fatalf("memfs run: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errb.String())
			}
			wantChecks(t, runChecks(out.String()), out.String()+"\nstderr:\n"+errb.String(),
				"read-before", "list-before", "own-store", "read-later", "list-later")
		})
	}
}

// The check refusing a --rw directory that holds the database's compared
// paths: a bind mount of the granted directory let the command rename the
// database's parent and plant a forged one.
func TestRunRedTeamDatabaseThroughBindMount(t *testing.T) {
	for _, u := range runUsers {
		t.Run(u.name, func(t *testing.T) {
			e := newRunEnv(t)
			host := hostDir(t)
			rw, alias := filepath.Join(host, "rw"), filepath.Join(host, "rw2")
			e.db = filepath.Join(rw, "a", "b", "memfs.db")
			for _, d := range []string{filepath.Dir(e.db), alias} {
				if err := os.MkdirAll(d, 0o777); err != nil {
					t.Fatal(err)
				}
			}
			for _, d := range []string{rw, filepath.Join(rw, "a")} {
				if err := os.Chmod(d, 0o777); err != nil {
					t.Fatal(err)
				}
			}
			if err := syscall.Mount(rw, alias, "", syscall.MS_BIND, ""); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = syscall.Unmount(alias, syscall.MNT_DETACH) })
			e.stores(t)
			args := append([]string{"run", "--rw", alias, "--store", "Agent Notes", "--mount-root", e.root}, u.args...)
			out, errs, code := e.memfs(t, append(args, "--", "mv", filepath.Join(alias, "a"), filepath.Join(alias, "a2"))...)
			if _, err := os.Stat(e.db); err != nil {
				t.Errorf("the command moved the database's directory away through the bind mount %s: %v", alias, err)
			}
			if code == 0 || !strings.Contains(errs, "--rw "+alias) {
				t.Errorf("memfs run with --rw %s, a bind mount of the database's parent: exit %d, want a refusal naming it\nstdout:\n%s\nstderr:\n%s", alias, code, out, errs)
			}
			// A grant beside the database's directory still works, once
			// no other mount shows the database.
			_ = syscall.Unmount(alias, syscall.MNT_DETACH)
			beside := filepath.Join(host, "beside")
			if err := os.Mkdir(beside, 0o777); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(beside, 0o777); err != nil {
				t.Fatal(err)
			}
			args = append([]string{"run", "--rw", beside, "--store", "Agent Notes", "--mount-root", e.root}, u.args...)
			if _, errs, code := e.memfs(t, append(args, "--", "touch", filepath.Join(beside, "x"))...); code != 0 {
				t.Errorf("memfs run --rw %s beside the database: exit %d\n%s", beside, code, errs)
			}
		})
	}
}

// The command's private /tmp was a tmpfs of a quarter of the host's memory
// per run, outside any --memory limit: it is bounded by --tmp-size, 64 MiB
// unless set.
func TestRunRedTeamTmpBounded(t *testing.T) {
	for _, u := range runUsers {
		t.Run(u.name, func(t *testing.T) {
			e := newRunEnv(t)
			e.stores(t)
			script := `
fails fill-default dd if=/dev/zero of=/tmp/big bs=1M count=80
rm -f /tmp/big
fails fill-home dd if=/dev/zero of="$HOME/big" bs=1M count=80
rm -f "$HOME/big"
check small-fits dd if=/dev/zero of=/tmp/small bs=1M count=8
`
			got, out := e.attack(t, u.args, nil, script)
			wantChecks(t, got, out, "fill-default", "fill-home", "small-fits")
			got, out = e.attack(t, u.args, []string{"--tmp-size", "128M"}, `check fill-larger dd if=/dev/zero of=/tmp/big bs=1M count=80`)
			wantChecks(t, got, out, "fill-larger")
		})
	}
}
