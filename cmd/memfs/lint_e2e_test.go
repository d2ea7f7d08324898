package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/memfs/memfs/guard"
	"github.com/memfs/memfs/guard/guardtest"
	"github.com/memfs/memfs/versions"
	"github.com/memfs/memfs/versions/pgtest"
)

// loadCorpus creates a store named name holding every file below dir
// (testdata/lint/...), each at its path relative to dir.
func loadCorpus(t *testing.T, e *cliEnv, name, dir string, only func(string) bool) (string, int) {
	t.Helper()
	id := strings.TrimSpace(e.ok(t, "store", "create", "--name", name))
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel := "/" + filepath.ToSlash(strings.TrimPrefix(p, dir+string(filepath.Separator)))
		if only != nil && !only(rel) {
			return nil
		}
		e.ok(t, "memory", "create", id, "--path", rel, "--file", p)
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return id, n
}

type lintFinding struct {
	Kind    string   `json:"kind"`
	Message string   `json:"message"`
	Lines   []string `json:"lines"`
	Memory  struct {
		StoreID string `json:"memory_store_id"`
		Path    string `json:"path"`
		Line    int    `json:"line"`
	} `json:"memory"`
	Other *struct {
		StoreID string `json:"memory_store_id"`
		Path    string `json:"path"`
		Line    int    `json:"line"`
	} `json:"other"`
}

func (f lintFinding) key() string {
	k := f.Kind + " " + f.Memory.Path
	if f.Other != nil {
		k += " " + f.Other.Path
	}
	return k
}

func runLint(t *testing.T, e *cliEnv, args ...string) ([]lintFinding, int) {
	t.Helper()
	out, errs, code := e.exec(t, "", append([]string{"--format", "json", "lint"}, args...)...)
	var page struct {
		Data []lintFinding `json:"data"`
	}
	if err := json.Unmarshal([]byte(out), &page); err != nil {
		t.Fatalf("lint %v: exit %d, %v: %s %s", args, code, err, out, errs)
	}
	return page.Data, code
}

// memfs lint on the corpus of testdata/lint (profiles, preferences and
// project notes in English, Italian, Russian, Japanese, German, French,
// Chinese and Spanish): it finds what was planted there and reports no
// contradiction in the files that hold none.
func TestLintCorpus(t *testing.T) {
	for _, backend := range []string{"SQLite", "PostgreSQL"} {
		t.Run(backend, func(t *testing.T) {
			e := &cliEnv{db: filepath.Join(t.TempDir(), "memfs.db")}
			if backend == "PostgreSQL" {
				e.db = pgtest.Database(t)
			}
			_, n1 := loadCorpus(t, e, "Team Memory", filepath.Join("..", "..", "testdata", "lint", "shared"), nil)
			_, n2 := loadCorpus(t, e, "Project P1", filepath.Join("..", "..", "testdata", "lint", "project"), nil)
			found, code := runLint(t, e, "Team Memory", "Project P1")
			if code != exitFound {
				t.Fatalf("lint exited %d with %d findings, want %d", code, len(found), exitFound)
			}
			want := []string{
				"contradiction /hardware/workstation.md /p1/workstation.md",
				"contradiction /ja/プロフィール.md /ja/プロフィール.md",
				"contradiction /preferenze/strumenti.md /p1/catalogo.md",
				"diverged_copy /hardware/workstation.md /p1/workstation.md",
				"frontmatter /p1/catalogo.md",
				"frontmatter /p1/notes.md",
				"near_duplicate /notes/deploy-checklist-copy.md /notes/deploy-checklist.md",
			}
			var got []string
			for _, f := range found {
				got = append(got, f.key())
			}
			sort.Strings(got)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				var detail []string
				for _, f := range found {
					detail = append(detail, fmt.Sprintf("%s: %s %q", f.key(), f.Message, f.Lines))
				}
				t.Fatalf("findings:\n%s\nwant:\n%s\ndetail:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), strings.Join(detail, "\n"))
			}
			for _, f := range found {
				if f.Kind == "contradiction" && f.Memory.Path == "/hardware/workstation.md" &&
					fmt.Sprint(f.Lines) != "[- RAM: 16 GB - RAM: 32 GB]" {
					t.Errorf("RAM contradiction lines: %q", f.Lines)
				}
			}
			t.Logf("corpus: %d files in 2 stores, %d findings (%d planted contradictions; no contradiction in the %d other files)",
				n1+n2, len(found), 3, n1+n2-5)

			text, _, _ := e.exec(t, "", "lint", "Team Memory", "Project P1")
			if !strings.Contains(text, "contradiction  Team Memory:/hardware/workstation.md:7  Project P1:/p1/workstation.md:11") ||
				!strings.Contains(text, "    - RAM: 16 GB") {
				t.Errorf("text output:\n%s", text)
			}
		})
	}
}

// The corpus's clean files alone: no finding, exit 0.
func TestLintClean(t *testing.T) {
	e := newCLIEnv(t)
	clean := func(p string) bool {
		return !strings.Contains(p, "workstation") && !strings.Contains(p, "deploy-checklist-copy") &&
			!strings.Contains(p, "プロフィール") && !strings.Contains(p, "strumenti")
	}
	_, n := loadCorpus(t, e, "Clean", filepath.Join("..", "..", "testdata", "lint", "shared"), clean)
	found, code := runLint(t, e, "Clean")
	if code != 0 || len(found) != 0 {
		t.Fatalf("clean files: exit %d, %+v", code, found)
	}
	t.Logf("%d clean files, no finding", n)
}

// Open conflicts, files near the limit and credentials, and a conflict
// resolved with memfs version resolve.
func TestLintConflictSizeCredential(t *testing.T) {
	e := newCLIEnv(t)
	db, err := versions.Open(e.db, versions.Options{})
	if err != nil {
		t.Fatal(err)
	}
	warn := guard.Warn
	ctx := context.Background()
	s, err := db.CreateStore(ctx, versions.StoreParams{Name: "Busy", MaxMemoryBytes: 1000, Guard: warn})
	if err != nil {
		t.Fatal(err)
	}
	by := versions.UserActor("a")
	m, err := db.CreateMemory(ctx, s.ID, "/plan.md", "step one\nstep two\n", by)
	if err != nil {
		t.Fatal(err)
	}
	base := m.VersionID
	c1, c2 := "step one\nstep two\nstep three by A\n", "step one\nstep two\nstep three by B\n"
	if _, err := db.UpdateMemory(ctx, s.ID, m.ID, versions.MemoryUpdate{Content: &c1, BaseVersionID: base}, by); err != nil {
		t.Fatal(err)
	}
	conflict, err := db.UpdateMemory(ctx, s.ID, m.ID, versions.MemoryUpdate{Content: &c2, BaseVersionID: base}, versions.UserActor("b"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateMemory(ctx, s.ID, "/big.md", strings.Repeat("a long line of notes\n", 42), by); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateMemory(ctx, s.ID, "/keys.md", "# keys\n"+guardtest.One("github").Text, by); err != nil {
		t.Fatal(err)
	}
	db.Close()

	found, code := runLint(t, e, "Busy")
	kinds := map[string]int{}
	for _, f := range found {
		kinds[f.Kind]++
	}
	if code != exitFound || kinds["open_conflict"] != 1 || kinds["near_size_limit"] != 1 || kinds["credential"] == 0 {
		t.Fatalf("exit %d, %+v", code, found)
	}
	for _, f := range found {
		if f.Kind == "open_conflict" && fmt.Sprint(f.Lines) != "[step three by A]" {
			t.Errorf("conflict lines %q", f.Lines)
		}
	}
	e.ok(t, "version", "resolve", "Busy", conflict.VersionID)
	found, _ = runLint(t, e, "Busy")
	for _, f := range found {
		if f.Kind == "open_conflict" {
			t.Fatalf("resolved conflict still reported: %+v", f)
		}
	}
	if _, errs, code := e.exec(t, "", "version", "resolve", "Busy", m.VersionID); code != 5 || !strings.Contains(errs, "not a conflict") {
		t.Errorf("resolve of a version that is no conflict: exit %d %s", code, errs)
	}
}
