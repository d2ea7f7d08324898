package memtool_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memfs/memfs/memtool"
	"github.com/memfs/memfs/versions"
)

// TestHostilePaths sends every spelling of an escape through every command:
// each is refused with the tool's sentence, and neither the store nor any
// file around the process changes.
func TestHostilePaths(t *testing.T) {
	db := openDB(t)
	st := newStore(t, db, versions.StoreParams{})
	seed(t, db, st.ID, map[string]string{"/inside.md": "inside"})
	tool := memtool.New(db, st.ID, versions.UserActor("test"))

	// A directory that looks like what a local handler would serve, with
	// a secret next to it: nothing may reach either.
	work := t.TempDir()
	if err := os.MkdirAll(filepath.Join(work, "memories"), 0o755); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(work, "secret.txt")
	if err := os.WriteFile(secret, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(work)

	escape := func(p string) string { return "Error: Path " + p + " would escape /memories directory" }
	tests := []struct{ path, want string }{
		{"/memories/../secret.txt", escape("/memories/../secret.txt")},
		{"/memories/../../etc/passwd", escape("/memories/../../etc/passwd")},
		{"/memories/a/../../secret.txt", escape("/memories/a/../../secret.txt")},
		{"/memories/a/../b", escape("/memories/a/../b")},
		{"/memories/..", escape("/memories/..")},
		{`/memories/..\secret.txt`, escape(`/memories/..\secret.txt`) + ": a backslash is not a path separator here; use / between directories"},
		{`/memories\..\secret.txt`, escape(`/memories\..\secret.txt`) + ": a backslash is not a path separator here; use / between directories"},
		{"/memories/%2e%2e%2fsecret.txt", escape("/memories/%2e%2e%2fsecret.txt") + ": it hides a traversal in percent-encoding; write the path plainly"},
		{"/memories/%2E%2E/secret.txt", escape("/memories/%2E%2E/secret.txt") + ": it hides a traversal in percent-encoding; write the path plainly"},
		{"/memories/%252e%252e%252fsecret.txt", escape("/memories/%252e%252e%252fsecret.txt") + ": it hides a traversal in percent-encoding; write the path plainly"},
		{"/memories/..%2fsecret.txt", escape("/memories/..%2fsecret.txt") + ": it hides a traversal in percent-encoding; write the path plainly"},
		{"/etc/passwd", "Error: Path must start with /memories, got: /etc/passwd"},
		{"/memoriesX/a", "Error: Path must start with /memories, got: /memoriesX/a"},
		{"memories/a", "Error: Path must start with /memories, got: memories/a"},
		{filepath.Join(work, "secret.txt"), "Error: Path must start with /memories, got: " + filepath.Join(work, "secret.txt")},
		{"/memories/a\x00b", `Error: The path "/memories/a\x00b" contains the control character U+0000 at byte 11: memory paths are printable text; remove it`},
		{"/memories/a\nb", `Error: The path "/memories/a\nb" contains the control character U+000A at byte 11: memory paths are printable text; remove it`},
		{"/memories/a\x1b[2Jb", `Error: The path "/memories/a\x1b[2Jb" contains the control character U+001B at byte 11: memory paths are printable text; remove it`},
		{"/memories/%00", escape("/memories/%00") + ": it hides a traversal in percent-encoding; write the path plainly"},
		{"/memories/a//b", `Error: The path /memories/a//b is not a valid memory path: path "/memories/a//b" has an empty segment (//): remove it`},
		{"/memories/./a", `Error: The path /memories/./a is not a valid memory path: path "/memories/./a" has a "." segment: write the path without . and .. segments`},
		{"/memories/a\u200bb", `Error: The path "/memories/a\u200bb" is not a valid memory path: path "/memories/a\u200bb" contains the control or format character U+200B at byte 11: remove it`},
		{"/memories/" + strings.Repeat("x", 256), "Error: The path /memories/" + strings.Repeat("x", 256) + " is not a valid memory path: path segment \"" + strings.Repeat("x", 40) + "\"… is 256 bytes, over the limit of 255 bytes per name: use a shorter name"},
	}
	for _, tc := range tests {
		p := tc.path
		ins := map[string]string{
			"view":        cmd("command", "view", "path", p),
			"create":      cmd("command", "create", "path", p, "file_text", "x"),
			"str_replace": cmd("command", "str_replace", "path", p, "old_str", "inside", "new_str", "x"),
			"insert":      cmd("command", "insert", "path", p, "insert_line", 0, "insert_text", "x"),
			"delete":      cmd("command", "delete", "path", p),
			"rename from": cmd("command", "rename", "old_path", p, "new_path", "/memories/moved.md"),
			"rename to":   cmd("command", "rename", "old_path", "/memories/inside.md", "new_path", p),
		}
		for what, in := range ins {
			got := run(t, tool, in)
			if !got.IsError || got.Content != tc.want {
				t.Errorf("%s %q:\n got (is_error %v) %q\nwant %q", what, p, got.IsError, got.Content, tc.want)
			}
		}
	}

	page, err := db.ListMemories(ctx, st.ID, versions.MemoryListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 1 || page.Data[0].Memory.Path != "/inside.md" {
		t.Errorf("the store changed: %+v", page.Data)
	}
	if got := content(t, db, st.ID, "/inside.md"); got != "inside" {
		t.Errorf("/inside.md = %q", got)
	}
	if b, err := os.ReadFile(secret); err != nil || string(b) != "secret" {
		t.Errorf("secret.txt: %q, %v", b, err)
	}
	var files []string
	filepath.Walk(work, func(p string, _ os.FileInfo, _ error) error { files = append(files, p); return nil })
	if len(files) != 3 {
		t.Errorf("the working directory changed: %v", files)
	}

	// Names that merely look odd are memories like any other.
	for _, p := range []string{"/memories/50%.md", "/memories/..hidden", "/memories/a..b", "/memories/etc/passwd"} {
		if got := run(t, tool, cmd("command", "create", "path", p, "file_text", "ok")); got.IsError {
			t.Errorf("create %s: %s", p, got.Content)
		}
	}
	if got := content(t, db, st.ID, "/etc/passwd"); got != "ok" {
		t.Errorf("/memories/etc/passwd is the memory /etc/passwd: %q", got)
	}
}
