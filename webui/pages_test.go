package webui_test

// The pages and actions over real HTTP on a real SQLite file, for what
// the browser tests do not walk through: a rename, a conflict, a
// redaction (and the head refused one), an undelete, a history paged
// through, a folder of hundreds of files in blocks, the tree as of a time
// picked.

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/versions"
	"github.com/memfs/memfs/webui"
)

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// post submits an action's form with the page's form token.
func post(t *testing.T, c *http.Client, base, page, action string) *http.Response {
	t.Helper()
	_, body := get(t, c, base+page)
	m := csrfField.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("%s has no form token", page)
	}
	res, err := c.PostForm(base+action, url.Values{"csrf": {m[1]}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res
}

func TestHistoryAndActions(t *testing.T) {
	ctx := context.Background()
	db, srv := newUI(t, webui.Options{})
	_, key, err := db.CreateAPIKey(ctx, "browser")
	if err != nil {
		t.Fatal(err)
	}
	c := client(t)
	signIn(t, c, srv.URL, key)
	by := versions.UserActor("agent")
	st, err := db.CreateStore(ctx, versions.StoreParams{Name: "S"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := db.CreateMemory(ctx, st.ID, "/a.md", "one\n", by)
	if err != nil {
		t.Fatal(err)
	}
	first := m.VersionID
	two := "two\n"
	m, err = db.UpdateMemory(ctx, st.ID, m.ID, versions.MemoryUpdate{Content: &two}, by)
	if err != nil {
		t.Fatal(err)
	}
	second := m.VersionID
	moved := "/b.md"
	if m, err = db.UpdateMemory(ctx, st.ID, m.ID, versions.MemoryUpdate{Path: &moved}, by); err != nil {
		t.Fatal(err)
	}
	three := "three\n"
	// Saved from the second version while the rename is the head.
	if m, err = db.UpdateMemory(ctx, st.ID, m.ID, versions.MemoryUpdate{Content: &three, BaseVersionID: second}, by); err != nil {
		t.Fatal(err)
	}
	head := m.VersionID
	history := func(path string) string {
		t.Helper()
		res, body := get(t, c, srv.URL+"/ui/stores/"+st.ID+"/history?path="+url.QueryEscape(path))
		if res.StatusCode != http.StatusOK {
			t.Fatalf("history of %s answered %d", path, res.StatusCode)
		}
		return body
	}

	body := history("/b.md")
	if !strings.Contains(body, "renamed from") || !strings.Contains(body, "history?path=%2fa.md") {
		t.Error("the history of /b.md does not show the rename from /a.md")
	}
	if !strings.Contains(body, `class="badge conflict"`) {
		t.Error("the history of /b.md does not flag the conflicting save")
	}

	t.Run("RedactOld", func(t *testing.T) {
		res := post(t, c, srv.URL, "/ui/stores/"+st.ID+"/versions/"+first+"/redact", "/ui/stores/"+st.ID+"/versions/"+first+"/redact")
		if res.StatusCode != http.StatusSeeOther {
			t.Fatalf("redacting an old version answered %d", res.StatusCode)
		}
		v, err := db.GetVersion(ctx, st.ID, first)
		if err != nil || v.RedactedAt == nil || v.RedactedBy == nil || v.RedactedBy.Type != "api_actor" {
			t.Fatalf("after the redaction the version is %+v, %v", v, err)
		}
		if body := history("/a.md"); !strings.Contains(body, `class="tombstone">redacted`) {
			t.Error("the history of /a.md does not show the redacted version as a tombstone")
		}
	})

	t.Run("HeadCannotBeRedacted", func(t *testing.T) {
		res := post(t, c, srv.URL, "/ui/stores/"+st.ID+"/versions/"+head, "/ui/stores/"+st.ID+"/versions/"+head+"/redact")
		if res.StatusCode != http.StatusConflict {
			t.Fatalf("redacting the head answered %d, want 409", res.StatusCode)
		}
		if v, _ := db.GetVersion(ctx, st.ID, head); v.RedactedAt != nil {
			t.Fatal("the head was redacted")
		}
	})

	t.Run("Undelete", func(t *testing.T) {
		if err := db.DeleteMemory(ctx, st.ID, "/b.md", versions.MemoryDelete{}, by); err != nil {
			t.Fatal(err)
		}
		body := history("/b.md")
		link := regexp.MustCompile(`href="(/ui/stores/[^"]+/versions/([^"/]+)/undelete)"`).FindStringSubmatch(body)
		if link == nil || !strings.Contains(body, "No file is at this path now") {
			t.Fatal("the history of a deleted file offers no undelete")
		}
		res := post(t, c, srv.URL, link[1], link[1])
		if res.StatusCode != http.StatusSeeOther {
			t.Fatalf("undelete answered %d", res.StatusCode)
		}
		back, err := db.GetMemory(ctx, st.ID, "/b.md")
		if err != nil {
			t.Fatalf("after the undelete: %v", err)
		}
		v, err := db.GetVersion(ctx, st.ID, back.VersionID)
		if err != nil || v.Content == nil || *v.Content != three || v.CreatedBy.Type != "api_actor" {
			t.Fatalf("the undelete's version: %+v, %v", v, err)
		}
		if res := post(t, c, srv.URL, link[1], link[1]); res.StatusCode != http.StatusConflict {
			t.Fatalf("a second undelete answered %d, want 409", res.StatusCode)
		}
	})

	t.Run("Paging", func(t *testing.T) {
		p, err := db.CreateMemory(ctx, st.ID, "/log.md", "0\n", by)
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i < 120; i++ {
			s := fmt.Sprintf("%d\n", i)
			if _, err := db.UpdateMemory(ctx, st.ID, p.ID, versions.MemoryUpdate{Content: &s}, by); err != nil {
				t.Fatal(err)
			}
		}
		older := regexp.MustCompile(`id="older" href="([^"]+)"`)
		u := "/ui/stores/" + st.ID + "/history?path=%2flog.md"
		var rows []int
		for u != "" {
			res, body := get(t, c, srv.URL+strings.ReplaceAll(u, "&amp;", "&"))
			if res.StatusCode != http.StatusOK {
				t.Fatalf("%s answered %d", u, res.StatusCode)
			}
			rows = append(rows, strings.Count(body, `<tr class="version`))
			u = ""
			if m := older.FindStringSubmatch(body); m != nil {
				u = m[1]
			}
		}
		if fmt.Sprint(rows) != "[50 50 20]" {
			t.Fatalf("the pages of a history of 120 versions hold %v rows, want [50 50 20]", rows)
		}
	})
}

func TestLongFolder(t *testing.T) {
	ctx := context.Background()
	db, srv := newUI(t, webui.Options{})
	_, key, err := db.CreateAPIKey(ctx, "browser")
	if err != nil {
		t.Fatal(err)
	}
	c := client(t)
	signIn(t, c, srv.URL, key)
	st, err := db.CreateStore(ctx, versions.StoreParams{Name: "S"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 250 {
		if _, err := db.CreateMemory(ctx, st.ID, fmt.Sprintf("/many/n%03d.md", i), "x", versions.UserActor("agent")); err != nil {
			t.Fatal(err)
		}
	}
	res, body := get(t, c, srv.URL+"/ui/stores/"+st.ID+"/?dir=/many")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("the folder answered %d", res.StatusCode)
	}
	if n := strings.Count(body, `<div class="rows">`); n != 3 {
		t.Errorf("a folder of 250 files is in %d blocks, want 3 of at most 100 rows", n)
	}
	names := regexp.MustCompile(`>(n\d{3}\.md)</a>`).FindAllStringSubmatch(body, -1)
	if len(names) != 250 || names[0][1] != "n000.md" || names[249][1] != "n249.md" {
		t.Fatalf("the folder lists %d files, want n000.md to n249.md in order", len(names))
	}
	// The rows link relative to the page: each must lead to its file's
	// history.
	href := regexp.MustCompile(`href="([^"]+)">n123\.md</a>`).FindStringSubmatch(body)
	page, _ := url.Parse(srv.URL + "/ui/stores/" + st.ID + "/?dir=/many")
	if href == nil {
		t.Fatal("no link to n123.md")
	}
	ref, err := url.Parse(strings.ReplaceAll(href[1], "&amp;", "&"))
	if err != nil {
		t.Fatal(err)
	}
	res, body = get(t, c, page.ResolveReference(ref).String())
	if res.StatusCode != http.StatusOK || !strings.Contains(body, `<code id="path">/many/n123.md</code>`) {
		t.Fatalf("the link %q of n123.md answered %d, not its history", href[1], res.StatusCode)
	}
}

// The tree's time picker (a datetime-local field, no zone: read as UTC)
// shows the store as it was at that second.
func TestTreeAsOfTime(t *testing.T) {
	ctx := context.Background()
	db, srv := newUI(t, webui.Options{})
	_, key, err := db.CreateAPIKey(ctx, "browser")
	if err != nil {
		t.Fatal(err)
	}
	c := client(t)
	signIn(t, c, srv.URL, key)
	by := versions.UserActor("agent")
	st, err := db.CreateStore(ctx, versions.StoreParams{Name: "S"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := db.CreateMemory(ctx, st.ID, "/then.md", "x", by)
	if err != nil {
		t.Fatal(err)
	}
	// The picker has whole seconds: wait for the next one to pass.
	at := time.Now().UTC().Truncate(time.Second).Add(time.Second)
	time.Sleep(time.Until(at) + 50*time.Millisecond)
	if err := db.DeleteMemory(ctx, st.ID, m.ID, versions.MemoryDelete{}, by); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateMemory(ctx, st.ID, "/now.md", "y", by); err != nil {
		t.Fatal(err)
	}
	res, body := get(t, c, srv.URL+"/ui/stores/"+st.ID+"/?dir=/&time="+at.Format("2006-01-02T15:04:05"))
	if res.StatusCode != http.StatusOK || !strings.Contains(body, `id="asof-banner"`) {
		t.Fatalf("the tree as of %s answered %d without the as-of banner", at, res.StatusCode)
	}
	if !strings.Contains(body, ">then.md</a>") || strings.Contains(body, ">now.md</a>") {
		t.Errorf("the tree as of %s: want then.md and not now.md:\n%s", at, body)
	}
}

// A key scoped to some stores sees only them in the UI, as in the API: a
// store outside its scope does not exist for it, nor do sessions.
func TestScopedKeySeesItsStores(t *testing.T) {
	ctx := context.Background()
	db, srv := newUI(t, webui.Options{})
	mine, err := db.CreateStore(ctx, versions.StoreParams{Name: "Mine"})
	if err != nil {
		t.Fatal(err)
	}
	other, err := db.CreateStore(ctx, versions.StoreParams{Name: "Other"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateMemory(ctx, other.ID, "/secret.md", "x", versions.UserActor("agent")); err != nil {
		t.Fatal(err)
	}
	_, key, err := db.CreateScopedAPIKey(ctx, "scoped", versions.APIKeyScope{StoreIDs: []string{mine.ID}})
	if err != nil {
		t.Fatal(err)
	}
	c := client(t)
	signIn(t, c, srv.URL, key)
	if _, body := get(t, c, srv.URL+"/ui/"); !strings.Contains(body, mine.ID) || strings.Contains(body, other.ID) {
		t.Errorf("the stores page of a key scoped to %s:\n%s", mine.ID, body)
	}
	for _, page := range []string{"/ui/stores/" + other.ID + "/", "/ui/stores/" + other.ID + "/history?path=/secret.md"} {
		if res, _ := get(t, c, srv.URL+page); res.StatusCode != http.StatusNotFound {
			t.Errorf("%s for a key scoped to another store: %d, want 404", page, res.StatusCode)
		}
	}
	if res, _ := get(t, c, srv.URL+"/ui/sessions"); res.StatusCode < 400 {
		t.Errorf("/ui/sessions for a key scoped to one store: %d, want a refusal", res.StatusCode)
	}
}
