package main

// A newcomer's second pass: each test is one thing a new user met, run
// through the built binary.

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// `printf 'bad \xff' > f` in a mount fails in the shell (the write is
// refused with EILSEQ), and the refusal names the store and the path.
func TestSecondPassInvalidUTF8Write(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounts need root here")
	}
	env := newE2EEnv(t)
	_, slug := env.createStore(t, "Notes")
	mnt := mountDir(t)
	d := env.startMount(t, mnt, "--store", "Notes")
	dir := filepath.Join(mnt, slug)
	sh(t, dir, "printf 'good\\n' > kept.md")

	for _, name := range []string{"bin.md", "kept.md"} {
		out, err := shErr(dir, "bash -c \"printf 'bad \\377' > "+name+"\"")
		if err == nil {
			t.Errorf("printf 'bad \\xff' > %s exited 0 (%q), want a failed write", name, out)
		} else if !strings.Contains(out, "Invalid or incomplete multibyte") {
			t.Errorf("printf 'bad \\xff' > %s: %q, want the shell to report EILSEQ", name, out)
		}
	}
	env.settle(t)
	// The new file is not kept (its only save was refused). `>` emptied
	// the existing one before the write, as on any file system; none of
	// the refused bytes are stored.
	if _, err := os.Stat(filepath.Join(dir, "bin.md")); !os.IsNotExist(err) {
		t.Errorf("bin.md after its refused write: %v, want it gone", err)
	}
	if got := env.cli(t, "memory", "get", "Notes", "/kept.md"); strings.Contains(got, "bad") {
		t.Errorf("kept.md after a refused write holds %q", got)
	}
	log := d.stderr.String()
	if !strings.Contains(log, "op=write store=notes path=/bin.md errno=EILSEQ") {
		t.Errorf("the daemon's log does not name the refused write, its store and path:\n%s", log)
	}
	// Sentences in values stay readable: the handler quotes them.
	if strings.Contains(log, `\\x`) || !strings.Contains(log, "(the previous version stays the head); write") {
		t.Errorf("the daemon's log escapes punctuation in quoted values:\n%s", log)
	}
	// The mount root's refusals say so.
	if _, err := shErr(mnt, "echo x > x.md"); err == nil {
		t.Errorf("a write in the mount root succeeded")
	}
	if log := d.stderr.String(); !strings.Contains(log, `store="(the mount root)" path=/x.md errno=EROFS`) {
		t.Errorf("a refusal in the mount root does not say so:\n%s", log)
	}
}

// A mistyped --db makes no database: only store create, apikey create and
// an import that succeeds make one.
func TestSecondPassNoDatabaseAtTypo(t *testing.T) {
	env := newE2EEnv(t)
	typo := filepath.Join(t.TempDir(), "typo.db")
	for _, args := range [][]string{
		{"apikey", "list"}, {"apikey", "revoke", "key_x"}, {"tool", "Notes"}, {"serve", "--listen", "127.0.0.1:0"},
		{"session", "list"}, {"store", "list"}, {"memory", "create", "Notes", "--path", "/a.md", "--content", "x"},
		{"import"},
	} {
		_, errs, code := env.run(t, append([]string{"--db", typo}, args...)...)
		if code == 0 {
			t.Errorf("memfs --db typo.db %s: exit 0", strings.Join(args, " "))
		}
		if args[0] != "import" && (code != exitNotFound || !strings.Contains(errs, "no memfs database at "+typo) || !strings.Contains(errs, "store create")) {
			t.Errorf("memfs --db typo.db %s: exit %d, %q; want %d naming the path and how to create one", strings.Join(args, " "), code, errs, exitNotFound)
		}
		if _, err := os.Stat(typo); !os.IsNotExist(err) {
			t.Fatalf("memfs --db typo.db %s left a database behind (%v)", strings.Join(args, " "), err)
		}
	}
	env.cli(t, "--db", typo, "store", "create", "--name", "Notes")
	if _, err := os.Stat(typo); err != nil {
		t.Errorf("store create made no database: %v", err)
	}
}

// serve on a database without a usable key says how to make one.
func TestSecondPassServeWithoutKeyWarns(t *testing.T) {
	env := newE2EEnv(t)
	env.createStore(t, "Notes")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, memfsBin, "serve", "--listen", "127.0.0.1:0")
	cmd.Env = env.environ()
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cancel()
	if _, ok := waitFor(func() bool { return strings.Contains(stderr.String(), "serving the memory-store API") }, time.Now(), e2eReadyTimeout); !ok {
		t.Fatalf("serve did not start:\n%s", stderr.String())
	}
	if !strings.Contains(stderr.String(), "no API key") || !strings.Contains(stderr.String(), "memfs apikey create") {
		t.Errorf("serve on a database without keys does not say so:\n%s", stderr.String())
	}
}

// A second store of a name some store has is refused (exit 4, naming the
// first one's id); --allow-duplicate makes it, and the name then fails
// with exit 5 until an id is given.
func TestSecondPassDuplicateStoreName(t *testing.T) {
	e := newCLIEnv(t)
	first := strings.TrimSpace(e.ok(t, "store", "create", "--name", "Notes"))
	_, errs, code := e.exec(t, "", "store", "create", "--name", "Notes")
	if code != exitConflict || !strings.Contains(errs, first) || !strings.Contains(errs, "--allow-duplicate") {
		t.Errorf("second store create --name Notes: exit %d, %q; want %d naming %s and --allow-duplicate", code, errs, exitConflict, first)
	}
	if got := e.list(t, "store", "list"); len(got) != 1 {
		t.Fatalf("the refused create made a store: %d stores", len(got))
	}
	other := strings.TrimSpace(e.ok(t, "store", "create", "--name", "Other"))
	if _, errs, code := e.exec(t, "", "store", "update", "Other", "--name", "Notes"); code != exitConflict || !strings.Contains(errs, first) {
		t.Errorf("store update --name to a taken name: exit %d, %q", code, errs)
	}
	// An archived store's name is taken too: names find archived stores.
	e.ok(t, "store", "archive", "Notes")
	if _, _, code := e.exec(t, "", "store", "create", "--name", "Notes"); code != exitConflict {
		t.Errorf("store create with an archived store's name: exit %d, want %d", code, exitConflict)
	}
	second := strings.TrimSpace(e.ok(t, "store", "create", "--name", "Notes", "--allow-duplicate"))
	if _, errs, code := e.exec(t, "", "store", "get", "Notes"); code != exitInvalid || !strings.Contains(errs, "memstore_ id") {
		t.Errorf("store get of a duplicate name: exit %d, %q; want %d asking for the id", code, errs, exitInvalid)
	}
	e.ok(t, "store", "get", second)
	e.ok(t, "store", "update", other, "--name", "Other") // its own name
}

// store archive asks on a terminal, as delete does; --yes and scripts
// are not asked.
func TestSecondPassArchiveConfirms(t *testing.T) {
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("needs script(1) for a terminal")
	}
	e := newCLIEnv(t)
	e.ok(t, "store", "create", "--name", "A")
	e.ok(t, "store", "create", "--name", "B")
	run := func(answer string, args ...string) string {
		cmd := exec.Command(script, "-qec", strings.Join(append([]string{memfsBin}, quoteAll(args)...), " "), "/dev/null")
		cmd.Env = append(os.Environ(), "MEMFS_DB="+e.db)
		cmd.Stdin = strings.NewReader(answer)
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	archived := func(name string) bool {
		return e.obj(t, "store", "get", name)["archived_at"] != nil
	}
	if out := run("n\n", "store", "archive", "A"); !strings.Contains(out, "[y/N]") || !strings.Contains(out, "nothing done") {
		t.Errorf("store archive on a terminal, answered n: %q", out)
	}
	if archived("A") {
		t.Fatal("a refused archive archived the store")
	}
	if out := run("", "store", "archive", "A", "--yes"); strings.Contains(out, "[y/N]") || !archived("A") {
		t.Errorf("store archive --yes: %q, archived %v", out, archived("A"))
	}
	e.ok(t, "store", "archive", "B") // no terminal: not asked
	if !archived("B") {
		t.Error("store archive from a script did not archive")
	}
}

// scripts/demo's binary says which commit it was built from.
func TestSecondPassDemoBinaryVersion(t *testing.T) {
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skip("not a git checkout")
	}
	cmd := exec.Command("../../scripts/demo", "--build-only")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("scripts/demo --build-only: %v\n%s", err, out)
	}
	got, err := exec.Command("../../bin/memfs", "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), "commit: "+strings.TrimSpace(string(head))) || strings.Contains(string(got), "devel") {
		t.Errorf("scripts/demo's bin/memfs --version:\n%s\nwant commit %s and a version", got, head)
	}
}
