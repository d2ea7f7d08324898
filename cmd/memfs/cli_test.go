package main

// Tests of the command line, run as a user would: the built binary, a real
// database file under t.TempDir(), MEMFS_DB pointing at it.

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// cliEnv runs the memfs binary against one database.
type cliEnv struct {
	db string
}

func newCLIEnv(t *testing.T) *cliEnv {
	t.Helper()
	return &cliEnv{db: filepath.Join(t.TempDir(), "memfs.db")}
}

// exec runs memfs with stdin and returns its stdout, stderr and exit code.
func (e *cliEnv) exec(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(memfsBin, args...)
	cmd.Env = append(os.Environ(), "MEMFS_DB="+e.db)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("memfs %q: %v", args, err)
		}
		code = ee.ExitCode()
	}
	return out.String(), errb.String(), code
}

// ok runs memfs and fails the test unless it exits 0.
func (e *cliEnv) ok(t *testing.T, args ...string) string {
	t.Helper()
	out, errs, code := e.exec(t, "", args...)
	if code != 0 {
		t.Fatalf("memfs %q exited %d: %s", args, code, errs)
	}
	return out
}

// obj runs memfs with --format json and decodes the one object it prints.
func (e *cliEnv) obj(t *testing.T, args ...string) map[string]any {
	t.Helper()
	out := e.ok(t, append([]string{"--format", "json"}, args...)...)
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("memfs %q printed no JSON object: %v\n%s", args, err, out)
	}
	return m
}

// list runs a listing with --format json and returns its data items.
func (e *cliEnv) list(t *testing.T, args ...string) []map[string]any {
	t.Helper()
	page := e.obj(t, args...)
	if _, ok := page["next_page"]; !ok {
		t.Errorf("memfs %q: page has no next_page: %v", args, page)
	}
	raw, ok := page["data"].([]any)
	if !ok {
		t.Fatalf("memfs %q: page has no data array: %v", args, page)
	}
	items := make([]map[string]any, len(raw))
	for i, r := range raw {
		items[i] = r.(map[string]any)
	}
	return items
}

// fails runs memfs and checks its exit code; with --format json it also
// checks the error envelope's type and returns the error object.
func (e *cliEnv) fails(t *testing.T, code int, apiType string, args ...string) map[string]any {
	t.Helper()
	out, errs, got := e.exec(t, "", append([]string{"--format", "json"}, args...)...)
	if got != code {
		t.Fatalf("memfs %q exited %d, want %d; stderr: %s", args, got, code, errs)
	}
	if out != "" {
		t.Errorf("memfs %q failed but printed on stdout: %q", args, out)
	}
	var env struct {
		Type  string         `json:"type"`
		Error map[string]any `json:"error"`
	}
	if err := json.Unmarshal([]byte(errs), &env); err != nil {
		t.Fatalf("memfs %q: stderr is not the error envelope: %v\n%s", args, err, errs)
	}
	if env.Type != "error" || env.Error["type"] != apiType || env.Error["message"] == "" {
		t.Errorf("memfs %q: error envelope %s, want type error with error.type %s and a message", args, errs, apiType)
	}
	return env.Error
}

// wantKeys checks that an API object has exactly the given fields and type.
func wantKeys(t *testing.T, obj map[string]any, typ string, keys ...string) {
	t.Helper()
	if obj["type"] != typ {
		t.Errorf("type = %v, want %s in %v", obj["type"], typ, obj)
	}
	var got []string
	for k := range obj {
		got = append(got, k)
	}
	want := append([]string{"type"}, keys...)
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("%s fields = %v, want %v", typ, got, want)
	}
}

var (
	storeKeys   = []string{"id", "name", "description", "metadata", "created_at", "updated_at", "archived_at"}
	memoryKeys  = []string{"id", "memory_store_id", "path", "content", "content_sha256", "content_size_bytes", "memory_version_id", "created_at", "updated_at"}
	versionKeys = []string{"id", "memory_id", "memory_store_id", "operation", "path", "content", "content_sha256", "content_size_bytes", "created_at", "created_by", "redacted_at", "redacted_by"}
)

func TestCLIStore(t *testing.T) {
	e := newCLIEnv(t)
	id := strings.TrimSpace(e.ok(t, "store", "create", "--name", "Research Notes", "--description", "papers"))
	if !strings.HasPrefix(id, "memstore_") {
		t.Fatalf("store create printed %q, want a memstore_ id", id)
	}

	t.Run("CreateJSON", func(t *testing.T) {
		s := e.obj(t, "store", "create", "--name", "Prefs", "--metadata", "owner=ana", "--metadata", "tags=a,b")
		wantKeys(t, s, "memory_store", storeKeys...)
		md, _ := s["metadata"].(map[string]any)
		if md["owner"] != "ana" || md["tags"] != "a,b" {
			t.Errorf("metadata = %v, want owner=ana and tags=a,b", s["metadata"])
		}
		if s["archived_at"] != nil || s["description"] != "" {
			t.Errorf("new store: archived_at %v description %q, want null and empty", s["archived_at"], s["description"])
		}
	})

	t.Run("GetByName", func(t *testing.T) {
		s := e.obj(t, "store", "get", "Research Notes")
		if s["id"] != id || s["description"] != "papers" {
			t.Errorf("store get by name = %v, want id %s with description papers", s, id)
		}
		text := e.ok(t, "store", "get", id)
		if !strings.Contains(text, "Research Notes") || !strings.Contains(text, id) {
			t.Errorf("store get text lacks the name or id:\n%s", text)
		}
	})

	t.Run("Update", func(t *testing.T) {
		e.ok(t, "store", "update", "Prefs", "--metadata", "team=x", "--description", "likes")
		s := e.obj(t, "store", "update", "Prefs", "--metadata", "owner=")
		md := s["metadata"].(map[string]any)
		if _, ok := md["owner"]; ok || md["team"] != "x" || md["tags"] != "a,b" || s["description"] != "likes" {
			t.Errorf("after removing owner: %v, want metadata {tags:a,b team:x} and description likes", s)
		}
	})

	t.Run("ListText", func(t *testing.T) {
		out := e.ok(t, "store", "list")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 3 || !strings.HasPrefix(lines[0], "ID") || !strings.Contains(lines[0], "NAME") {
			t.Fatalf("store list text = %q, want a header and two rows", out)
		}
	})

	t.Run("Archive", func(t *testing.T) {
		s := e.obj(t, "store", "archive", "Prefs", "--yes")
		if s["archived_at"] == nil {
			t.Errorf("archived store has archived_at null: %v", s)
		}
		if got := len(e.list(t, "store", "list")); got != 1 {
			t.Errorf("store list after archiving one of two: %d stores, want 1", got)
		}
		if got := len(e.list(t, "store", "list", "--include-archived")); got != 2 {
			t.Errorf("store list --include-archived: %d stores, want 2", got)
		}
		e.fails(t, exitReadOnly, "conflict_error", "memory", "create", "Prefs", "--path", "/a.md", "--content", "x")
		e.fails(t, exitReadOnly, "conflict_error", "store", "update", "Prefs", "--name", "Other")
	})

	t.Run("Delete", func(t *testing.T) {
		d := e.obj(t, "store", "delete", id, "--yes")
		wantKeys(t, d, "memory_store_deleted", "id")
		if d["id"] != id {
			t.Errorf("deleted id = %v, want %s", d["id"], id)
		}
		e.fails(t, exitNotFound, "not_found_error", "store", "get", id)
		e.fails(t, exitNotFound, "not_found_error", "store", "get", "No Such Store")
	})

	t.Run("Invalid", func(t *testing.T) {
		e.fails(t, exitInvalid, "invalid_request_error", "store", "create", "--name", "")
		e.fails(t, exitInvalid, "invalid_request_error", "store", "create", "--name", strings.Repeat("n", 256))
	})
}

func TestCLIUsage(t *testing.T) {
	e := newCLIEnv(t)
	e.ok(t, "store", "create", "--name", "S")
	for _, args := range [][]string{
		{},
		{"frobnicate"},
		{"store"},
		{"store", "frobnicate"},
		{"store", "create"},
		{"store", "create", "--name", "x", "extra"},
		{"store", "create", "--name", "x", "--metadata", "novalue"},
		{"store", "create", "--name", "x", "--metadata", "=v"},
		{"store", "update", "S"},
		{"store", "get"},
		{"memory", "create", "S", "--path", "/a"},
		{"memory", "create", "S", "--path", "/a", "--content", "x", "--file", "f"},
		{"memory", "get", "S"},
		{"memory", "list", "S", "--depth", "x"},
		{"memory", "list", "S", "--view", "wide"},
		{"memory", "update", "S", "/a"},
		{"memory", "update", "S", "/a", "--bogus"},
		{"version", "list", "S", "--operation", "renamed"},
		{"version", "prune", "S", "--keep-last", "0"},
		{"version", "prune", "S", "--older-than", "soon"},
		{"diff", "S"},
		{"diff", "S", "a", "b", "c"},
		{"session", "create"},
		{"session", "create", "--store", "S", "--instructions", "noequals"},
		{"--format", "yaml", "store", "list"},
	} {
		_, errs, code := e.exec(t, "", args...)
		if code != exitUsage {
			t.Errorf("memfs %q exited %d, want %d (usage); stderr: %s", args, code, exitUsage, errs)
			continue
		}
		if !strings.Contains(errs, "--help") {
			t.Errorf("memfs %q: usage error %q does not point to --help", args, errs)
		}
	}

	t.Run("Help", func(t *testing.T) {
		for _, args := range [][]string{{"memory", "update", "--help"}, {"memory", "update", "S", "M", "--help"}} {
			out, _, code := e.exec(t, "", args...)
			if code != 0 {
				t.Errorf("memfs %q exited %d, want 0", args, code)
			}
			for _, want := range []string{"--content", "--file", "--path", "--if-sha256", "rename"} {
				if !strings.Contains(out, want) {
					t.Errorf("memfs %q does not mention %s:\n%s", args, want, out)
				}
			}
		}
	})

	t.Run("GroupHelp", func(t *testing.T) {
		for _, args := range [][]string{{"store", "--help"}, {"help", "store"}} {
			out, _, code := e.exec(t, "", args...)
			if code != 0 || !strings.Contains(out, "archive") || !strings.Contains(out, "create") {
				t.Errorf("memfs %q exited %d and does not list the store commands:\n%s", args, code, out)
			}
		}
	})

	t.Run("DBFlagOverridesEnv", func(t *testing.T) {
		other := filepath.Join(t.TempDir(), "other.db")
		e.ok(t, "--db", other, "store", "create", "--name", "Elsewhere")
		if got := e.list(t, "--db", other, "store", "list"); len(got) != 1 || got[0]["name"] != "Elsewhere" {
			t.Errorf("store list --db %s = %v, want only Elsewhere", other, got)
		}
		if got := e.list(t, "store", "list"); len(got) != 1 || got[0]["name"] != "S" {
			t.Errorf("store list with MEMFS_DB = %v, want only S", got)
		}
	})

	t.Run("FormatAfterCommand", func(t *testing.T) {
		out := e.ok(t, "store", "get", "S", "--format", "json")
		var s map[string]any
		if err := json.Unmarshal([]byte(out), &s); err != nil || s["type"] != "memory_store" {
			t.Errorf("store get S --format json printed %q (%v), want a memory_store object", out, err)
		}
	})
}
