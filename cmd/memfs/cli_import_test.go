package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memfs/memfs/versions/pgtest"
)

// movingStore makes a store with the CLI and returns its id and export.
func movingStore(t *testing.T, src *cliEnv) (id, export string) {
	t.Helper()
	id = strings.TrimSpace(src.ok(t, "store", "create", "--name", "Moving", "--max-memories", "5", "--metadata", "k=v"))
	mem := strings.TrimSpace(src.ok(t, "memory", "create", "Moving", "--path", "/a.md", "--content", "one"))
	src.ok(t, "memory", "update", "Moving", mem, "--content", "two")
	src.ok(t, "memory", "create", "Moving", "--path", "/dir/b.md", "--content", "b")
	return id, src.ok(t, "export", "Moving")
}

// memfs export, then memfs import into another database, gives back the
// same export; importing it again is refused whole.
func TestCLIImport(t *testing.T) {
	src := newCLIEnv(t)
	id, want := movingStore(t, src)
	file := filepath.Join(t.TempDir(), "moving.jsonl")
	if err := os.WriteFile(file, []byte(want), 0o600); err != nil {
		t.Fatal(err)
	}

	t.Run("FromFile", func(t *testing.T) {
		dst := newCLIEnv(t)
		out, errs, code := dst.exec(t, "", "import", file)
		if code != 0 || strings.TrimSpace(out) != id {
			t.Fatalf("import exited %d, printed %q (want the store id %s); stderr: %s", code, out, id, errs)
		}
		if !strings.Contains(errs, "2 memories") || !strings.Contains(errs, "3 versions") {
			t.Errorf("stderr %q does not say what was imported", errs)
		}
		if got := dst.ok(t, "export", id); got != want {
			t.Errorf("export after import differs:\nbefore:\n%s\nafter:\n%s", want, got)
		}
		// Again: the store is there; nothing changes.
		e := dst.fails(t, exitConflict, "conflict_error", "import", file)
		if msg, _ := e["message"].(string); !strings.Contains(msg, id) || !strings.Contains(msg, "nothing was imported") {
			t.Errorf("clash message %q does not name the store and say nothing was imported", msg)
		}
		if got := dst.ok(t, "export", id); got != want {
			t.Errorf("a refused import changed the store")
		}
	})
	t.Run("FromStdin", func(t *testing.T) {
		dst := newCLIEnv(t)
		out, errs, code := dst.exec(t, want, "--format", "json", "import")
		if code != 0 {
			t.Fatalf("import from stdin exited %d: %s", code, errs)
		}
		var page struct {
			Data []map[string]any `json:"data"`
		}
		if err := json.Unmarshal([]byte(out), &page); err != nil || len(page.Data) != 1 || page.Data[0]["id"] != id {
			t.Fatalf("--format json printed %q (%v), want a page holding store %s", out, err, id)
		}
	})
	t.Run("NotAnExport", func(t *testing.T) {
		dst := newCLIEnv(t)
		out, errs, code := dst.exec(t, "hello\n", "import")
		if code != exitInvalid || out != "" || !strings.Contains(errs, "line 1") {
			t.Errorf("import of a non-export exited %d, stdout %q, stderr %q; want exit %d naming line 1", code, out, errs, exitInvalid)
		}
		if _, errs, code := dst.exec(t, "", "import", filepath.Join(t.TempDir(), "missing.jsonl")); code != exitInvalid || !strings.Contains(errs, "missing.jsonl") {
			t.Errorf("import of a missing file exited %d: %s", code, errs)
		}
	})
}

// SQLite → PostgreSQL → SQLite through the command line gives back the
// same export.
func TestPostgresCLIImport(t *testing.T) {
	if pgtest.Server() == "" {
		t.Skipf("needs a PostgreSQL server: set %s (scripts/pg start prints a URL)", pgtest.Env)
	}
	src := newCLIEnv(t)
	id, want := movingStore(t, src)
	pg := pgtest.Database(t)
	if _, errs, code := src.exec(t, want, "--db", pg, "import"); code != 0 {
		t.Fatalf("import into PostgreSQL exited %d: %s", code, errs)
	}
	viaPG := src.ok(t, "--db", pg, "export", id)
	if viaPG != want {
		t.Fatalf("PostgreSQL's export differs:\nSQLite:\n%s\nPostgreSQL:\n%s", want, viaPG)
	}
	back := newCLIEnv(t)
	if _, errs, code := back.exec(t, viaPG, "import"); code != 0 {
		t.Fatalf("import back into SQLite exited %d: %s", code, errs)
	}
	if got := back.ok(t, "export", id); got != want {
		t.Errorf("SQLite → PostgreSQL → SQLite changed the export:\nbefore:\n%s\nafter:\n%s", want, got)
	}
}
