package memtool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memfs/memfs/memtool"
	"github.com/memfs/memfs/versions"
	"github.com/memfs/memfs/versions/pgtest"
)

var ctx = context.Background()

// openDB opens a fresh database: a SQLite file, or a PostgreSQL database
// when MEMFS_TEST_POSTGRES names a server.
func openDB(t *testing.T) *versions.DB {
	t.Helper()
	dsn := filepath.Join(t.TempDir(), "memfs.db")
	if pgtest.Server() != "" {
		dsn = pgtest.Database(t)
	}
	db, err := versions.Open(dsn, versions.Options{})
	if err != nil {
		t.Fatalf("open database: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func newStore(t *testing.T, db *versions.DB, p versions.StoreParams) *versions.Store {
	t.Helper()
	if p.Name == "" {
		p.Name = t.Name()
	}
	st, err := db.CreateStore(ctx, p)
	if err != nil {
		t.Fatalf("create store: %v", err)
	}
	return st
}

// seed writes memories straight through the engine (paths without /memories).
func seed(t *testing.T, db *versions.DB, storeID string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		if _, err := db.CreateMemory(ctx, storeID, p, c, versions.UserActor("test")); err != nil {
			t.Fatalf("seed %s: %v", p, err)
		}
	}
}

func run(t *testing.T, tool *memtool.Tool, input string) memtool.Result {
	t.Helper()
	return tool.RunJSON(ctx, []byte(input))
}

func cmd(fields ...any) string {
	m := map[string]any{}
	for i := 0; i+1 < len(fields); i += 2 {
		m[fields[i].(string)] = fields[i+1]
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func content(t *testing.T, db *versions.DB, storeID, path string) string {
	t.Helper()
	m, err := db.GetMemory(ctx, storeID, path)
	if err != nil {
		t.Fatalf("get %s: %v", path, err)
	}
	return *m.Content
}

const dirHeader = "Here're the files and directories up to 2 levels deep in %s, excluding hidden items and node_modules:\n"

// TestCommands runs every command and error case of the tool's
// documentation with its exact result string.
func TestCommands(t *testing.T) {
	db := openDB(t)
	big := strings.Repeat("x", 1536)
	tests := []struct {
		name    string
		files   map[string]string
		in      string
		want    string
		wantErr bool
		after   map[string]string // contents expected afterwards
		gone    []string          // store paths that must not exist afterwards
	}{
		{name: "view empty store", in: cmd("command", "view", "path", "/memories"),
			want: fmt.Sprintf(dirHeader, "/memories") + "4.0K\t/memories"},
		{name: "view directory as in the documentation",
			files: map[string]string{"/customer_service_guidelines.xml": big, "/refund_policies.xml": strings.Repeat("y", 2000)},
			in:    cmd("command", "view", "path", "/memories"),
			want:  fmt.Sprintf(dirHeader, "/memories") + "4.0K\t/memories\n1.5K\t/memories/customer_service_guidelines.xml\n2.0K\t/memories/refund_policies.xml"},
		{name: "view directory two levels, hidden and node_modules skipped",
			files: map[string]string{"/a/b/c/deep.md": "deep", "/a/one.md": "1", "/.hidden": "h", "/a/.secret/x": "s",
				"/node_modules/pkg/index.js": "js", "/z.md": "", "/a/b/two.md": strings.Repeat("2", 2048)},
			in: cmd("command", "view", "path", "/memories"),
			want: fmt.Sprintf(dirHeader, "/memories") + "4.0K\t/memories\n4.0K\t/memories/a/\n4.0K\t/memories/a/b/\n" +
				"1B\t/memories/a/one.md\n0B\t/memories/z.md"},
		{name: "view subdirectory",
			files: map[string]string{"/a/b/c/deep.md": "deep", "/a/b/two.md": strings.Repeat("2", 2048)},
			in:    cmd("command", "view", "path", "/memories/a"),
			want:  fmt.Sprintf(dirHeader, "/memories/a") + "4.0K\t/memories/a\n4.0K\t/memories/a/b/\n4.0K\t/memories/a/b/c/\n2K\t/memories/a/b/two.md"},
		{name: "view file",
			files: map[string]string{"/notes.txt": "Hello World\nThis is line two\n"},
			in:    cmd("command", "view", "path", "/memories/notes.txt"),
			want:  "Here's the content of /memories/notes.txt with line numbers:\n     1\tHello World\n     2\tThis is line two\n     3\t"},
		{name: "view file without trailing newline",
			files: map[string]string{"/n.txt": "a\nb"},
			in:    cmd("command", "view", "path", "/memories/n.txt"),
			want:  "Here's the content of /memories/n.txt with line numbers:\n     1\ta\n     2\tb"},
		{name: "view empty file",
			files: map[string]string{"/empty": ""},
			in:    cmd("command", "view", "path", "/memories/empty"),
			want:  "Here's the content of /memories/empty with line numbers:\n     1\t"},
		{name: "view_range",
			files: map[string]string{"/l.txt": numbered(12)},
			in:    cmd("command", "view", "path", "/memories/l.txt", "view_range", []int{10, 11}),
			want:  "Here's the content of /memories/l.txt with line numbers:\n    10\tline 10\n    11\tline 11"},
		{name: "view_range to the end",
			files: map[string]string{"/l.txt": numbered(12)},
			in:    cmd("command", "view", "path", "/memories/l.txt", "view_range", []int{11, -1}),
			want:  "Here's the content of /memories/l.txt with line numbers:\n    11\tline 11\n    12\tline 12\n    13\t"},
		{name: "view missing", in: cmd("command", "view", "path", "/memories/nope.txt"),
			want: "Error: The path /memories/nope.txt does not exist. Please provide a valid path.", wantErr: true},
		{name: "view too many lines",
			files: map[string]string{"/huge.txt": strings.Repeat("\n", 999999)},
			in:    cmd("command", "view", "path", "/memories/huge.txt"),
			want:  "Error: File /memories/huge.txt exceeds maximum line limit of 999,999 lines.", wantErr: true},
		{name: "create", in: cmd("command", "create", "path", "/memories/notes.txt", "file_text", "Meeting notes:\n- Discussed project timeline\n- Next steps defined\n"),
			want:  "File created successfully at: /memories/notes.txt",
			after: map[string]string{"/notes.txt": "Meeting notes:\n- Discussed project timeline\n- Next steps defined\n"}},
		{name: "create in new directories", in: cmd("command", "create", "path", "/memories/a/b/c.md", "file_text", ""),
			want: "File created successfully at: /memories/a/b/c.md", after: map[string]string{"/a/b/c.md": ""}},
		{name: "create existing", files: map[string]string{"/notes.txt": "old"},
			in:   cmd("command", "create", "path", "/memories/notes.txt", "file_text", "new"),
			want: "Error: File /memories/notes.txt already exists", wantErr: true, after: map[string]string{"/notes.txt": "old"}},
		{name: "create onto a directory", files: map[string]string{"/d/x": "x"},
			in:   cmd("command", "create", "path", "/memories/d", "file_text", "new"),
			want: "Error: File /memories/d already exists", wantErr: true},
		{name: "create below a file", files: map[string]string{"/f": "x"},
			in:   cmd("command", "create", "path", "/memories/f/g", "file_text", "new"),
			want: "Error: Cannot create /memories/f/g: /memories/f is a file, not a directory", wantErr: true},
		{name: "str_replace", files: map[string]string{"/preferences.txt": "Name: Ada\nFavorite color: blue\nFood: pasta\n"},
			in: cmd("command", "str_replace", "path", "/memories/preferences.txt", "old_str", "Favorite color: blue", "new_str", "Favorite color: green"),
			want: "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n" +
				"     1\tName: Ada\n     2\tFavorite color: green\n     3\tFood: pasta\n     4\t",
			after: map[string]string{"/preferences.txt": "Name: Ada\nFavorite color: green\nFood: pasta\n"}},
		{name: "str_replace snippet is two lines either side", files: map[string]string{"/l.txt": numbered(9)},
			in: cmd("command", "str_replace", "path", "/memories/l.txt", "old_str", "line 5", "new_str", "five"),
			want: "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n" +
				"     3\tline 3\n     4\tline 4\n     5\tfive\n     6\tline 6\n     7\tline 7"},
		{name: "str_replace without new_str deletes old_str", files: map[string]string{"/p.txt": "keep DROP keep"},
			in:    cmd("command", "str_replace", "path", "/memories/p.txt", "old_str", " DROP"),
			want:  "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\tkeep keep",
			after: map[string]string{"/p.txt": "keep keep"}},
		{name: "str_replace across lines", files: map[string]string{"/p.txt": "a\nb\nc\n"},
			in:    cmd("command", "str_replace", "path", "/memories/p.txt", "old_str", "b\nc", "new_str", "B"),
			want:  "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\ta\n     2\tB\n     3\t",
			after: map[string]string{"/p.txt": "a\nB\n"}},
		{name: "str_replace no match", files: map[string]string{"/p.txt": "Favorite color: blue\n"},
			in:   cmd("command", "str_replace", "path", "/memories/p.txt", "old_str", "Favorite color: red", "new_str", "x"),
			want: "Error: No replacement was performed, old_str `Favorite color: red` did not appear verbatim in /memories/p.txt.", wantErr: true},
		{name: "str_replace multiple", files: map[string]string{"/p.txt": "todo: a\ndone\ntodo: b\ntodo: c\n"},
			in:   cmd("command", "str_replace", "path", "/memories/p.txt", "old_str", "todo", "new_str", "x"),
			want: "Error: No replacement was performed. Multiple occurrences of old_str `todo` in lines: 1, 3, 4. Please ensure it is unique", wantErr: true,
			after: map[string]string{"/p.txt": "todo: a\ndone\ntodo: b\ntodo: c\n"}},
		{name: "str_replace twice on one line", files: map[string]string{"/p.txt": "x\nab ab\n"},
			in:   cmd("command", "str_replace", "path", "/memories/p.txt", "old_str", "ab", "new_str", "x"),
			want: "Error: No replacement was performed. Multiple occurrences of old_str `ab` in lines: 2. Please ensure it is unique", wantErr: true},
		{name: "str_replace missing", in: cmd("command", "str_replace", "path", "/memories/nope", "old_str", "a", "new_str", "b"),
			want: "Error: The path /memories/nope does not exist. Please provide a valid path.", wantErr: true},
		{name: "str_replace on a directory", files: map[string]string{"/d/x": "a"},
			in:   cmd("command", "str_replace", "path", "/memories/d", "old_str", "a", "new_str", "b"),
			want: "Error: The path /memories/d is not a file.", wantErr: true},
		{name: "str_replace on the root", in: cmd("command", "str_replace", "path", "/memories", "old_str", "a", "new_str", "b"),
			want: "Error: The path /memories is not a file.", wantErr: true},
		{name: "insert", files: map[string]string{"/todo.txt": "- one\n- two\n- three\n"},
			in:    cmd("command", "insert", "path", "/memories/todo.txt", "insert_line", 2, "insert_text", "- Review memory tool documentation\n"),
			want:  "The file /memories/todo.txt has been edited.",
			after: map[string]string{"/todo.txt": "- one\n- two\n- Review memory tool documentation\n- three\n"}},
		{name: "insert at 0", files: map[string]string{"/todo.txt": "- one\n"},
			in:    cmd("command", "insert", "path", "/memories/todo.txt", "insert_line", 0, "insert_text", "# TODO\n"),
			want:  "The file /memories/todo.txt has been edited.",
			after: map[string]string{"/todo.txt": "# TODO\n- one\n"}},
		{name: "insert at the end", files: map[string]string{"/t.txt": "a\nb"},
			in:    cmd("command", "insert", "path", "/memories/t.txt", "insert_line", 2, "insert_text", "c"),
			want:  "The file /memories/t.txt has been edited.",
			after: map[string]string{"/t.txt": "a\nb\nc"}},
		{name: "insert past the end", files: map[string]string{"/t.txt": "a\nb\n"},
			in:   cmd("command", "insert", "path", "/memories/t.txt", "insert_line", 4, "insert_text", "x"),
			want: "Error: Invalid `insert_line` parameter: 4. It should be within the range of lines of the file: [0, 3]", wantErr: true,
			after: map[string]string{"/t.txt": "a\nb\n"}},
		{name: "insert negative", files: map[string]string{"/t.txt": "a"},
			in:   cmd("command", "insert", "path", "/memories/t.txt", "insert_line", -1, "insert_text", "x"),
			want: "Error: Invalid `insert_line` parameter: -1. It should be within the range of lines of the file: [0, 1]", wantErr: true},
		{name: "insert missing", in: cmd("command", "insert", "path", "/memories/nope", "insert_line", 0, "insert_text", "x"),
			want: "Error: The path /memories/nope does not exist. Please provide a valid path.", wantErr: true},
		{name: "insert on a directory", files: map[string]string{"/d/x": "a"},
			in:   cmd("command", "insert", "path", "/memories/d", "insert_line", 0, "insert_text", "x"),
			want: "Error: The path /memories/d is not a file.", wantErr: true},
		{name: "delete file", files: map[string]string{"/old_file.txt": "x", "/keep": "k"},
			in: cmd("command", "delete", "path", "/memories/old_file.txt"), want: "Successfully deleted /memories/old_file.txt",
			gone: []string{"/old_file.txt"}, after: map[string]string{"/keep": "k"}},
		{name: "delete directory recursively", files: map[string]string{"/d/a": "a", "/d/e/f/g": "g", "/dx": "x"},
			in: cmd("command", "delete", "path", "/memories/d"), want: "Successfully deleted /memories/d",
			gone: []string{"/d", "/d/a", "/d/e/f/g"}, after: map[string]string{"/dx": "x"}},
		{name: "delete missing", in: cmd("command", "delete", "path", "/memories/nope"),
			want: "Error: The path /memories/nope does not exist", wantErr: true},
		{name: "delete /memories", files: map[string]string{"/a": "a"}, in: cmd("command", "delete", "path", "/memories"),
			want: "Error: Cannot delete the /memories directory itself", wantErr: true, after: map[string]string{"/a": "a"}},
		{name: "delete /memories/", in: cmd("command", "delete", "path", "/memories/"),
			want: "Error: Cannot delete the /memories directory itself", wantErr: true},
		{name: "rename", files: map[string]string{"/draft.txt": "d"},
			in:   cmd("command", "rename", "old_path", "/memories/draft.txt", "new_path", "/memories/final.txt"),
			want: "Successfully renamed /memories/draft.txt to /memories/final.txt", gone: []string{"/draft.txt"}, after: map[string]string{"/final.txt": "d"}},
		{name: "rename into new directories", files: map[string]string{"/draft.txt": "d"},
			in:   cmd("command", "rename", "old_path", "/memories/draft.txt", "new_path", "/memories/x/y/final.txt"),
			want: "Successfully renamed /memories/draft.txt to /memories/x/y/final.txt", after: map[string]string{"/x/y/final.txt": "d"}},
		{name: "rename directory", files: map[string]string{"/d/a": "a", "/d/b/c": "c"},
			in:   cmd("command", "rename", "old_path", "/memories/d", "new_path", "/memories/e"),
			want: "Successfully renamed /memories/d to /memories/e", gone: []string{"/d/a", "/d/b/c"}, after: map[string]string{"/e/a": "a", "/e/b/c": "c"}},
		{name: "rename missing", in: cmd("command", "rename", "old_path", "/memories/nope", "new_path", "/memories/x"),
			want: "Error: The path /memories/nope does not exist", wantErr: true},
		{name: "rename onto existing", files: map[string]string{"/a": "a", "/b": "b"},
			in:   cmd("command", "rename", "old_path", "/memories/a", "new_path", "/memories/b"),
			want: "Error: The destination /memories/b already exists", wantErr: true, after: map[string]string{"/a": "a", "/b": "b"}},
		{name: "rename onto existing directory", files: map[string]string{"/a": "a", "/d/x": "x"},
			in:   cmd("command", "rename", "old_path", "/memories/a", "new_path", "/memories/d"),
			want: "Error: The destination /memories/d already exists", wantErr: true},
		{name: "rename /memories", in: cmd("command", "rename", "old_path", "/memories", "new_path", "/memories/x"),
			want: "Error: Cannot rename the /memories directory itself", wantErr: true},
		{name: "rename into itself", files: map[string]string{"/d/a": "a"},
			in:   cmd("command", "rename", "old_path", "/memories/d", "new_path", "/memories/d/e"),
			want: "Error: Cannot rename /memories/d to /memories/d/e: a directory cannot move into itself", wantErr: true},
		{name: "unknown command", in: cmd("command", "chmod", "path", "/memories/a"),
			want: "Error: Unknown command chmod: the memory tool knows view, create, str_replace, insert, delete and rename", wantErr: true},
		{name: "bad input", in: `{"command":"view","path":"/memories","view_range":"1-2"}`,
			want: "Error: The memory tool's input is not a valid command: `view_range` must be a list of two line numbers, not a string", wantErr: true},
		{name: "unicode", in: cmd("command", "create", "path", "/memories/заметки/café ☕.md", "file_text", "Привет, мир\n"),
			want: "File created successfully at: /memories/заметки/café ☕.md", after: map[string]string{"/заметки/café ☕.md": "Привет, мир\n"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := newStore(t, db, versions.StoreParams{Name: tc.name, MaxMemoryBytes: 2 << 20})
			seed(t, db, st.ID, tc.files)
			tool := memtool.New(db, st.ID, versions.UserActor("test"))
			got := run(t, tool, tc.in)
			if got.Content != tc.want || got.IsError != tc.wantErr {
				t.Errorf("%s\n got (is_error %v):\n%s\nwant (is_error %v):\n%s", tc.in, got.IsError, got.Content, tc.wantErr, tc.want)
			}
			for p, want := range tc.after {
				if got := content(t, db, st.ID, p); got != want {
					t.Errorf("afterwards %s = %q, want %q", p, got, want)
				}
			}
			for _, p := range tc.gone {
				if _, err := db.Stat(ctx, st.ID, p); versions.ErrorCode(err) != versions.CodeNotFound {
					t.Errorf("afterwards %s: Stat error %v, want not found", p, err)
				}
			}
		})
	}
}

// numbered is n lines "line 1"… each ending in a newline.
func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}
