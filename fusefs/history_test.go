package fusefs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/versions"
)

// histEntries lists a path's directory in the history tree: entry names
// (oldest first, as ls sorts them) and subdirectories.
func histEntries(t *testing.T, dir string) (entries, dirs []string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("list %s: %v", dir, err)
	}
	for _, e := range ents {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		} else {
			entries = append(entries, e.Name())
		}
	}
	return entries, dirs
}

// opsAndContents renders entries as "created:one" (a deletion or a
// redacted version reads empty: "deleted:").
func opsAndContents(t *testing.T, dir string, entries []string) []string {
	t.Helper()
	var out []string
	for _, name := range entries {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("read %s: %v", name, err)
		}
		parts := strings.SplitN(name, "-", 3)
		if len(parts) != 3 || !strings.HasPrefix(parts[2], "memver_") {
			t.Fatalf("entry name %q is not TIME-OPERATION-VERSION", name)
		}
		out = append(out, parts[1]+":"+string(b))
	}
	return out
}

// histXattr is an entry's attribute, or the error reading it.
func histXattr(t *testing.T, path, attr string) string {
	t.Helper()
	buf := make([]byte, 1024)
	n, err := unix.Getxattr(path, attr, buf)
	if err != nil {
		return "error: " + err.Error()
	}
	return string(buf[:n])
}

// The history tree through a real mount: what each path held, restoring
// with cp, diff, a redaction, every write route refused, nothing of it in
// the store's directory, and a save from another handle shown within the
// visibility bound.
func TestHistoryTree(t *testing.T) {
	e := newEnv(t)
	st := e.store(t, "Notes")
	m, dir := e.mountStore(t, st, Options{})
	slug := m.sess.Resources[0].Slug
	hist := filepath.Join(m.root, ".history", slug)

	save := func(name, content string) {
		t.Helper()
		write(t, filepath.Join(dir, name), content)
		e.settle()
	}
	save("todo.md", "one\n")
	save("todo.md", "two\n")
	save("todo.md", "three\n")
	if err := os.Rename(filepath.Join(dir, "todo.md"), filepath.Join(dir, "done.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "done.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	save("sub/live.md", "first\n")
	save("sub/live.md", "second\n")

	root, err := os.ReadDir(m.root)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range root {
		names = append(names, d.Name())
	}
	if !slices.Contains(names, ".history") || !slices.Contains(names, slug) {
		t.Fatalf("mount root lists %v, want the store and .history", names)
	}
	if ents, dirs := histEntries(t, hist); len(ents) != 0 || !slices.Equal(dirs, []string{"done.md", "sub", "todo.md"}) {
		t.Errorf(".history/%s lists %v and %v, want the directories done.md sub todo.md", slug, ents, dirs)
	}

	todo, _ := histEntries(t, filepath.Join(hist, "todo.md"))
	if got, want := opsAndContents(t, filepath.Join(hist, "todo.md"), todo), []string{"created:one\n", "modified:two\n", "modified:three\n"}; !slices.Equal(got, want) {
		t.Errorf("history of todo.md = %q, want %q", got, want)
	}
	done, _ := histEntries(t, filepath.Join(hist, "done.md"))
	if got, want := opsAndContents(t, filepath.Join(hist, "done.md"), done), []string{"modified:three\n", "deleted:"}; !slices.Equal(got, want) {
		t.Fatalf("history of done.md = %q, want %q", got, want)
	}
	deleted := filepath.Join(hist, "done.md", done[1])
	if got := histXattr(t, deleted, "user.memfs.empty"); !strings.HasPrefix(got, "deleted") {
		t.Errorf("user.memfs.empty of a deletion = %q", got)
	}
	first := filepath.Join(hist, "todo.md", todo[0])
	vs := e.allVersions(t, st.ID)
	created := vs[len(vs)-1]
	for attr, want := range map[string]string{
		"user.memfs.version":   created.ID,
		"user.memfs.id":        created.MemoryID,
		"user.memfs.operation": "created",
		"user.memfs.sha256":    *created.ContentSHA256,
		"user.memfs.writer":    created.CreatedBy.Type + ":" + created.CreatedBy.ID,
		"user.memfs.path":      "/todo.md",
	} {
		if got := histXattr(t, first, attr); got != want {
			t.Errorf("%s = %q, want %q", attr, got, want)
		}
	}
	if got := histXattr(t, first, "user.memfs.empty"); !strings.Contains(got, "no data") {
		t.Errorf("user.memfs.empty of a version with content = %q, want none", got)
	}
	fi, err := os.Stat(first)
	if err != nil {
		t.Fatal(err)
	}
	if !fi.ModTime().Equal(created.CreatedAt) || fi.Mode().Perm() != 0o444 || fi.Size() != 4 {
		t.Errorf("stat of the first entry: mtime %v (want %v), mode %v, size %d", fi.ModTime(), created.CreatedAt, fi.Mode(), fi.Size())
	}

	// cp restores: one new version of the live file, through the normal
	// save path.
	live := filepath.Join(dir, "sub", "live.md")
	liveHist := filepath.Join(hist, "sub", "live.md")
	lv, _ := histEntries(t, liveHist)
	if len(lv) != 2 {
		t.Fatalf("history of sub/live.md: %v", lv)
	}
	if out, err := exec.Command("diff", filepath.Join(liveHist, lv[0]), live).CombinedOutput(); err == nil || !strings.Contains(string(out), "> second") {
		t.Errorf("diff of the first version and the live file: %v\n%s", err, out)
	}
	before := len(e.allVersions(t, st.ID))
	if out, err := exec.Command("cp", filepath.Join(liveHist, lv[0]), live).CombinedOutput(); err != nil {
		t.Fatalf("cp from the history: %v\n%s", err, out)
	}
	after := e.allVersions(t, st.ID)
	if len(after) != before+1 || after[0].Operation != versions.OpModified || *after[0].Path != "/sub/live.md" {
		t.Errorf("cp made %d versions, newest %s %v, want one modified /sub/live.md", len(after)-before, after[0].Operation, after[0].Path)
	}
	if got := e.memory(t, st.ID, "/sub/live.md"); *got.Content != "first\n" {
		t.Errorf("restored content %q", *got.Content)
	}
	if out, err := exec.Command("diff", filepath.Join(liveHist, lv[0]), live).CombinedOutput(); err != nil {
		t.Errorf("diff after the restore: %v\n%s", err, out)
	}
	if err := eventually(visibilityLimit, func() error {
		if lv, _ := histEntries(t, liveHist); len(lv) != 3 {
			return fmt.Errorf("history of sub/live.md after the restore: %v", lv)
		}
		return nil
	}); err != nil {
		t.Error(err)
	}

	// A redaction elsewhere empties the entry, pages the kernel kept
	// included.
	second := filepath.Join(hist, "todo.md", todo[1])
	if b, err := os.ReadFile(second); err != nil || string(b) != "two\n" {
		t.Fatalf("read %s: %q, %v", second, b, err)
	}
	other, err := versions.Open(filepath.Join(e.dir, "memfs.db"), versions.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.RedactVersion(context.Background(), st.ID, strings.SplitN(todo[1], "-", 3)[2], versions.UserActor("cli")); err != nil {
		t.Fatal(err)
	}
	if err := eventually(visibilityLimit, func() error {
		b, err := os.ReadFile(second)
		if err != nil || len(b) != 0 {
			return fmt.Errorf("redacted entry reads %q, %v", b, err)
		}
		if got := histXattr(t, second, "user.memfs.empty"); !strings.HasPrefix(got, "redacted") {
			return fmt.Errorf("user.memfs.empty of the redacted entry = %q", got)
		}
		return nil
	}); err != nil {
		t.Error(err)
	}
	if now, _ := histEntries(t, filepath.Join(hist, "todo.md")); !slices.Equal(now, todo) {
		t.Errorf("entries after the redaction %v, want %v", now, todo)
	}

	// A save from another handle (the CLI's), at a path the kernel was
	// told is absent, shows within the bound.
	newHist := filepath.Join(hist, "from-cli.md")
	if _, err := os.Stat(newHist); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("stat of a path never saved: %v", err)
	}
	if _, err := other.CreateMemory(context.Background(), st.ID, "/from-cli.md", "cli\n", versions.UserActor("cli")); err != nil {
		t.Fatal(err)
	}
	if err := eventually(visibilityLimit, func() error {
		ents, err := os.ReadDir(newHist)
		if err != nil || len(ents) != 1 {
			return fmt.Errorf("history of a path saved from the CLI: %v, %v", ents, err)
		}
		return nil
	}); err != nil {
		t.Error(err)
	}

	// Read-only by every route.
	entry := filepath.Join(hist, "todo.md", todo[0])
	hdir := filepath.Join(hist, "todo.md")
	routes := map[string]error{
		"write":       os.WriteFile(entry, []byte("x"), 0o644),
		"truncate":    os.Truncate(entry, 0),
		"create":      os.WriteFile(filepath.Join(hdir, "new"), []byte("x"), 0o644),
		"mkdir":       os.Mkdir(filepath.Join(hdir, "d"), 0o755),
		"mkdir-top":   os.Mkdir(filepath.Join(m.root, ".history", "d"), 0o755),
		"unlink":      os.Remove(entry),
		"rmdir":       os.Remove(hdir),
		"rename":      os.Rename(entry, filepath.Join(hdir, "moved")),
		"rename-out":  os.Rename(entry, filepath.Join(dir, "moved")),
		"link":        os.Link(entry, filepath.Join(hdir, "linked")),
		"link-in":     os.Link(live, filepath.Join(hdir, "linked")),
		"symlink":     os.Symlink("x", filepath.Join(hdir, "sym")),
		"chmod":       os.Chmod(entry, 0o644),
		"chmod-dir":   os.Chmod(hdir, 0o755),
		"utimes":      os.Chtimes(entry, fi.ModTime(), fi.ModTime()),
		"setxattr":    unix.Setxattr(entry, "user.x", []byte("x"), 0),
		"removexattr": unix.Removexattr(entry, "user.memfs.version"),
		"dir-xattr":   unix.Setxattr(hdir, "user.x", []byte("x"), 0),
	}
	for route, err := range routes {
		wantErrno(t, route, err, syscall.EROFS)
	}

	// Nothing of the history is in the store's directory.
	if out, err := exec.Command("grep", "-r", "three", dir).CombinedOutput(); err == nil {
		t.Errorf("grep -r found history in the store's directory:\n%s", out)
	}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if strings.Contains(p, ".history") || strings.Contains(p, "memver_") {
			t.Errorf("the store's directory holds %s", p)
		}
		return nil
	})
	checkAlive(t, dir)
}

// An attached read_only store's history is readable, and restoring from it
// is refused as any write; HideHistory leaves the tree out.
func TestHistoryReadOnlyAndHidden(t *testing.T) {
	e := newEnv(t)
	st := e.store(t, "Shared")
	ctx := context.Background()
	mem, err := e.db.CreateMemory(ctx, st.ID, "/a.md", "old\n", versions.UserActor("t"))
	if err != nil {
		t.Fatal(err)
	}
	newContent := "new\n"
	if _, err := e.db.UpdateMemory(ctx, st.ID, mem.ID, versions.MemoryUpdate{Content: &newContent}, versions.UserActor("t")); err != nil {
		t.Fatal(err)
	}
	m := e.mount(t, Options{}, versions.AttachmentParams{StoreID: st.ID, Access: versions.ReadOnly})
	hdir := filepath.Join(m.root, ".history", m.sess.Resources[0].Slug, "a.md")
	ents, _ := histEntries(t, hdir)
	if got := opsAndContents(t, hdir, ents); !slices.Equal(got, []string{"created:old\n", "modified:new\n"}) {
		t.Errorf("read_only store's history = %q", got)
	}
	out, err := exec.Command("cp", filepath.Join(hdir, ents[0]), filepath.Join(m.dir(0), "a.md")).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "Read-only file system") {
		t.Errorf("cp into a read_only store: %v\n%s", err, out)
	}

	hidden := e.mount(t, Options{HideHistory: true}, versions.AttachmentParams{StoreID: st.ID})
	if _, err := os.Stat(filepath.Join(hidden.root, ".history")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stat .history with the tree hidden: %v", err)
	}
	root, err := os.ReadDir(hidden.root)
	if err != nil || len(root) != 1 {
		t.Errorf("mount root with the tree hidden lists %v, %v", root, err)
	}
}
