package main

// Two mount daemons and the CLI saving the same memories and directories at
// once: no busy error reaches a caller, no successful save is
// lost, and every read returns one complete saved version.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memfs/memfs/versions"
)

// stormContent is the content of one save: a header naming the writer and
// the save, then lines derived from it, so a read that mixes two saves or
// stops short is recognised.
func stormContent(who string, seq int) string {
	head := fmt.Sprintf("%s #%d\n", who, seq)
	return head + strings.Repeat(fmt.Sprintf("%s line of save %d\n", who, seq), 1+seq*7%60)
}

// checkStormContent returns an error unless s is one complete stormContent.
func checkStormContent(s string) error {
	var who string
	var seq int
	if _, err := fmt.Sscanf(s, "%s #%d\n", &who, &seq); err != nil {
		return fmt.Errorf("%d bytes with no save header: %.60q", len(s), s)
	}
	if want := stormContent(who, seq); s != want {
		return fmt.Errorf("read a torn or mixed save of %s #%d: %d bytes, want %d", who, seq, len(s), len(want))
	}
	return nil
}

func deref(s *string) string {
	if s == nil {
		return "<null>"
	}
	return *s
}

func sha256hex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// storm collects what the workers did.
type storm struct {
	mu     sync.Mutex
	saved  map[string]string // sha256 → who saved it
	errs   []string
	reads  int
	counts map[string]int
}

func (s *storm) ok(who, content string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.saved[sha256hex(content)] = who
	s.counts[who]++
}

func (s *storm) fail(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.errs) < 30 {
		s.errs = append(s.errs, fmt.Sprintf(format, args...))
	}
}

// cliSave saves content at path with the CLI: update, or create when the
// memory does not exist yet. Not-found and path conflicts are races with
// the other writers and are retried; anything else (exit 1 above all,
// which a busy database would cause) is a failure.
func cliSave(dbPath, store, path, content string) error {
	for attempt := 0; attempt < 20; attempt++ {
		code, stderr := cliRun(dbPath, "memory", "update", store, path, "--content", content)
		if code == exitOK {
			return nil
		}
		if code != exitNotFound {
			return fmt.Errorf("memfs memory update %s: exit %d: %s", path, code, stderr)
		}
		code, stderr = cliRun(dbPath, "memory", "create", store, "--path", path, "--content", content)
		if code == exitOK {
			return nil
		}
		if code != exitConflict {
			return fmt.Errorf("memfs memory create %s: exit %d: %s", path, code, stderr)
		}
	}
	return fmt.Errorf("memfs could not save %s in 20 rounds of update/create races", path)
}

func cliGet(dbPath, store, path string) (string, int, string) {
	ctx, cancel := context.WithTimeout(context.Background(), e2eCmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, memfsBin, "memory", "get", store, path)
	cmd.Env = append(os.Environ(), "MEMFS_DB="+dbPath)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return stdout.String(), 0, ""
	case errors.As(err, &ee) && ee.Exited():
		return "", ee.ExitCode(), strings.TrimSpace(stderr.String())
	}
	return "", -1, err.Error()
}

func cliRun(dbPath string, args ...string) (int, string) {
	ctx, cancel := context.WithTimeout(context.Background(), e2eCmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, memfsBin, args...)
	cmd.Env = append(os.Environ(), "MEMFS_DB="+dbPath)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, ""
	case errors.As(err, &ee) && ee.Exited():
		return ee.ExitCode(), strings.TrimSpace(stderr.String())
	}
	return -1, err.Error()
}

func TestConcurrentMountsAndCLI(t *testing.T) {
	env := newE2EEnv(t)
	storeID, slug := env.createStore(t, "Contended")
	shared := []string{"/shared/a.md", "/shared/b.md", "/shared/deep/c.md"}
	for i, p := range shared {
		env.cli(t, "memory", "create", storeID, "--path", p, "--content", stormContent("seed", i))
	}
	mntA, mntB := mountDir(t), mountDir(t)
	env.startMount(t, mntA, "--store", storeID)
	env.startMount(t, mntB, "--store", storeID)
	mntC := mountDir(t)
	env.startMount(t, mntC, "--store", storeID+":read_only")
	roots := map[string]string{"A": filepath.Join(mntA, slug), "B": filepath.Join(mntB, slug)}
	readRoot := filepath.Join(mntC, slug)

	st := &storm{saved: map[string]string{}, counts: map[string]int{}}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	stopped := func() bool {
		select {
		case <-stop:
			return true
		default:
			return false
		}
	}
	// Mount writers: one per mount on the shared files, because two
	// processes writing one file through the same mount may interleave
	// their bytes or write to a file another renamed over, as on any POSIX
	// file system. Mount A saves in place, mount B the atomic way (a
	// temporary file renamed over the target, as editors do). A second
	// writer per mount makes a directory, saves in it and removes both.
	for m, kind := range map[string]string{"A": "inplace", "B": "atomic"} {
		{
			who := fmt.Sprintf("mount%s-%s", m, kind)
			wg.Add(1)
			go func() {
				defer wg.Done()
				tmp := filepath.Join(roots[m], "shared", "."+who+".tmp")
				for seq := 1; !stopped(); seq++ {
					target := roots[m] + shared[seq%len(shared)]
					content := stormContent(who, seq)
					var err error
					if kind == "inplace" {
						err = os.WriteFile(target, []byte(content), 0o644)
					} else if err = os.WriteFile(tmp, []byte(content), 0o644); err == nil {
						err = os.Rename(tmp, target)
					}
					if err != nil {
						st.fail("%s save %d to %s: %v", who, seq, target, err)
						continue
					}
					st.ok(who, content)
				}
			}()
		}
		who := fmt.Sprintf("mount%s-dirs", m)
		wg.Add(1)
		go func() {
			defer wg.Done()
			dir := filepath.Join(roots[m], "dirs", who)
			f := filepath.Join(dir, "note.md")
			for seq := 1; !stopped(); seq++ {
				content := stormContent(who, seq)
				if err := os.MkdirAll(dir, 0o755); err != nil {
					st.fail("%s mkdir %s: %v", who, dir, err)
				} else if err := os.WriteFile(f, []byte(content), 0o644); err != nil {
					st.fail("%s save %s: %v", who, f, err)
				} else {
					// Removed at once, within the mount's grace period,
					// the file is a temporary one and leaves no version:
					// only counted.
					st.mu.Lock()
					st.counts[who]++
					st.mu.Unlock()
					if err := os.Remove(f); err != nil {
						st.fail("%s remove %s: %v", who, f, err)
					} else if err := os.Remove(dir); err != nil {
						st.fail("%s rmdir %s: %v", who, dir, err)
					}
				}
			}
		}()
	}
	// CLI writers on the same memories, and one making memories in the
	// directory the mounts work in.
	for w := 1; w <= 2; w++ {
		who := fmt.Sprintf("cli-w%d", w)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := 1; !stopped(); seq++ {
				p := shared[(seq+w)%len(shared)]
				if w == 2 && seq%2 == 0 {
					p = fmt.Sprintf("/dirs/cli/n%03d.md", seq)
				}
				content := stormContent(who, seq)
				if err := cliSave(env.dbPath, storeID, p, content); err != nil {
					st.fail("%s: %v", who, err)
					continue
				}
				st.ok(who, content)
			}
		}()
	}
	// Readers see only committed saves: through a third, read-only mount
	// and through the CLI. Every read is one complete save.
	check := func(where, p, content string) {
		if err := checkStormContent(content); err != nil {
			st.fail("read %s through %s: %v", p, where, err)
		}
		st.mu.Lock()
		st.reads++
		st.mu.Unlock()
	}
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := 0; !stopped(); i++ {
			p := shared[i%len(shared)]
			b, err := os.ReadFile(readRoot + p)
			if err != nil {
				st.fail("read %s in the read-only mount: %v", p, err)
				continue
			}
			check("the read-only mount", p, string(b))
		}
	}()
	go func() {
		defer wg.Done()
		for i := 0; !stopped(); i++ {
			p := shared[i%len(shared)]
			out, code, stderr := cliGet(env.dbPath, storeID, p)
			if code != exitOK {
				st.fail("memfs memory get %s: exit %d: %s", p, code, stderr)
				continue
			}
			check("memfs memory get", p, out)
		}
	}()
	// Long enough for a few hundred contended saves; nothing is timed.
	time.Sleep(4 * time.Second)
	close(stop)
	wg.Wait()

	for _, e := range st.errs {
		t.Errorf("%s", e)
	}
	t.Logf("saves per writer: %v; reads: %d", st.counts, st.reads)

	db, err := versions.Open(env.dbPath, versions.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	have := map[string]bool{}
	conflicts, total := 0, 0
	err = db.Export(context.Background(), storeID, func(x any) error {
		v, ok := x.(versions.Version)
		if !ok || v.Content == nil {
			return nil
		}
		total++
		if v.Conflict {
			conflicts++
		}
		have[sha256hex(*v.Content)] = true
		if err := checkStormContent(*v.Content); err != nil {
			t.Errorf("version %s (%s %s by %v, conflict %v): %v", v.ID, v.Operation, deref(v.Path), v.CreatedBy, v.Conflict, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	lost := 0
	for sum, who := range st.saved {
		if !have[sum] {
			lost++
			if lost <= 10 {
				t.Errorf("a save by %s (sha256 %s) succeeded but is not a version", who, sum)
			}
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d successful saves lost", lost, len(st.saved))
	}
	t.Logf("%d versions with content, %d marked as conflicts", total, conflicts)

	// Every mount converges on the head of every shared memory.
	roots["C"] = readRoot
	for _, p := range shared {
		m, err := db.GetMemory(context.Background(), storeID, p)
		if err != nil {
			t.Fatal(err)
		}
		for name, root := range roots {
			if _, ok := waitContent(root+p, *m.Content, time.Now(), 10*time.Second); !ok {
				got, err := os.ReadFile(root + p)
				t.Errorf("mount %s reads %s as %.40q (%v), want the head %s", name, p, got, err, m.VersionID)
			}
		}
	}
}
