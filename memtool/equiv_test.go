package memtool_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/memfs/memfs/memtool"
	"github.com/memfs/memfs/versions"
)

// step is one command of the equivalence script. A mutating step that
// succeeds names the versions it must write, oldest first.
type step struct {
	in       string
	versions []want
	// Where this tool follows the tool's documentation rather than the
	// TypeScript SDK, both outputs are pinned and the reason given.
	diverges *divergence
}

type want struct {
	op   versions.Operation
	path string
}

type divergence struct{ ts, memfs, why string }

func created(p string) []want { return []want{{versions.OpCreated, p}} }

func modified(ps ...string) []want { return wants(versions.OpModified, ps) }

func deleted(ps ...string) []want { return wants(versions.OpDeleted, ps) }

func wants(op versions.Operation, ps []string) []want {
	var out []want
	for _, p := range ps {
		out = append(out, want{op, p})
	}
	return out
}

// script covers every command and error case, unicode, empty files, files
// without a final newline and deep directories.
var script = []step{
	{in: cmd("command", "view", "path", "/memories")},
	{in: cmd("command", "create", "path", "/memories/notes.txt", "file_text", "Meeting notes:\n- a\n- b\n"), versions: created("/notes.txt")},
	{in: cmd("command", "create", "path", "/memories/notes.txt", "file_text", "again")},
	{in: cmd("command", "view", "path", "/memories/notes.txt")},
	{in: cmd("command", "view", "path", "/memories/notes.txt", "view_range", []int{2, 3})},
	{in: cmd("command", "view", "path", "/memories/notes.txt", "view_range", []int{2, -1})},
	{in: cmd("command", "view", "path", "/memories/notes.txt", "view_range", []int{0, 1})},
	{in: cmd("command", "view", "path", "/memories/notes.txt", "view_range", []int{3, 100})},
	{in: cmd("command", "view", "path", "/memories/notes.txt", "view_range", []int{9, 12})},
	{in: cmd("command", "view", "path", "/memories/missing.txt")},
	{in: cmd("command", "create", "path", "/memories/empty.md", "file_text", ""), versions: created("/empty.md")},
	{in: cmd("command", "view", "path", "/memories/empty.md")},
	{in: cmd("command", "create", "path", "/memories/nonl.txt", "file_text", "one\ntwo"), versions: created("/nonl.txt")},
	{in: cmd("command", "view", "path", "/memories/nonl.txt")},
	{in: cmd("command", "insert", "path", "/memories/nonl.txt", "insert_line", 2, "insert_text", "three"), versions: modified("/nonl.txt")},
	{in: cmd("command", "insert", "path", "/memories/nonl.txt", "insert_line", 0, "insert_text", "zero\n"), versions: modified("/nonl.txt")},
	{in: cmd("command", "insert", "path", "/memories/nonl.txt", "insert_line", 10, "insert_text", "ten")},
	{in: cmd("command", "insert", "path", "/memories/nonl.txt", "insert_line", -1, "insert_text", "minus")},
	{in: cmd("command", "view", "path", "/memories/nonl.txt")},
	{in: cmd("command", "insert", "path", "/memories/empty.md", "insert_line", 0, "insert_text", "first\n"), versions: modified("/empty.md")},
	{in: cmd("command", "insert", "path", "/memories/empty.md", "insert_line", 2, "insert_text", "last\n\n"), versions: modified("/empty.md")},
	{in: cmd("command", "view", "path", "/memories/empty.md")},
	{in: cmd("command", "str_replace", "path", "/memories/notes.txt", "old_str", "- a", "new_str", "- A"), versions: modified("/notes.txt")},
	{in: cmd("command", "str_replace", "path", "/memories/notes.txt", "old_str", "- z", "new_str", "- Z")},
	{in: cmd("command", "create", "path", "/memories/dup.txt", "file_text", "x = 1\ny = 2\nx = 3\nz = 4\nx = 5\n"), versions: created("/dup.txt")},
	{in: cmd("command", "str_replace", "path", "/memories/dup.txt", "old_str", "x =", "new_str", "w =")},
	{in: cmd("command", "str_replace", "path", "/memories/dup.txt", "old_str", "z = 4"), versions: modified("/dup.txt")},
	{in: cmd("command", "view", "path", "/memories/dup.txt")},
	{in: cmd("command", "str_replace", "path", "/memories/nothing.txt", "old_str", "a", "new_str", "b")},
	{in: cmd("command", "create", "path", "/memories/заметки/café ☕.md", "file_text", "Привет\nмир ✓\n日本語のメモ"), versions: created("/заметки/café ☕.md")},
	{in: cmd("command", "view", "path", "/memories/заметки/café ☕.md")},
	{in: cmd("command", "str_replace", "path", "/memories/заметки/café ☕.md", "old_str", "мир", "new_str", "world 🌍"), versions: modified("/заметки/café ☕.md")},
	{in: cmd("command", "create", "path", "/memories/a/b/c/d/e/deep.md", "file_text", "deep\n"), versions: created("/a/b/c/d/e/deep.md")},
	{in: cmd("command", "create", "path", "/memories/a/top.md", "file_text", "top"), versions: created("/a/top.md")},
	{in: cmd("command", "create", "path", "/memories/a/b/mid.md", "file_text", strings.Repeat("m", 3000)), versions: created("/a/b/mid.md")},
	{in: cmd("command", "create", "path", "/memories/.hidden", "file_text", "h"), versions: created("/.hidden")},
	{in: cmd("command", "create", "path", "/memories/node_modules/m.js", "file_text", "js"), versions: created("/node_modules/m.js")},
	{in: cmd("command", "create", "path", "/memories/Zebra.md", "file_text", strings.Repeat("z", 1024)), versions: created("/Zebra.md")},
	{in: cmd("command", "view", "path", "/memories")},
	{in: cmd("command", "view", "path", "/memories/")},
	{in: cmd("command", "view", "path", "/memories/a")},
	{in: cmd("command", "view", "path", "/memories/a/b/c/d/e/deep.md")},
	{in: cmd("command", "view", "path", "/memories/.hidden")},
	{in: cmd("command", "rename", "old_path", "/memories/notes.txt", "new_path", "/memories/archive/2024/notes.txt"), versions: modified("/archive/2024/notes.txt")},
	{in: cmd("command", "rename", "old_path", "/memories/notes.txt", "new_path", "/memories/x.txt")},
	{in: cmd("command", "rename", "old_path", "/memories/empty.md", "new_path", "/memories/nonl.txt")},
	{in: cmd("command", "rename", "old_path", "/memories/empty.md", "new_path", "/memories/a")},
	{in: cmd("command", "rename", "old_path", "/memories/a/b", "new_path", "/memories/b2"),
		versions: modified("/b2/c/d/e/deep.md", "/b2/mid.md")},
	{in: cmd("command", "rename", "old_path", "/memories", "new_path", "/memories/x")},
	{in: cmd("command", "view", "path", "/memories")},
	{in: cmd("command", "delete", "path", "/memories/dup.txt"), versions: deleted("/dup.txt")},
	{in: cmd("command", "delete", "path", "/memories/dup.txt")},
	{in: cmd("command", "delete", "path", "/memories/b2"), versions: deleted("/b2/c/d/e/deep.md", "/b2/mid.md")},
	{in: cmd("command", "delete", "path", "/memories/archive/"), versions: deleted("/archive/2024/notes.txt")},
	{in: cmd("command", "delete", "path", "/memories")},
	{in: cmd("command", "delete", "path", "/memories/")},
	{in: cmd("command", "view", "path", "/memories")},
	{in: cmd("command", "view", "path", "/memories/../etc/passwd")},
	{in: cmd("command", "create", "path", "/memories/../../outside.txt", "file_text", "x")},
	{in: cmd("command", "delete", "path", "/memories/a/../../..")},
	{in: cmd("command", "create", "path", "/etc/passwd", "file_text", "x")},
	{in: cmd("command", "view", "path", "memories")},
	{in: cmd("command", "insert", "path", "/memories/missing.txt", "insert_line", 0, "insert_text", "x")},
	{in: cmd("command", "insert", "path", "/memories/a", "insert_line", 0, "insert_text", "x")},
	{in: cmd("command", "str_replace", "path", "/memories/a", "old_str", "x", "new_str", "y")},
	{in: cmd("command", "str_replace", "path", "/memories/a/top.md", "old_str", "top", "new_str", "TOP"), versions: modified("/a/top.md")},
	{in: cmd("command", "view", "path", "/memories")},
	{in: cmd("command", "create", "path", "/memories/multi.md", "file_text", "a\nb\nc\n"), versions: created("/multi.md")},
	{in: cmd("command", "str_replace", "path", "/memories/multi.md", "old_str", "b\nc", "new_str", "B"), versions: modified("/multi.md"),
		diverges: &divergence{
			ts:    "Error: No replacement was performed, old_str `b\nc` did not appear verbatim in /memories/multi.md.",
			memfs: "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\ta\n     2\tB\n     3\t",
			why:   "the SDK looks for old_str one line at a time, so text across lines never matches although it appears verbatim"}},
	{in: cmd("command", "view", "path", "/memories/a/../../../etc/passwd", "view_range", []int{1, 2})},
	{in: cmd("command", "create", "path", "/memories/%2e%2e%2fescape.txt", "file_text", "x"),
		diverges: &divergence{
			ts:    "File created successfully at: /memories/%2e%2e%2fescape.txt",
			memfs: "Error: Path /memories/%2e%2e%2fescape.txt would escape /memories directory: it hides a traversal in percent-encoding; write the path plainly",
			why:   "percent-encoded traversal is refused (the SDK stores it as a literal name)"}},
}

// TestEquivalentToSDK runs the script through memtool and through the
// TypeScript SDK's BetaLocalFilesystemMemoryTool over a plain directory
// (with node), and requires the same results, directory sizes aside. Then
// the store's history must hold exactly the versions the script's
// mutations wrote, each attributed to the session.
func TestEquivalentToSDK(t *testing.T) {
	ref := tsReference(t)

	db := openDB(t)
	st := newStore(t, db, versions.StoreParams{Name: "equivalence"})
	sess, err := db.CreateSession(ctx, []versions.AttachmentParams{{StoreID: st.ID}})
	if err != nil {
		t.Fatal(err)
	}
	tool, err := memtool.ForSession(ctx, db, st.ID, sess.ID)
	if err != nil {
		t.Fatal(err)
	}

	var input bytes.Buffer
	for _, s := range script {
		input.WriteString(s.in + "\n")
	}
	node := exec.Command("node", filepath.Join(ref, "run.mjs"), t.TempDir())
	node.Stdin = &input
	var stderr bytes.Buffer
	node.Stderr = &stderr
	out, err := node.Output()
	if err != nil {
		t.Fatalf("node run.mjs: %v\n%s", err, stderr.String())
	}
	var theirs []memtool.Result
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var r struct {
			Content string `json:"content"`
			IsError bool   `json:"is_error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("reference output %q: %v", sc.Text(), err)
		}
		theirs = append(theirs, memtool.Result{Content: r.Content, IsError: r.IsError})
	}
	if len(theirs) != len(script) {
		t.Fatalf("the reference answered %d of %d commands\n%s", len(theirs), len(script), stderr.String())
	}

	var wantVersions []want
	for i, s := range script {
		ours := tool.RunJSON(ctx, []byte(s.in))
		if d := s.diverges; d != nil {
			if theirs[i].Content != d.ts || ours.Content != d.memfs {
				t.Errorf("step %d %s (%s):\n SDK   %q\n want  %q\n memfs %q\n want  %q", i, s.in, d.why, theirs[i].Content, d.ts, ours.Content, d.memfs)
			}
		} else if a, b := sansDirSizes(ours.Content), sansDirSizes(theirs[i].Content); a != b || ours.IsError != theirs[i].IsError {
			t.Errorf("step %d %s:\n memfs (is_error %v):\n%s\n SDK (is_error %v):\n%s", i, s.in, ours.IsError, ours.Content, theirs[i].IsError, theirs[i].Content)
		}
		if isMutation(s.in) && ours.IsError != (len(s.versions) == 0) {
			t.Errorf("step %d %s: is_error %v, which the script does not expect", i, s.in, ours.IsError)
		}
		wantVersions = append(wantVersions, s.versions...)
	}
	if len(script) < 40 {
		t.Errorf("the script has %d commands, fewer than 40", len(script))
	}

	page, err := db.ListVersions(ctx, st.ID, versions.VersionListOptions{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != len(wantVersions) {
		t.Errorf("%d versions, want %d (one per mutating command, one per memory for a directory)", len(page.Data), len(wantVersions))
	}
	for i := range min(len(page.Data), len(wantVersions)) {
		v := page.Data[len(page.Data)-1-i] // oldest first
		w := wantVersions[i]
		if v.Operation != w.op || v.Path == nil || *v.Path != w.path {
			t.Errorf("version %d: %s %v, want %s %s", i, v.Operation, deref(v.Path), w.op, w.path)
		}
		if v.CreatedBy == nil || *v.CreatedBy != versions.SessionActor(sess.ID) {
			t.Errorf("version %d (%s %s) by %+v, want session %s", i, v.Operation, deref(v.Path), v.CreatedBy, sess.ID)
		}
	}
}

func isMutation(in string) bool {
	var c memtool.Command
	json.Unmarshal([]byte(in), &c)
	return c.Command != "view"
}

func deref(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

var dirLine = regexp.MustCompile(`(?m)^[0-9.]+[BKMG]\t(.*/)$`)

// sansDirSizes drops the sizes of directories from a listing: a local
// directory's size is its file system's business, memfs lists 4.0K.
func sansDirSizes(s string) string {
	if !strings.HasPrefix(s, "Here're the files") {
		return s
	}
	lines := strings.Split(s, "\n")
	if len(lines) > 1 {
		lines[1] = "DIR" + lines[1][strings.IndexByte(lines[1], '\t'):]
	}
	return dirLine.ReplaceAllString(strings.Join(lines, "\n"), "DIR\t$1")
}

// tsReference installs the TypeScript SDK pinned by testdata/tsref's
// package-lock.json (npm ci, once per lock file, in the user's cache) and
// returns the directory holding run.mjs. Without node and npm the test is
// skipped, unless MEMFS_TEST_REQUIRE_NODE is set.
func tsReference(t *testing.T) string {
	t.Helper()
	skip := func(format string, args ...any) {
		t.Helper()
		if os.Getenv("MEMFS_TEST_REQUIRE_NODE") != "" {
			t.Fatalf(format, args...)
		}
		t.Skipf(format+" (set MEMFS_TEST_REQUIRE_NODE=1 to make this a failure)", args...)
	}
	for _, bin := range []string{"node", "npm"} {
		if _, err := exec.LookPath(bin); err != nil {
			skip("the equivalence test runs the TypeScript SDK's memory tool with node and npm: %s is not installed", bin)
		}
	}
	src := filepath.Join("testdata", "tsref")
	files := []string{"package.json", "package-lock.json", "run.mjs"}
	h := sha256.New()
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		h.Write(b)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "memfs-test", "tsref-"+hex.EncodeToString(h.Sum(nil))[:16])
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@anthropic-ai", "sdk", "package.json")); err == nil {
		return dir
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "install-")
	if err != nil {
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if tmp, err = os.MkdirTemp(filepath.Dir(dir), "install-"); err != nil {
			t.Fatal(err)
		}
	}
	defer os.RemoveAll(tmp)
	for _, f := range files {
		b, _ := os.ReadFile(filepath.Join(src, f))
		if err := os.WriteFile(filepath.Join(tmp, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	npm := exec.Command("npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund")
	npm.Dir = tmp
	if out, err := npm.CombinedOutput(); err != nil {
		skip("npm ci of the TypeScript SDK failed (is the npm registry reachable?): %v\n%s", err, out)
	}
	if err := os.Rename(tmp, dir); err != nil && !os.IsExist(err) {
		if _, serr := os.Stat(dir); serr != nil {
			t.Fatal(err)
		}
	}
	return dir
}
