package main

// Helpers for the end-to-end tests: they drive the built binary (memfsBin,
// built by TestMain in main_test.go) as separate processes, the way an
// operator and an agent would, against a fresh database per test.

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/moby/sys/mountinfo"

	"github.com/memfs/memfs/internal/proctest"
	"github.com/memfs/memfs/slugify"
	"github.com/memfs/memfs/versions"
)

// Generous bounds: the machine is shared with other builds and tests.
const (
	e2eReadyTimeout = 30 * time.Second
	e2eStopTimeout  = 15 * time.Second
	e2eCmdTimeout   = 60 * time.Second
)

// stopIdle stops a daemon (SIGSTOP) at a moment it holds no write lock of
// the SQLite database. Stopped inside a write transaction, or the WAL's
// restart its checkpointer runs, it would lock every other process out of
// writing until it resumes, as SQLite must; the tests that stop a daemon
// are about what it does not hold. It stops the daemon again, a moment
// after letting it go on, until it finds it so.
func (e *e2eEnv) stopIdle(t *testing.T, p *os.Process) {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+e.dbPath+"?_busy_timeout=300")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	for attempt := 1; ; attempt++ {
		if err := p.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		proctest.WaitStopped(t, p.Pid)
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.ExecContext(ctx, "BEGIN IMMEDIATE")
		if err == nil {
			_, err = c.ExecContext(ctx, "ROLLBACK")
		}
		c.Close()
		if err == nil {
			return
		}
		if err := p.Signal(syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		if attempt == 20 {
			t.Fatalf("the daemon held the database's write lock each of %d times it was stopped: %v", attempt, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// e2eEnv is one fresh database and the CLI pointed at it.
type e2eEnv struct {
	dbPath string
}

func newE2EEnv(t *testing.T) *e2eEnv {
	t.Helper()
	if memfsBin == "" {
		t.Fatal("memfsBin is empty: TestMain in main_test.go must build the binary")
	}
	return &e2eEnv{dbPath: filepath.Join(t.TempDir(), "memfs.db")}
}

func (e *e2eEnv) environ() []string {
	return append(os.Environ(), "MEMFS_DB="+e.dbPath)
}

// settle waits until the mounts have published the files they hold
// pending (new files become memories a grace period after their close()),
// so that the CLI sees what was written through a mount.
func (e *e2eEnv) settle(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(e.dbPath); err != nil {
		return
	}
	db, err := versions.Open(e.dbPath, versions.Options{})
	if err != nil {
		t.Fatalf("open %s: %v", e.dbPath, err)
	}
	defer db.Close()
	for deadline := time.Now().Add(versions.LeaseTTL + 3*time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if pending, err := db.HasPending(context.Background()); err != nil || !pending {
			return
		}
	}
}

// run runs the memfs CLI and returns its stdout, stderr and exit code.
func (e *e2eEnv) run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	e.settle(t)
	ctx, cancel := context.WithTimeout(context.Background(), e2eCmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, memfsBin, args...)
	cmd.Env = e.environ()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return stdout.String(), stderr.String(), 0
	case errors.As(err, &exitErr) && exitErr.Exited():
		return stdout.String(), stderr.String(), exitErr.ExitCode()
	}
	t.Fatalf("memfs %s: %v (stderr: %s)", strings.Join(args, " "), err, stderr.String())
	return "", "", -1
}

// cli runs the memfs CLI and fails the test unless it exits 0.
func (e *e2eEnv) cli(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := e.run(t, args...)
	if code != 0 {
		t.Fatalf("memfs %s: exit %d, stderr: %s", strings.Join(args, " "), code, errOut)
	}
	return out
}

// cliJSON runs the CLI with --format json and decodes its output into v.
func (e *e2eEnv) cliJSON(t *testing.T, v any, args ...string) {
	t.Helper()
	out := e.cli(t, append([]string{"--format", "json"}, args...)...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("memfs --format json %s: output is not the expected JSON: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// createStore creates a store and returns its id and the directory name it
// is mounted under.
func (e *e2eEnv) createStore(t *testing.T, name string) (id, slug string) {
	t.Helper()
	id = strings.TrimSpace(e.cli(t, "store", "create", "--name", name))
	if !strings.HasPrefix(id, "memstore_") {
		t.Fatalf("store create printed %q, want a memstore_ id", id)
	}
	return id, slugify.Make(name)
}

// versionList is `memfs version list STORE` newest first, every page.
func (e *e2eEnv) versionList(t *testing.T, store string) []versions.Version {
	t.Helper()
	return listAll[versions.Version](t, e, "version", "list", store)
}

// memoryList is `memfs memory list STORE`: the live memories by path.
func (e *e2eEnv) memoryList(t *testing.T, store string) map[string]versions.Memory {
	t.Helper()
	live := map[string]versions.Memory{}
	for _, m := range listAll[versions.Memory](t, e, "memory", "list", store) {
		if !strings.HasPrefix(m.ID, "mem_") {
			t.Fatalf("memory list item %+v has no mem_ id", m)
		}
		live[m.Path] = m
	}
	return live
}

// listAll runs a listing command page by page and returns every item.
func listAll[T any](t *testing.T, e *e2eEnv, args ...string) []T {
	t.Helper()
	var all []T
	cursor := ""
	for range 1000 {
		var page versions.Page[T]
		a := append(append([]string(nil), args...), "--limit", "1000")
		if cursor != "" {
			a = append(a, "--page", cursor)
		}
		e.cliJSON(t, &page, a...)
		all = append(all, page.Data...)
		if page.NextPage == nil {
			return all
		}
		if *page.NextPage == cursor {
			t.Fatalf("memfs %s returned the same next_page %q twice", strings.Join(args, " "), cursor)
		}
		cursor = *page.NextPage
	}
	t.Fatalf("memfs %s: more than 1000 pages", strings.Join(args, " "))
	return nil
}

// newVersions returns the versions of after that are not in before, oldest
// first.
func newVersions(before, after []versions.Version) []versions.Version {
	seen := map[string]bool{}
	for _, v := range before {
		seen[v.ID] = true
	}
	var added []versions.Version
	for i := len(after) - 1; i >= 0; i-- {
		if !seen[after[i].ID] {
			added = append(added, after[i])
		}
	}
	return added
}

func describeVersions(vs []versions.Version) string {
	var b strings.Builder
	for _, v := range vs {
		p := "<nil>"
		if v.Path != nil {
			p = *v.Path
		}
		fmt.Fprintf(&b, "\n  %s %s mem=%s path=%s", v.ID, v.Operation, v.MemoryID, p)
	}
	return b.String()
}

// sh runs a shell command line with dir as its working directory, as an
// agent would, and fails the test if it fails.
func sh(t *testing.T, dir, script string) string {
	t.Helper()
	out, err := shErr(dir, script)
	if err != nil {
		t.Fatalf("sh -c %q in %s: %v\n%s", script, dir, err, out)
	}
	return out
}

func shErr(dir, script string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), e2eCmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", script)
	cmd.Dir = dir
	// Error messages are matched in English.
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// syncBuffer collects a daemon's stderr while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// daemon is a running `memfs mount` process.
type daemon struct {
	cmd    *exec.Cmd
	mnt    string
	stderr *syncBuffer
	done   chan struct{} // closed when the process has exited
	state  *os.ProcessState
}

// startMount starts `memfs mount ARGS --ready-fd 3 MNT` and waits until it
// reports ready. Cleanup stops it with SIGTERM (SIGKILL as a last resort)
// and lazily unmounts whatever is still mounted on mnt, so nothing is left
// behind even when the test fails.
func (e *e2eEnv) startMount(t *testing.T, mnt string, args ...string) *daemon {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	full := append([]string{"mount"}, args...)
	full = append(full, "--ready-fd", "3", mnt)
	d := &daemon{mnt: mnt, stderr: &syncBuffer{}, done: make(chan struct{})}
	d.cmd = exec.Command(memfsBin, full...)
	d.cmd.Env = e.environ()
	d.cmd.Stderr = d.stderr
	d.cmd.ExtraFiles = []*os.File{w}
	if err := d.cmd.Start(); err != nil {
		w.Close()
		t.Fatalf("start memfs mount: %v", err)
	}
	w.Close()
	go func() {
		d.cmd.Wait()
		d.state = d.cmd.ProcessState
		close(d.done)
	}()
	t.Cleanup(func() {
		d.stop(t, syscall.SIGTERM)
		unmountAll(t, mnt)
		if t.Failed() {
			t.Logf("memfs mount %s stderr:\n%s", mnt, d.stderr.String())
		}
	})

	ready := make(chan string, 1)
	go func() {
		var got strings.Builder
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			got.WriteString(sc.Text())
			if strings.Contains(sc.Text(), "ready") {
				break
			}
		}
		ready <- got.String()
	}()
	select {
	case msg := <-ready:
		if !strings.Contains(msg, "ready") {
			t.Fatalf("memfs mount %s closed --ready-fd without saying ready (%q); stderr:\n%s", mnt, msg, d.stderr.String())
		}
	case <-d.done:
		t.Fatalf("memfs mount %s exited before it was ready (%v); stderr:\n%s", mnt, d.state, d.stderr.String())
	case <-time.After(e2eReadyTimeout):
		t.Fatalf("memfs mount %s not ready after %v; stderr:\n%s", mnt, e2eReadyTimeout, d.stderr.String())
	}
	if !isMounted(t, mnt) {
		t.Fatalf("memfs mount said ready but %s is not in /proc/self/mountinfo", mnt)
	}
	return d
}

// stop sends sig, waits for the exit and, if the process does not exit in
// time, kills it. It returns the exit state.
func (d *daemon) stop(t *testing.T, sig syscall.Signal) *os.ProcessState {
	t.Helper()
	select {
	case <-d.done:
		return d.state
	default:
	}
	if err := d.cmd.Process.Signal(sig); err != nil {
		t.Logf("signal %v to memfs mount: %v", sig, err)
	}
	select {
	case <-d.done:
		return d.state
	case <-time.After(e2eStopTimeout):
	}
	// SIGQUIT makes a Go daemon print every goroutine's stack on its
	// stderr, which the cleanup logs: that is where it hangs.
	t.Errorf("memfs mount %s did not exit %v after %v: SIGQUIT for a stack dump, then SIGKILL", d.mnt, e2eStopTimeout, sig)
	d.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-d.done:
	case <-time.After(3 * time.Second):
		d.cmd.Process.Kill()
		<-d.done
	}
	return d.state
}

// kill9 kills the daemon with SIGKILL and waits for it.
func (d *daemon) kill9(t *testing.T) {
	t.Helper()
	if err := d.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("SIGKILL memfs mount: %v", err)
	}
	<-d.done
}

// unmountAll lazily unmounts everything still mounted on mnt.
func unmountAll(t *testing.T, mnt string) {
	t.Helper()
	for i := 0; i < 5 && isMounted(t, mnt); i++ {
		t.Errorf("%s still mounted after its daemon stopped: umount -l", mnt)
		if err := syscall.Unmount(mnt, syscall.MNT_DETACH); err != nil {
			t.Logf("umount -l %s: %v", mnt, err)
		}
	}
}

// isMounted reports whether mnt is a mount point in this mount namespace.
func isMounted(t *testing.T, mnt string) bool {
	t.Helper()
	mounts, err := mountinfo.GetMounts(mountinfo.SingleEntryFilter(filepath.Clean(mnt)))
	if err != nil {
		t.Fatalf("read the mount table: %v", err)
	}
	return len(mounts) > 0
}

// mountDir returns a fresh, empty directory to mount on.
func mountDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// waitContent polls path until it holds want and returns how long that took
// after start; ok is false if it did not within limit.
func waitContent(path, want string, start time.Time, limit time.Duration) (time.Duration, bool) {
	return waitFor(func() bool {
		got, err := os.ReadFile(path)
		return err == nil && string(got) == want
	}, start, limit)
}

// waitFor polls cond until it holds and returns how long that took after
// start; ok is false if it did not within limit.
func waitFor(cond func() bool, start time.Time, limit time.Duration) (time.Duration, bool) {
	for {
		if cond() {
			return time.Since(start), true
		}
		if time.Since(start) > limit {
			return time.Since(start), false
		}
		time.Sleep(time.Millisecond)
	}
}

// percentile returns the p-th percentile (0 < p ≤ 1) of ds by the
// nearest-rank method.
func percentile(ds []time.Duration, p float64) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return s[max(i, 0)]
}
