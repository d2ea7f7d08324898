package versions_test

import (
	"errors"
	"fmt"
	"github.com/memfs/memfs/guard"
	"github.com/memfs/memfs/guard/guardtest"
	"strings"
	"testing"

	"github.com/memfs/memfs/versions"
)

func searchPaths(t *testing.T, db *versions.DB, stores []string, q string, o versions.SearchOptions) []string {
	t.Helper()
	res, err := db.Search(ctx, stores, q, o)
	if err != nil {
		t.Fatalf("Search %q: %v", q, err)
	}
	var out []string
	for _, r := range res {
		out = append(out, r.Path)
	}
	return out
}

// The engine's search: ranking, the grammar, history, and the index kept
// exact by renames, redaction, deletion, pruning and store deletion.
func TestSearch(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{})
	other := newStore(t, db, versions.StoreParams{Name: "Other"})
	stores := []string{s.ID}
	create(t, db, s.ID, "/projects/laptop.md", "# Laptop\n- RAM: 32 GB\n- disk: 1 TB\n- the laptop runs Debian\n")
	create(t, db, s.ID, "/notes/shopping.md", "buy milk\nask about a laptop bag\n")
	create(t, db, s.ID, "/notes/travel.md", "東京都に住んでいます。\n京都へ行きたい\nSeoul: 서울에서 만나요\n")
	create(t, db, s.ID, "/notes/code.md", "use snake_case names\nprefer table-driven tests\n")
	create(t, db, other.ID, "/laptop.md", "laptop laptop laptop\n")

	t.Run("Ranking", func(t *testing.T) {
		got := searchPaths(t, db, stores, "laptop", versions.SearchOptions{})
		if want := []string{"/projects/laptop.md", "/notes/shopping.md"}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("laptop: got %v, want %v", got, want)
		}
		res, err := db.Search(ctx, stores, "laptop", versions.SearchOptions{})
		ok(t, err)
		if res[0].Score <= res[1].Score || len(res[0].Lines) != 2 || res[0].Lines[0].Number != 1 || res[0].Lines[1].Number != 4 {
			t.Fatalf("results %+v", res)
		}
	})
	t.Run("Grammar", func(t *testing.T) {
		for _, c := range []struct{ q, want string }{
			{`"runs debian"`, "[/projects/laptop.md]"},
			{`"debian runs"`, "[]"},
			{`laptop -milk`, "[/projects/laptop.md]"},
			{`deb*`, "[/projects/laptop.md]"},
			{`snake_case`, "[/notes/code.md]"},
			{`table-driven`, "[/notes/code.md]"},
			{`LAPTOP RAM`, "[/projects/laptop.md]"},
			{`京都`, "[/notes/travel.md]"},
			{`東京`, "[/notes/travel.md]"},
			{`都`, "[/notes/travel.md]"},
			{`서울`, "[/notes/travel.md]"},
			{`大阪`, "[]"},
			{`notes shopping`, "[/notes/shopping.md]"},
			{`laptop OR milk`, "[]"},
			{`NEAR(laptop milk)`, "[]"},
		} {
			if got := searchPaths(t, db, stores, c.q, versions.SearchOptions{}); fmt.Sprint(got) != c.want && !(c.want == "[]" && got == nil) {
				t.Errorf("%s: got %v, want %s", c.q, got, c.want)
			}
		}
	})
	t.Run("Hostile", func(t *testing.T) {
		for _, q := range []string{`"unclosed`, `-milk`, `!!!`, `*`, ``, strings.Repeat("a ", 600), "\xff\xfe"} {
			_, err := db.Search(ctx, stores, q, versions.SearchOptions{})
			var e *versions.Error
			if !errors.As(err, &e) || e.Code != versions.CodeInvalid || strings.Contains(e.Message, "\n") {
				t.Errorf("%q: %v", q, err)
			}
		}
		for _, q := range []string{`a" OR "b`, `') ; DROP TABLE versions; --`, `content:laptop`, `^laptop`, `"laptop"*`, `la*p`, `NOT laptop`} {
			if _, err := db.Search(ctx, stores, q, versions.SearchOptions{}); err != nil {
				t.Errorf("%q: %v", q, err)
			}
		}
	})
	t.Run("PathPrefix", func(t *testing.T) {
		got := searchPaths(t, db, stores, "laptop", versions.SearchOptions{PathPrefix: "/notes/"})
		if fmt.Sprint(got) != "[/notes/shopping.md]" {
			t.Fatalf("got %v", got)
		}
		got = searchPaths(t, db, []string{s.ID, other.ID}, "laptop", versions.SearchOptions{Limit: 1})
		if fmt.Sprint(got) != "[/laptop.md]" {
			t.Fatalf("two stores, limit 1: got %v", got)
		}
	})
	t.Run("HistoryRedactPrune", func(t *testing.T) {
		m := create(t, db, s.ID, "/prefs.md", "editor: vim\ncolour: teal\n")
		c := "editor: emacs\n"
		m2 := update(t, db, s.ID, m.ID, versions.MemoryUpdate{Content: &c})
		if got := searchPaths(t, db, stores, "teal", versions.SearchOptions{}); got != nil {
			t.Fatalf("teal in heads: %v", got)
		}
		res, err := db.Search(ctx, stores, "teal", versions.SearchOptions{History: true})
		ok(t, err)
		if len(res) != 1 || res[0].VersionID != m.VersionID || res[0].Head || res[0].CreatedBy == nil || res[0].Lines[0].Number != 2 {
			t.Fatalf("history teal: %+v", res)
		}
		p := "/renamed/prefs.md"
		update(t, db, s.ID, m.ID, versions.MemoryUpdate{Path: &p})
		if got := searchPaths(t, db, stores, "emacs", versions.SearchOptions{}); fmt.Sprint(got) != "[/renamed/prefs.md]" {
			t.Fatalf("after rename: %v", got)
		}
		if got := searchPaths(t, db, stores, "renamed", versions.SearchOptions{}); fmt.Sprint(got) != "[/renamed/prefs.md]" {
			t.Fatalf("new path: %v", got)
		}
		if got := searchPaths(t, db, stores, "emacs", versions.SearchOptions{History: true}); fmt.Sprint(got) != "[/renamed/prefs.md /prefs.md]" {
			t.Fatalf("history emacs: %v", got)
		}
		_, err = db.RedactVersion(ctx, s.ID, m.VersionID, me)
		ok(t, err)
		if got := searchPaths(t, db, stores, "teal", versions.SearchOptions{History: true}); got != nil {
			t.Fatalf("redacted version still matches: %v", got)
		}
		// m2 holds the content the rename references: redacting it copies
		// the content into the rename, which stays findable.
		_, err = db.RedactVersion(ctx, s.ID, m2.VersionID, me)
		ok(t, err)
		if got := searchPaths(t, db, stores, "emacs", versions.SearchOptions{}); fmt.Sprint(got) != "[/renamed/prefs.md]" {
			t.Fatalf("after redacting the referenced version: %v", got)
		}
		ok(t, db.DeleteMemory(ctx, s.ID, m.ID, versions.MemoryDelete{}, me))
		if got := searchPaths(t, db, stores, "emacs", versions.SearchOptions{}); got != nil {
			t.Fatalf("deleted memory matches: %v", got)
		}
		if got := searchPaths(t, db, stores, "emacs", versions.SearchOptions{History: true}); fmt.Sprint(got) != "[/renamed/prefs.md]" {
			t.Fatalf("history after delete: %v", got)
		}
		if _, err := db.PruneVersions(ctx, s.ID, 0, 1); err != nil {
			t.Fatal(err)
		}
		if got := searchPaths(t, db, stores, "emacs", versions.SearchOptions{History: true}); got != nil {
			t.Fatalf("pruned versions match: %v", got)
		}
		if got := searchPaths(t, db, stores, "laptop", versions.SearchOptions{}); len(got) != 2 {
			t.Fatalf("prune lost heads: %v", got)
		}
	})
	t.Run("StoreDeleted", func(t *testing.T) {
		ok(t, db.DeleteStore(ctx, other.ID))
		_, err := db.Search(ctx, []string{other.ID}, "laptop", versions.SearchOptions{})
		var e *versions.Error
		if !errors.As(err, &e) || e.Code != versions.CodeNotFound {
			t.Fatalf("deleted store: %v", err)
		}
	})
}

// TestSearchHistoryWithholdsCredentials: a version holding a credential
// that a warning store kept, cleaned from the head but not redacted, is no
// history result, as the history views withhold it; once the credential
// is gone from the head, a search of the head finds the clean memory.
func TestSearchHistoryWithholdsCredentials(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{Guard: guard.Warn})
	c := guardtest.One("github")
	m := create(t, db, s.ID, "/deploy.md", "deploy notes\n"+c.Text)
	update(t, db, s.ID, m.ID, versions.MemoryUpdate{Content: ptr("deploy notes\ntoken in the vault\n")})
	res, err := db.Search(ctx, []string{s.ID}, "deploy", versions.SearchOptions{History: true})
	ok(t, err)
	if len(res) != 1 || !res[0].Head {
		t.Fatalf("history results %+v: want only the clean head, not the version holding a credential", res)
	}
	off := guard.Off
	if _, err := db.UpdateStore(ctx, s.ID, versions.StoreUpdate{Guard: &off}); err != nil {
		t.Fatal(err)
	}
	res, err = db.Search(ctx, []string{s.ID}, "deploy", versions.SearchOptions{History: true})
	ok(t, err)
	if len(res) != 2 {
		t.Fatalf("with the guard off, history results %+v: want both versions", res)
	}
}
