package fusefs

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/internal/mirror"
	"github.com/memfs/memfs/versions"
)

// toolEnv is a mounted store holding one memory, /notes.md.
type toolEnv struct {
	e   *env
	st  *versions.Store
	dir string
	mem *versions.Memory
}

const notesBefore = "line one\n"

func newToolEnv(t *testing.T) *toolEnv {
	t.Helper()
	e := newEnv(t)
	st := e.store(t, "Tools")
	_, dir := e.mountStore(t, st, Options{})
	write(t, filepath.Join(dir, "notes.md"), notesBefore)
	return &toolEnv{e: e, st: st, dir: dir, mem: e.memory(t, st.ID, "/notes.md")}
}

// checkOneEdit: the store's whole history is the memory's "created" and one
// "modified" of the same memory holding want; one live memory; nothing
// pending; and the mount lists no temporary file.
func (te *toolEnv) checkOneEdit(t *testing.T, want string) {
	t.Helper()
	vs := te.e.allVersions(t, te.st.ID)
	if len(vs) != 2 || vs[0].MemoryID != te.mem.ID || vs[0].Operation != versions.OpModified {
		t.Errorf("store history %s, want created /notes.md, modified /notes.md of %s", ops(vs), te.mem.ID)
	}
	got := te.e.memory(t, te.st.ID, "/notes.md")
	if got.ID != te.mem.ID || got.Content == nil || *got.Content != want {
		t.Errorf("/notes.md is %s with %q, want %s with %q", got.ID, *got.Content, te.mem.ID, want)
	}
	page, err := te.e.db.ListMemories(context.Background(), te.st.ID, versions.MemoryListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 1 {
		t.Errorf("%d live memories, want 1: %+v", len(page.Data), page.Data)
	}
	if left, _ := te.e.db.ListPending(context.Background(), te.st.ID, "", time.Now().Add(time.Hour)); len(left) != 0 {
		t.Errorf("pending files left: %+v", left)
	}
	ents, err := os.ReadDir(te.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ents {
		if d.Name() != "notes.md" && !mirror.Names(mirror.DefaultScratchPatterns)(d.Name()) {
			t.Errorf("the mount lists %s after the edit", d.Name())
		}
	}
}

func run(t *testing.T, dir, name string, args ...string) {
	t.Helper()
	c := exec.Command(name, args...)
	c.Dir = dir
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// needTool skips when a tool is not installed (.ci/run installs them).
func needTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("%s is not installed: apt-get install it", name)
	}
}

// Each edit by an agent's ordinary tools is one version of the target and
// leaves no trace of its temporary, swap, lock, probe or backup files.
func TestToolsLeaveOneVersion(t *testing.T) {
	after := "line two\n"
	shell := map[string]string{
		"SedInPlace":        `sed -i 's/one/two/' notes.md`,
		"PerlInPlace":       `perl -pi -e 's/one/two/' notes.md`,
		"CopyThenRename":    `cp notes.md notes.md.new && printf 'line two\n' > notes.md.new && mv notes.md.new notes.md`,
		"GitStyleLock":      `printf 'line two\n' > notes.md.lock && mv notes.md.lock notes.md`,
		"SDKTempThenRename": `f=.tmp-$$-0f8fad5b-d9cb-469f-a165-70867728950e; printf 'line two\n' > "$f" && mv "$f" notes.md`,
	}
	for name, script := range shell {
		t.Run(name, func(t *testing.T) {
			te := newToolEnv(t)
			run(t, te.dir, "sh", "-c", script)
			te.checkOneEdit(t, after)
		})
	}
	t.Run("PythonTempfileReplace", func(t *testing.T) {
		needTool(t, "python3")
		te := newToolEnv(t)
		run(t, te.dir, "python3", "-c", `
import os, tempfile
fd, tmp = tempfile.mkstemp(dir=".")
os.write(fd, b"line two\n")
os.fsync(fd)
os.close(fd)
os.replace(tmp, "notes.md")`)
		te.checkOneEdit(t, after)
	})
	pty := func(t *testing.T, dir string, keys string, cmd ...string) {
		t.Helper()
		needTool(t, "python3")
		needTool(t, cmd[0])
		script, _ := filepath.Abs("testdata/typekeys.py")
		run(t, dir, "python3", append([]string{script, "1.2", strconv.Quote(keys)}, cmd...)...)
	}
	// vim and emacs make no backup of a file under /tmp, where the test
	// mounts (vim's backupskip, emacs's backup-enable-predicate): they are
	// told to, as they would of a mount anywhere else.
	t.Run("Vim", func(t *testing.T) {
		te := newToolEnv(t)
		// Defaults as shipped (swap file, writebackup, backupcopy=auto),
		// without the user's vimrc.
		pty(t, te.dir, "Otwo\x1b\x00:wq\r", "vim", "-N", "-u", "DEFAULTS", "-i", "NONE", "--cmd", "set backupskip=", "notes.md")
		te.checkOneEdit(t, "two\n"+notesBefore)
	})
	t.Run("VimBackup", func(t *testing.T) {
		te := newToolEnv(t)
		pty(t, te.dir, "Otwo\x1b\x00:wq\r", "vim", "-N", "-u", "DEFAULTS", "-i", "NONE", "--cmd", "set backupskip= backup", "notes.md")
		te.checkOneEdit(t, "two\n"+notesBefore)
	})
	t.Run("Nano", func(t *testing.T) {
		te := newToolEnv(t)
		pty(t, te.dir, "two\r\x00\x0f\x00\r\x00\x18", "nano", "--locking", "notes.md")
		te.checkOneEdit(t, "two\n"+notesBefore)
	})
	t.Run("Emacs", func(t *testing.T) {
		te := newToolEnv(t)
		pty(t, te.dir, "two\n\x00\x18\x13\x00\x18\x03", "emacs", "-nw", "-Q", "--eval", "(setq backup-enable-predicate (lambda (f) t))", "notes.md")
		te.checkOneEdit(t, "two\n"+notesBefore)
	})
}

// A session of an agent's edits with these tools reads, in memfs log, as
// the edits alone.
func TestAgentSessionHistory(t *testing.T) {
	te := newToolEnv(t)
	run(t, te.dir, "sh", "-c", `sed -i 's/one/two/' notes.md
perl -pi -e 's/two/three/' notes.md
python3 -c 'import os,tempfile
fd,p=tempfile.mkstemp(dir=".")
os.write(fd,b"line four\n"); os.close(fd); os.replace(p,"notes.md")'
printf 'fresh\n' > todo.md.tmp && mv todo.md.tmp todo.md`)
	vs := te.e.allVersions(t, te.st.ID)
	want := "created /notes.md, modified /notes.md, modified /notes.md, modified /notes.md, created /todo.md"
	if got := ops(vs); got != want {
		t.Errorf("history:\n got %s\nwant %s", got, want)
	}
}
