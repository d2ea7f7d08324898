package main

// Hostile input through the command line: each row is a command, the input
// and the exit code, error type and message it must get (the CLI's exit
// codes; the hosted API's limits). The mount's side of the same table is
// fusefs/hostile_test.go.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memfs/memfs/versions"
)

type cliRow struct {
	name    string
	args    []string // after "memfs"; STORE stands for the store's id
	code    int
	apiType string // "" for success and usage errors
	msg     string // the text-mode message must contain this
}

func TestCLIHostileInput(t *testing.T) {
	e := newCLIEnv(t)
	store := strings.TrimSpace(e.ok(t, "store", "create", "--name", "hostile"))
	e.ok(t, "memory", "create", store, "--path", "/notes/todo.md", "--content", "first")
	e.ok(t, "memory", "update", store, "/notes/todo.md", "--content", "second")
	archived := strings.TrimSpace(e.ok(t, "store", "create", "--name", "archived"))
	e.ok(t, "store", "archive", archived, "--yes")
	full := fillStore(t, e.db)

	head := e.obj(t, "memory", "get", store, "/notes/todo.md")
	headVersion, _ := head["memory_version_id"].(string)
	dir := t.TempDir()
	badFile := filepath.Join(dir, "bad.txt")
	if err := os.WriteFile(badFile, []byte("latin-1 caf\xe9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	deep21 := "/" + strings.Repeat("d/", 20) + "f.md"
	long1025 := "/" + strings.Repeat(strings.Repeat("p", 200)+"/", 5) + strings.Repeat("q", 19)

	rows := []cliRow{
		{"Name256", []string{"memory", "create", store, "--path", "/" + strings.Repeat("n", 256), "--content", "x"}, exitInvalid, "invalid_request_error", "255"},
		{"Depth21", []string{"memory", "create", store, "--path", deep21, "--content", "x"}, exitInvalid, "invalid_request_error", "20"},
		{"Path1025Bytes", []string{"memory", "create", store, "--path", long1025, "--content", "x"}, exitInvalid, "invalid_request_error", "1024"},
		{"ControlChar", []string{"memory", "create", store, "--path", "/bell\x07.md", "--content", "x"}, exitInvalid, "invalid_request_error", "control"},
		{"Newline", []string{"memory", "create", store, "--path", "/new\nline.md", "--content", "x"}, exitInvalid, "invalid_request_error", "control"},
		{"InvalidUTF8Path", []string{"memory", "create", store, "--path", "/bad\xff.md", "--content", "x"}, exitInvalid, "invalid_request_error", "UTF-8"},
		{"LineSeparator", []string{"memory", "create", store, "--path", "/ls\u2028.md", "--content", "x"}, exitInvalid, "invalid_request_error", "U+2028"},
		{"NotNFC", []string{"memory", "create", store, "--path", "/cafe\u0301.md", "--content", "x"}, exitInvalid, "invalid_request_error", "NFC"},
		{"DotDotSegment", []string{"memory", "create", store, "--path", "/notes/../escape.md", "--content", "x"}, exitInvalid, "invalid_request_error", ".."},
		{"Relative", []string{"memory", "create", store, "--path", "notes.md", "--content", "x"}, exitInvalid, "invalid_request_error", "/"},
		{"TrailingSlash", []string{"memory", "create", store, "--path", "/notes/", "--content", "x"}, exitInvalid, "invalid_request_error", "/"},
		{"PercentDotDot", []string{"memory", "create", store, "--path", "/%2e%2e%2f", "--content", "plain name"}, exitOK, "", ""},
		{"DotDotBackslash", []string{"memory", "create", store, "--path", `/..\`, "--content", "plain name"}, exitOK, "", ""},
		{"LeadingDash", []string{"memory", "create", store, "--path", "/-rf", "--content", "plain name"}, exitOK, "", ""},
		{"ContentOverLimit", []string{"memory", "create", store, "--path", "/big.md", "--content", strings.Repeat("z", versions.DefaultMaxMemoryBytes+1)}, exitInvalid, "invalid_request_error", "102400"},
		{"ContentNotUTF8", []string{"memory", "create", store, "--path", "/latin1.md", "--file", badFile}, exitInvalid, "invalid_request_error", "UTF-8"},
		{"Overlap", []string{"memory", "create", store, "--path", "/notes/todo.md/child", "--content", "x"}, exitConflict, "memory_path_conflict_error", "/notes/todo.md"},
		{"Exists", []string{"memory", "create", store, "--path", "/notes/todo.md", "--content", "x"}, exitConflict, "memory_path_conflict_error", "/notes/todo.md"},
		{"WrongPrecondition", []string{"memory", "update", store, "/notes/todo.md", "--content", "x", "--if-sha256", strings.Repeat("0", 64)}, exitConflict, "memory_precondition_failed_error", "sha"},
		{"DeleteWrongPrecondition", []string{"memory", "delete", store, "/notes/todo.md", "--if-sha256", strings.Repeat("0", 64)}, exitConflict, "memory_precondition_failed_error", "sha"},
		{"RedactHead", []string{"version", "redact", store, headVersion, "--yes"}, exitConflict, "conflict_error", "current content"},
		{"MissingMemory", []string{"memory", "get", store, "/no/such.md"}, exitNotFound, "not_found_error", "/no/such.md"},
		{"MissingStore", []string{"memory", "get", "memstore_nosuchstore", "/x"}, exitNotFound, "not_found_error", "memstore_nosuchstore"},
		{"BadDepth", []string{"memory", "list", store, "--depth", "2"}, exitInvalid, "invalid_request_error", "depth"},
		{"BadPrefix", []string{"memory", "list", store, "--path-prefix", "/notes"}, exitInvalid, "invalid_request_error", "/"},
		{"StoreNameControlChar", []string{"store", "create", "--name", "evil\x1b[2Jname"}, exitInvalid, "invalid_request_error", "control"},
		{"StoreName256", []string{"store", "create", "--name", strings.Repeat("s", 256)}, exitInvalid, "invalid_request_error", "255"},
		{"ArchivedStore", []string{"memory", "create", archived, "--path", "/x.md", "--content", "x"}, exitReadOnly, "conflict_error", "archived"},
		{"Memory2001", []string{"memory", "create", full, "--path", "/one-too-many.md", "--content", "x"}, exitInvalid, "invalid_request_error", "2000"},
		{"FullStoreStillEditable", []string{"memory", "update", full, "/m/0000.md", "--content", "edited"}, exitOK, "", ""},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			out, errs, code := e.exec(t, "", row.args...)
			if code != row.code {
				t.Fatalf("memfs %.120q exited %d, want %d; stderr: %s", row.args, code, row.code, errs)
			}
			if row.code == exitOK {
				if row.args[1] == "create" {
					path := row.args[4]
					if got := e.ok(t, "memory", "get", store, path); got != "plain name" {
						t.Fatalf("memory get %q = %q: a hostile-looking name must round-trip as a plain name", path, got)
					}
				}
				return
			}
			if out != "" {
				t.Errorf("a failing command printed on stdout: %.200q", out)
			}
			if !strings.HasPrefix(errs, "memfs: ") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
				t.Errorf("stderr %q is not one line starting with \"memfs: \"", errs)
			}
			if !strings.Contains(errs, row.msg) {
				t.Errorf("message %q does not mention %q", errs, row.msg)
			}
			e.fails(t, row.code, row.apiType, row.args...)
		})
	}
	t.Run("NothingWritten", func(t *testing.T) {
		items := e.list(t, "memory", "list", store)
		var paths []string
		for _, it := range items {
			paths = append(paths, fmt.Sprint(it["path"]))
		}
		if got, want := strings.Join(paths, " "), `/%2e%2e%2f /-rf /..\ /notes/todo.md`; got != want {
			t.Fatalf("memories after the hostile commands: %s, want %s", got, want)
		}
		if got := e.ok(t, "memory", "get", store, "/notes/todo.md"); got != "second" {
			t.Fatalf("/notes/todo.md = %q after refused updates, want %q", got, "second")
		}
	})
}

// fillStore creates a store with the default limit of 2,000 memories and
// fills it through the engine (much faster than 2,000 CLI runs).
func fillStore(t *testing.T, dbPath string) string {
	t.Helper()
	ctx := context.Background()
	db, err := versions.Open(dbPath, versions.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st, err := db.CreateStore(ctx, versions.StoreParams{Name: "full"})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < versions.DefaultMaxMemories; i++ {
		if _, err := db.CreateMemory(ctx, st.ID, fmt.Sprintf("/m/%04d.md", i), "x", versions.UserActor("t")); err != nil {
			t.Fatalf("filling the store, memory %d: %v", i, err)
		}
	}
	return st.ID
}
