package fusefs

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/guard"
	"github.com/memfs/memfs/versions"
)

// Every read-only directory of a mount (the root, the history tree, a
// store as of a time) refuses every change of a name in it, and of its own
// or its files' attributes, with EROFS, and logs the refusal with the
// path the mount shows and the tree's reason.
func TestReadOnlyTreesRefuseEveryChange(t *testing.T) {
	e := newEnv(t)
	st := e.store(t, "Notes")
	m, dir := e.mountStore(t, st, Options{})
	slug := m.sess.Resources[0].Slug
	write(t, filepath.Join(dir, "a.md"), "one\n")
	write(t, filepath.Join(dir, "sub", "b.md"), "two\n")
	e.settle()
	entries, _ := histEntries(t, filepath.Join(m.root, ".history", slug, "a.md"))
	if len(entries) != 1 {
		t.Fatalf("history of a.md lists %v, want one version", entries)
	}
	entryID, _ := entryVersionID(entries[0])
	// A moment after both saves: the engine's clock runs in microseconds.
	time.Sleep(10 * time.Millisecond)
	asof := slug + "@" + time.Now().UTC().Format(time.RFC3339Nano)

	// place is a read-only directory, shown in the log as shown, with a
	// directory and a file in it where it has them. A history entry is
	// shown by its version's id.
	type place struct {
		dir, shown, why         string
		subdir, file, fileShown string
	}
	hist := filepath.Join(".history", slug)
	places := []place{
		{dir: "", shown: "/", why: whyRootReadOnly, subdir: slug},
		{dir: ".history", shown: ".history", why: whyHistoryReadOnly, subdir: slug},
		{dir: hist, shown: ".history/" + slug + "/", why: whyHistoryReadOnly, subdir: "sub"},
		{dir: filepath.Join(hist, "a.md"), shown: ".history/" + slug + "/a.md", why: whyHistoryReadOnly,
			file: entries[0], fileShown: ".history/" + slug + "/a.md/" + entryID},
		{dir: filepath.Join(".history", asof), shown: ".history/" + asof, why: whyHistoryReadOnly, subdir: "sub", file: "a.md"},
		{dir: filepath.Join(".history", asof, "sub"), shown: ".history/" + asof + "/sub", why: whyHistoryReadOnly, file: "b.md"},
	}

	// has: the log line holds key=value, quoted or not.
	has := func(line, key, value string) bool {
		return strings.Contains(line, fmt.Sprintf("%s=%q", key, value)) || strings.Contains(line+" ", key+"="+value+" ")
	}
	var root string // the mount of the place checked
	logged := func(op, shown, why string) bool {
		for _, line := range strings.Split(e.log.String(), "\n") {
			if strings.Contains(line, "msg=refused") && has(line, "mount", root) && has(line, "op", op) && has(line, "path", guard.NameShown(shown)) &&
				has(line, "errno", "EROFS") && strings.Contains(line, why) {
				return true
			}
		}
		return false
	}
	check := func(what string, err error, op, shown, why string) {
		t.Helper()
		wantErrno(t, what, err, syscall.EROFS)
		if !logged(op, shown, why) {
			t.Errorf("%s: no refusal logged as op=%s path=%s with the reason %q", what, op, shown, why)
		}
	}

	// Each place has a mount of its own: a mount logs the first ten
	// refusals of a kind in full, then counts them.
	for _, p := range places {
		root = e.mount(t, Options{}, versions.AttachmentParams{StoreID: st.ID}).root
		pdir := filepath.Join(root, p.dir)
		if _, err := os.Stat(pdir); err != nil {
			t.Fatalf("stat %s: %v", pdir, err)
		}
		at := func(name string) string { return filepath.Join(pdir, name) }
		in := func(name string) string { return path.Join(p.shown, name) }
		check(p.shown+": create", os.WriteFile(at("new.md"), []byte("x"), 0o644), "create", in("new.md"), p.why)
		check(p.shown+": mkdir", os.Mkdir(at("d"), 0o755), "mkdir", in("d"), p.why)
		check(p.shown+": mknod", unix.Mknod(at("fifo"), syscall.S_IFIFO|0o644, 0), "mknod", in("fifo"), p.why)
		check(p.shown+": symlink", os.Symlink("a.md", at("sym")), "symlink", in("sym"), p.why)
		check(p.shown+": link", os.Link(filepath.Join(root, slug, "a.md"), at("linked")), "link", in("linked"), p.why)
		check(p.shown+": chmod", os.Chmod(pdir, 0o700), "setattr", p.shown, p.why)
		check(p.shown+": setxattr", unix.Setxattr(pdir, "user.x", []byte("x"), 0), "setxattr", p.shown, p.why)
		check(p.shown+": removexattr", unix.Removexattr(pdir, "user.x"), "removexattr", p.shown, p.why)
		if p.subdir != "" {
			check(p.shown+": rmdir", unix.Rmdir(at(p.subdir)), "rmdir", in(p.subdir), p.why)
			check(p.shown+": rename a directory", unix.Rename(at(p.subdir), at("moved")), "rename", in(p.subdir), p.why)
		}
		if p.file == "" {
			continue
		}
		f, shown := at(p.file), in(p.file)
		check(p.shown+": unlink", unix.Unlink(f), "unlink", shown, p.why)
		check(p.shown+": rename a file", unix.Rename(f, at("moved")), "rename", shown, p.why)
		if p.fileShown != "" {
			shown = p.fileShown
		}
		check(shown+": open for writing", os.WriteFile(f, []byte("x"), 0o644), "open for writing", shown, p.why)
		check(shown+": truncate", os.Truncate(f, 0), "setattr", shown, p.why)
		check(shown+": chmod", os.Chmod(f, 0o644), "setattr", shown, p.why)
		check(shown+": setxattr", unix.Setxattr(f, "user.x", []byte("x"), 0), "setxattr", shown, p.why)
		check(shown+": removexattr", unix.Removexattr(f, "user.memfs.version"), "removexattr", shown, p.why)
		// What a read-only tree holds still reads.
		if _, err := os.ReadFile(f); err != nil {
			t.Errorf("read %s after the refusals: %v", shown, err)
		}
	}
	checkAlive(t, dir)
}
