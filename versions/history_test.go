package versions_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memfs/memfs/versions"
)

// clock is a settable time source for retention and date filters.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Microsecond) // every event gets its own instant
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func openClocked(t *testing.T) (*versions.DB, *clock) {
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	db, err := versions.Open(testDSN(t), versions.Options{Now: c.now})
	ok(t, err)
	t.Cleanup(func() { db.Close() })
	return db, c
}

func TestS7ListVersions(t *testing.T) {
	db, clk := openClocked(t)
	s := newStore(t, db, versions.StoreParams{})
	agent := versions.SessionActor("sesn_agent")
	a, err := db.CreateMemory(ctx, s.ID, "/a", "a1", agent)
	ok(t, err)
	clk.advance(time.Hour)
	b := create(t, db, s.ID, "/b", "b1")
	_, err = db.UpdateMemory(ctx, s.ID, a.ID, versions.MemoryUpdate{Content: ptr("a2")}, agent)
	ok(t, err)
	ok(t, db.DeleteMemory(ctx, s.ID, a.ID, versions.MemoryDelete{}, me))
	update(t, db, s.ID, b.ID, versions.MemoryUpdate{Content: ptr("b2")})

	list := func(o versions.VersionListOptions) []versions.Version {
		t.Helper()
		p, err := db.ListVersions(ctx, s.ID, o)
		ok(t, err)
		return p.Data
	}
	ops := func(vs []versions.Version) string {
		var out []string
		for _, v := range vs {
			out = append(out, string(v.Operation)+":"+v.MemoryID[len(v.MemoryID)-4:])
		}
		return strings.Join(out, ",")
	}
	short := func(id string) string { return id[len(id)-4:] }

	t.Run("newest-first", func(t *testing.T) {
		got := ops(list(versions.VersionListOptions{}))
		want := "modified:" + short(b.ID) + ",deleted:" + short(a.ID) + ",modified:" + short(a.ID) + ",created:" + short(b.ID) + ",created:" + short(a.ID)
		if got != want {
			t.Fatalf("got %s, want %s", got, want)
		}
	})
	t.Run("memory-filter-after-deletion", func(t *testing.T) {
		got := list(versions.VersionListOptions{MemoryID: a.ID})
		if len(got) != 3 || got[0].Operation != versions.OpDeleted {
			t.Fatalf("got %s", ops(got))
		}
	})
	t.Run("session-filter", func(t *testing.T) {
		got := list(versions.VersionListOptions{SessionID: "sesn_agent"})
		if len(got) != 2 || *got[0].CreatedBy != agent {
			t.Fatalf("got %s", ops(got))
		}
		if got := list(versions.VersionListOptions{SessionID: "tester"}); len(got) != 0 {
			t.Fatalf("a user id matched a session filter: %s", ops(got))
		}
	})
	t.Run("operation-filter", func(t *testing.T) {
		if got := list(versions.VersionListOptions{Operation: versions.OpCreated}); len(got) != 2 {
			t.Fatalf("got %s", ops(got))
		}
		_, err := db.ListVersions(ctx, s.ID, versions.VersionListOptions{Operation: "renamed"})
		wantCode(t, err, versions.CodeInvalid)
	})
	t.Run("date-filters", func(t *testing.T) {
		all := list(versions.VersionListOptions{})
		first := all[len(all)-1].CreatedAt
		if got := list(versions.VersionListOptions{CreatedLTE: first}); len(got) != 1 {
			t.Fatalf("lte gave %s", ops(got))
		}
		if got := list(versions.VersionListOptions{CreatedGTE: first.Add(time.Minute)}); len(got) != 4 {
			t.Fatalf("gte gave %s", ops(got))
		}
	})
	t.Run("paging-and-views", func(t *testing.T) {
		var got []versions.Version
		page := ""
		for {
			p, err := db.ListVersions(ctx, s.ID, versions.VersionListOptions{Limit: 2, Page: page})
			ok(t, err)
			got = append(got, p.Data...)
			if p.NextPage == nil {
				break
			}
			page = *p.NextPage
		}
		if ops(got) != ops(list(versions.VersionListOptions{})) {
			t.Fatalf("paged %s", ops(got))
		}
		if got[0].Content != nil {
			t.Fatalf("basic view carries content")
		}
		full := list(versions.VersionListOptions{View: versions.ViewFull})
		if full[0].Content == nil || *full[0].Content != "b2" {
			t.Fatalf("full view content %v", full[0].Content)
		}
	})
	t.Run("get-version", func(t *testing.T) {
		v, err := db.GetVersion(ctx, s.ID, a.VersionID)
		ok(t, err)
		if *v.Content != "a1" || *v.Path != "/a" || v.Operation != versions.OpCreated || *v.CreatedBy != agent {
			t.Fatalf("got %+v", v)
		}
		b, err := json.Marshal(v)
		ok(t, err)
		for _, want := range []string{`"type":"memory_version"`, `"created_by":{"session_id":"sesn_agent","type":"session_actor"}`, `"redacted_at":null`} {
			if !strings.Contains(string(b), want) {
				t.Fatalf("json %s lacks %s", b, want)
			}
		}
		_, err = db.GetVersion(ctx, s.ID, "memver_nope")
		wantCode(t, err, versions.CodeNotFound)
	})
}

func TestS8Redact(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{})
	m := create(t, db, s.ID, "/secret", "password=1")
	first := m.VersionID
	m = update(t, db, s.ID, m.ID, versions.MemoryUpdate{Content: ptr("password=<removed>")})

	t.Run("head-refused", func(t *testing.T) {
		_, err := db.RedactVersion(ctx, s.ID, m.VersionID, me)
		e := wantCode(t, err, versions.CodeConflict)
		if !strings.Contains(e.Message, "new version") {
			t.Fatalf("message %q does not say what to do", e.Message)
		}
	})
	t.Run("old-version-redacted", func(t *testing.T) {
		v, err := db.RedactVersion(ctx, s.ID, first, versions.UserActor("admin"))
		ok(t, err)
		if v.Content != nil || v.Path != nil || v.ContentSHA256 != nil || v.ContentSize != nil {
			t.Fatalf("redacted version keeps data: %+v", v)
		}
		if v.RedactedAt == nil || v.RedactedBy == nil || v.RedactedBy.ID != "admin" {
			t.Fatalf("redaction not recorded: %+v", v)
		}
		if v.Operation != versions.OpCreated || v.CreatedBy == nil || *v.CreatedBy != me || v.MemoryID != m.ID {
			t.Fatalf("who/what lost: %+v", v)
		}
		got, err := db.GetVersion(ctx, s.ID, first)
		ok(t, err)
		if got.Content != nil || got.RedactedAt == nil {
			t.Fatalf("redaction not persisted")
		}
		again, err := db.RedactVersion(ctx, s.ID, first, me)
		ok(t, err)
		if !again.RedactedAt.Equal(*v.RedactedAt) || again.RedactedBy.ID != "admin" {
			t.Fatalf("second redaction changed the record")
		}
	})
	t.Run("deleted-memory-head-allowed", func(t *testing.T) {
		ok(t, db.DeleteMemory(ctx, s.ID, m.ID, versions.MemoryDelete{}, me))
		_, err := db.RedactVersion(ctx, s.ID, m.VersionID, me)
		ok(t, err)
	})
	t.Run("unknown-version", func(t *testing.T) {
		_, err := db.RedactVersion(ctx, s.ID, "memver_nope", me)
		wantCode(t, err, versions.CodeNotFound)
	})
}

func TestS9Restore(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{})
	m := create(t, db, s.ID, "/a.md", "one")
	v1 := m.VersionID
	m = update(t, db, s.ID, m.ID, versions.MemoryUpdate{Content: ptr("two")})

	t.Run("live-memory", func(t *testing.T) {
		r, err := db.Restore(ctx, s.ID, v1, "", me)
		ok(t, err)
		if r.ID != m.ID || *r.Content != "one" || r.VersionID == v1 || r.Path != "/a.md" {
			t.Fatalf("restored %+v", r)
		}
		h := history(t, db, s.ID, m.ID)
		if len(h) != 3 || h[0].Operation != versions.OpModified || *h[2].Content != "one" {
			t.Fatalf("history %d versions", len(h))
		}
	})
	t.Run("live-memory-with-path", func(t *testing.T) {
		// Another path is a copy there: the live memory stays.
		r, err := db.Restore(ctx, s.ID, m.VersionID, "/b.md", me)
		ok(t, err)
		if r.ID == m.ID || *r.Content != "two" || r.Path != "/b.md" {
			t.Fatalf("restored %+v", r)
		}
		if live, err := db.GetMemory(ctx, s.ID, m.ID); err != nil || live.Path != "/a.md" || *live.Content != "one" {
			t.Fatalf("the live memory after a restore to another path: %+v, %v", live, err)
		}
		ok(t, db.DeleteMemory(ctx, s.ID, r.ID, versions.MemoryDelete{}, me))
	})
	t.Run("deleted-memory-new-id", func(t *testing.T) {
		ok(t, db.DeleteMemory(ctx, s.ID, m.ID, versions.MemoryDelete{}, me))
		r, err := db.Restore(ctx, s.ID, v1, "", me)
		ok(t, err)
		if r.ID == m.ID || r.Path != "/a.md" || *r.Content != "one" {
			t.Fatalf("restored %+v", r)
		}
		h := history(t, db, s.ID, r.ID)
		if len(h) != 1 || h[0].Operation != versions.OpCreated {
			t.Fatalf("new memory's history %+v", h)
		}
		r2, err := db.Restore(ctx, s.ID, v1, "/elsewhere.md", me)
		ok(t, err)
		if r2.Path != "/elsewhere.md" || r2.ID == r.ID {
			t.Fatalf("restored %+v", r2)
		}
	})
	t.Run("deleted-memory-path-taken", func(t *testing.T) {
		_, err := db.Restore(ctx, s.ID, v1, "", me) // /a.md is live again
		wantCode(t, err, versions.CodePathConflict)
	})
	t.Run("deletion-version-refused", func(t *testing.T) {
		h := history(t, db, s.ID, m.ID)
		_, err := db.Restore(ctx, s.ID, h[0].ID, "", me)
		wantCode(t, err, versions.CodeInvalid)
	})
	t.Run("redacted-version-refused", func(t *testing.T) {
		x := create(t, db, s.ID, "/x", "secret")
		update(t, db, s.ID, x.ID, versions.MemoryUpdate{Content: ptr("public")})
		_, err := db.RedactVersion(ctx, s.ID, x.VersionID, me)
		ok(t, err)
		_, err = db.Restore(ctx, s.ID, x.VersionID, "", me)
		wantCode(t, err, versions.CodeConflict)
	})
	t.Run("full-store-refuses-recreation", func(t *testing.T) {
		small := newStore(t, db, versions.StoreParams{Name: "small", MaxMemories: 1})
		x := create(t, db, small.ID, "/x", "x")
		ok(t, db.DeleteMemory(ctx, small.ID, x.ID, versions.MemoryDelete{}, me))
		create(t, db, small.ID, "/y", "y")
		_, err := db.Restore(ctx, small.ID, x.VersionID, "", me)
		wantCode(t, err, versions.CodeStoreFull)
	})
}

func TestS10Prune(t *testing.T) {
	db, clk := openClocked(t)
	s := newStore(t, db, versions.StoreParams{})
	live := create(t, db, s.ID, "/live", "v0")
	for i := 1; i <= 5; i++ {
		update(t, db, s.ID, live.ID, versions.MemoryUpdate{Content: ptr(strings.Repeat("v", i))})
	}
	gone := create(t, db, s.ID, "/gone", "g0")
	update(t, db, s.ID, gone.ID, versions.MemoryUpdate{Content: ptr("g1")})
	ok(t, db.DeleteMemory(ctx, s.ID, gone.ID, versions.MemoryDelete{}, me))
	clk.advance(31 * 24 * time.Hour)
	recent := create(t, db, s.ID, "/recent", "r0")
	update(t, db, s.ID, recent.ID, versions.MemoryUpdate{Content: ptr("r1")})

	t.Run("keep-last-below-1-refused", func(t *testing.T) {
		_, err := db.PruneVersions(ctx, s.ID, 0, 0)
		wantCode(t, err, versions.CodeInvalid)
	})
	t.Run("nothing-old-enough", func(t *testing.T) {
		got, err := db.PruneVersions(ctx, s.ID, 60*24*time.Hour, 1)
		ok(t, err)
		if len(got) != 0 {
			t.Fatalf("pruned %d", len(got))
		}
	})
	t.Run("old-versions-pruned-recent-kept", func(t *testing.T) {
		got, err := db.PruneVersions(ctx, s.ID, 30*24*time.Hour, 2)
		ok(t, err)
		// live: 6 versions, keep 2 → 4; gone: 3 versions, keep 2 → 1; recent: too young.
		if len(got) != 5 {
			t.Fatalf("pruned %d versions, want 5", len(got))
		}
		if n := len(history(t, db, s.ID, live.ID)); n != 2 {
			t.Fatalf("live memory keeps %d versions", n)
		}
		if n := len(history(t, db, s.ID, recent.ID)); n != 2 {
			t.Fatalf("recent memory keeps %d versions", n)
		}
		m, err := db.GetMemory(ctx, s.ID, live.ID)
		ok(t, err)
		if *m.Content != "vvvvv" {
			t.Fatalf("live content %q", *m.Content)
		}
	})
	t.Run("head-never-pruned", func(t *testing.T) {
		_, err := db.PruneVersions(ctx, s.ID, 0, 1)
		ok(t, err)
		m, err := db.GetMemory(ctx, s.ID, recent.ID)
		ok(t, err)
		if *m.Content != "r1" {
			t.Fatalf("content %q", *m.Content)
		}
		if _, err := db.GetVersion(ctx, s.ID, m.VersionID); err != nil {
			t.Fatalf("head pruned: %v", err)
		}
		if n := countVersions(t, db, s.ID); n != 3 {
			t.Fatalf("%d versions left, want one per memory", n)
		}
	})
}

func TestS14Export(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{Name: "export me"})
	b := create(t, db, s.ID, "/b", "b")
	create(t, db, s.ID, "/a", "a")
	update(t, db, s.ID, b.ID, versions.MemoryUpdate{Content: ptr("b2")})
	gone := create(t, db, s.ID, "/gone", "g")
	ok(t, db.DeleteMemory(ctx, s.ID, gone.ID, versions.MemoryDelete{}, me))

	var lines []string
	err := db.Export(ctx, s.ID, func(v any) error {
		b, err := json.Marshal(v)
		lines = append(lines, string(b))
		return err
	})
	ok(t, err)
	t.Run("order-and-content", func(t *testing.T) {
		want := []string{
			`"type":"memory_store"`,
			`"path":"/a"`, `"path":"/b"`,
			`"operation":"created"`, `"operation":"created"`, `"operation":"modified"`, `"operation":"created"`, `"operation":"deleted"`,
		}
		if len(lines) != len(want) {
			t.Fatalf("%d lines: %v", len(lines), lines)
		}
		for i, w := range want {
			if !strings.Contains(lines[i], w) {
				t.Errorf("line %d %s lacks %s", i, lines[i], w)
			}
		}
		if !strings.Contains(lines[2], `"content":"b2"`) || !strings.Contains(lines[5], `"content":"b2"`) {
			t.Errorf("full content missing: %s / %s", lines[2], lines[5])
		}
	})
	t.Run("unknown-store", func(t *testing.T) {
		err := db.Export(ctx, "memstore_nope", func(any) error { return nil })
		wantCode(t, err, versions.CodeNotFound)
	})
}

func TestF13Conflicts(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{})
	m := create(t, db, s.ID, "/shared.md", "base")
	base := m.VersionID
	one, two := versions.SessionActor("sesn_one"), versions.SessionActor("sesn_two")

	first, err := db.UpdateMemory(ctx, s.ID, m.ID, versions.MemoryUpdate{Content: ptr("from one"), BaseVersionID: base}, one)
	ok(t, err)
	t.Run("save-from-head-not-conflict", func(t *testing.T) {
		v, err := db.GetVersion(ctx, s.ID, first.VersionID)
		ok(t, err)
		if v.Conflict {
			t.Fatalf("save from the head marked as conflict")
		}
	})
	t.Run("save-from-old-head-marked", func(t *testing.T) {
		second, err := db.UpdateMemory(ctx, s.ID, m.ID, versions.MemoryUpdate{Content: ptr("from two"), BaseVersionID: base}, two)
		ok(t, err)
		if *second.Content != "from two" {
			t.Fatalf("last to commit is not the head")
		}
		v, err := db.GetVersion(ctx, s.ID, second.VersionID)
		ok(t, err)
		if !v.Conflict {
			t.Fatalf("conflict not recorded")
		}
		h := history(t, db, s.ID, m.ID)
		if !h[0].Conflict || h[1].Conflict || *h[1].Content != "from one" {
			t.Fatalf("history loses a save or misplaces the mark")
		}
		b, _ := json.Marshal(h[0])
		if !strings.Contains(string(b), `"conflict":true`) {
			t.Fatalf("json %s", b)
		}
	})
	t.Run("strict-refused", func(t *testing.T) {
		before := len(history(t, db, s.ID, m.ID))
		_, err := db.UpdateMemory(ctx, s.ID, m.ID, versions.MemoryUpdate{Content: ptr("strict"), BaseVersionID: base, Strict: true}, one)
		wantCode(t, err, versions.CodeStale)
		if len(history(t, db, s.ID, m.ID)) != before {
			t.Fatalf("strict refusal wrote a version")
		}
		cur, err := db.GetMemory(ctx, s.ID, m.ID)
		ok(t, err)
		_, err = db.UpdateMemory(ctx, s.ID, m.ID, versions.MemoryUpdate{Content: ptr("strict"), BaseVersionID: cur.VersionID, Strict: true}, one)
		ok(t, err)
	})
}

// A rename's version references the content it keeps; pruning or redacting
// the version holding it leaves the rename's content whole.
func TestRenameReferencesContent(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{})
	m := create(t, db, s.ID, "/a", "the content")
	renamed := update(t, db, s.ID, m.ID, versions.MemoryUpdate{Path: ptr("/b")})
	if renamed.Content == nil || *renamed.Content != "the content" {
		t.Fatalf("UpdateMemory of a rename returned %+v", renamed)
	}
	again, err := db.Rename(ctx, s.ID, "/b", "/c", false, me)
	ok(t, err)
	// A file renamed onto another: the destination takes the content.
	o := create(t, db, s.ID, "/o", "other content")
	onto, err := db.Rename(ctx, s.ID, "/c", "/o", false, me)
	ok(t, err)
	if onto.ID != o.ID {
		t.Fatalf("renamed onto %s, got %+v", o.ID, onto)
	}
	content := func(id string) string {
		t.Helper()
		v, err := db.GetVersion(ctx, s.ID, id)
		ok(t, err)
		if v.Content == nil {
			t.Fatalf("version %s has no content", id)
		}
		return *v.Content
	}
	for _, id := range []string{m.VersionID, renamed.VersionID, again.VersionID, onto.VersionID} {
		if got := content(id); got != "the content" {
			t.Fatalf("version %s: %q", id, got)
		}
	}
	got, err := db.GetMemory(ctx, s.ID, "/o")
	ok(t, err)
	if *got.Content != "the content" || got.ContentSize != len("the content") {
		t.Fatalf("memory %+v", got)
	}
	before, err := db.GetStore(ctx, s.ID)
	ok(t, err)
	t.Run("redact-the-holder", func(t *testing.T) {
		_, err := db.RedactVersion(ctx, s.ID, m.VersionID, me)
		ok(t, err)
		for _, id := range []string{renamed.VersionID, again.VersionID, onto.VersionID} {
			if got := content(id); got != "the content" {
				t.Fatalf("version %s after redacting the one it referenced: %q", id, got)
			}
		}
	})
	t.Run("prune-the-holders", func(t *testing.T) {
		pruned, err := db.PruneVersions(ctx, s.ID, 0, 1)
		ok(t, err)
		if len(pruned) == 0 {
			t.Fatal("nothing pruned")
		}
		got, err := db.GetMemory(ctx, s.ID, "/o")
		ok(t, err)
		if *got.Content != "the content" {
			t.Fatalf("memory after pruning: %+v", got)
		}
		after, err := db.GetStore(ctx, s.ID)
		ok(t, err)
		freed := 0
		for i := range pruned {
			freed += versions.VersionCost(&pruned[i])
		}
		// Redaction freed the first version's content and path.
		if after.HistoryBytes != before.HistoryBytes-len("the content")-2*len(m.Path)-freed {
			t.Fatalf("history bytes %d, before %d, freed %d", after.HistoryBytes, before.HistoryBytes, freed)
		}
	})
}

// PrunePlan says what PruneVersions then removes; VersionsEndingIn finds a
// version by the end of its id, as memfs log shows it.
func TestPrunePlanAndShortIDs(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{})
	var ids []string
	for i := range 3 {
		m := create(t, db, s.ID, fmt.Sprintf("/m%d", i), "v0")
		ids = append(ids, m.VersionID)
		for v := 1; v < 4; v++ {
			m = update(t, db, s.ID, m.ID, versions.MemoryUpdate{Content: ptr(fmt.Sprint("v", v))})
			ids = append(ids, m.VersionID)
		}
	}
	for _, id := range ids {
		for _, n := range []int{6, 8, 13} {
			got, err := db.VersionsEndingIn(ctx, s.ID, strings.ToLower(id[len(id)-n:]))
			ok(t, err)
			if len(got) != 1 || got[0] != id {
				t.Fatalf("versions ending in %s: %v, want %s", id[len(id)-n:], got, id)
			}
		}
	}
	if got, err := db.VersionsEndingIn(ctx, s.ID, "ZZZZZZZZ"); err != nil || len(got) != 0 {
		t.Fatalf("an end no id has: %v %v", got, err)
	}
	plan, err := db.PrunePlan(ctx, s.ID, 0, 2)
	ok(t, err)
	pruned, err := db.PruneVersions(ctx, s.ID, 0, 2)
	ok(t, err)
	if len(plan) != 6 || len(plan) != len(pruned) {
		t.Fatalf("planned %d, pruned %d, want 6", len(plan), len(pruned))
	}
	for i := range plan {
		if plan[i].ID != pruned[i].ID {
			t.Fatalf("planned %s, pruned %s", plan[i].ID, pruned[i].ID)
		}
	}
}
