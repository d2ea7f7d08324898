package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memfs/memfs/versions/pgtest"
)

// memfs search through the built binary, on a SQLite file and (when
// MEMFS_TEST_POSTGRES names a server) on PostgreSQL.
func TestSearchCLI(t *testing.T) {
	t.Run("SQLite", func(t *testing.T) {
		testSearchCLI(t, &cliEnv{db: filepath.Join(t.TempDir(), "memfs.db")})
	})
	t.Run("PostgreSQL", func(t *testing.T) {
		testSearchCLI(t, &cliEnv{db: pgtest.Database(t)})
	})
}

func resultPaths(items []map[string]any) string {
	var out []string
	for _, it := range items {
		out = append(out, fmt.Sprint(it["path"]))
	}
	return strings.Join(out, " ")
}

func testSearchCLI(t *testing.T, e *cliEnv) {
	store := strings.TrimSpace(e.ok(t, "store", "create", "--name", "Notes"))
	for _, m := range []struct{ path, content string }{
		{"/hardware/laptop.md", "# Laptop\n- RAM: 32 GB\n- the laptop runs Debian\n- laptop battery lasts 9 hours\n"},
		{"/notes/shopping.md", "milk\nbread\na laptop sleeve\n"},
		{"/notes/meeting.md", "Discussed the budget.\nNobody mentioned hardware.\n"},
		{"/ja/旅行.md", "来月は京都へ行きます。\n"},
	} {
		e.ok(t, "memory", "create", store, "--path", m.path, "--content", m.content)
	}

	t.Run("Ranking", func(t *testing.T) {
		items := e.list(t, "search", store, "laptop")
		if got, want := resultPaths(items), "/hardware/laptop.md /notes/shopping.md"; got != want {
			t.Fatalf("laptop: %s, want %s", got, want)
		}
		if items[0]["score"].(float64) <= items[1]["score"].(float64) {
			t.Fatalf("scores not descending: %v", items)
		}
		text := e.ok(t, "search", store, "laptop", "--limit", "1")
		if !strings.Contains(text, "/hardware/laptop.md") || !strings.Contains(text, "  1: # Laptop") ||
			!strings.Contains(text, "  3: - the laptop runs Debian") || strings.Contains(text, "shopping") {
			t.Fatalf("text output:\n%s", text)
		}
		if got := resultPaths(e.list(t, "search", store, "京都")); got != "/ja/旅行.md" {
			t.Fatalf("京都: %s", got)
		}
		if got := resultPaths(e.list(t, "search", store, "laptop", "--path-prefix", "/notes/")); got != "/notes/shopping.md" {
			t.Fatalf("--path-prefix: %s", got)
		}
		if got := resultPaths(e.list(t, "search", store, `"laptop runs" -sleeve`)); got != "/hardware/laptop.md" {
			t.Fatalf("phrase and exclusion: %s", got)
		}
	})

	t.Run("HistoryFindsRemovedLine", func(t *testing.T) {
		e.ok(t, "memory", "update", store, "/notes/meeting.md", "--content", "Discussed the budget.\n")
		if got := e.list(t, "search", store, "nobody"); len(got) != 0 {
			t.Fatalf("the removed line matches the current memory: %v", got)
		}
		items := e.list(t, "search", store, "nobody", "--history")
		if len(items) != 1 || items[0]["path"] != "/notes/meeting.md" || items[0]["operation"] != "created" || items[0]["head"] != false {
			t.Fatalf("--history: %v", items)
		}
		by, _ := items[0]["created_by"].(map[string]any)
		lines, _ := items[0]["lines"].([]any)
		if by["type"] != "user_actor" || len(lines) != 1 || lines[0].(map[string]any)["line"] != float64(2) {
			t.Fatalf("--history result: %v", items[0])
		}
		text := e.ok(t, "search", store, "nobody", "--history")
		if !strings.Contains(text, fmt.Sprint(items[0]["memory_version_id"])) || !strings.Contains(text, "created") || !strings.Contains(text, "  2: Nobody mentioned hardware.") {
			t.Fatalf("--history text:\n%s", text)
		}
	})

	t.Run("RedactionHidesMatch", func(t *testing.T) {
		items := e.list(t, "search", store, "nobody", "--history")
		e.ok(t, "version", "redact", store, fmt.Sprint(items[0]["memory_version_id"]), "--yes")
		if got := e.list(t, "search", store, "nobody", "--history"); len(got) != 0 {
			t.Fatalf("a redacted version matches: %v", got)
		}
	})

	t.Run("HostileQuery", func(t *testing.T) {
		for _, q := range []string{`"unclosed phrase`, `-only -excluded`, `***`, strings.Repeat("x", 2000)} {
			_, errs, code := e.exec(t, "", "search", store, "--", q)
			if code != 5 || strings.Count(strings.TrimSpace(errs), "\n") != 0 || strings.Contains(strings.ToLower(errs), "sql") {
				t.Errorf("%.40q: exit %d, stderr %q", q, code, errs)
			}
		}
		e.fails(t, 5, "invalid_request_error", "search", store, `"unclosed`)
		// Operators of the backends' own syntaxes are words here, never SQL.
		for _, q := range []string{`laptop OR milk`, `NEAR(laptop milk)`, `laptop' & !milk`, `') ; DROP TABLE versions; --`, `title:laptop`, `laptop:*`} {
			if _, errs, code := e.exec(t, "", "search", store, q); code != 0 {
				t.Errorf("%q: exit %d: %s", q, code, errs)
			}
		}
		if got := resultPaths(e.list(t, "search", store, "laptop")); got != "/hardware/laptop.md /notes/shopping.md" {
			t.Fatalf("the store changed: %s", got)
		}
		_, errs, code := e.exec(t, "", "search", store)
		if code != 2 || !strings.Contains(errs, "STORE... QUERY") {
			t.Errorf("no query: exit %d: %s", code, errs)
		}
	})
}
