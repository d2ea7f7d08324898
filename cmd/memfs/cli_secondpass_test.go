package main

// A newcomer's second pass: each test is one thing a new user met, run
// through the built binary.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
