package memtool_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/memfs/memfs/memtool"
	"github.com/memfs/memfs/versions"
)

// TestLongFileNote: a view shows at most 16,000 characters and says how to
// page through the rest with view_range.
func TestLongFileNote(t *testing.T) {
	db := openDB(t)
	st := newStore(t, db, versions.StoreParams{})
	line := strings.Repeat("é", 99) // 99 characters, 198 bytes: characters are counted, not bytes
	var b strings.Builder
	for i := 0; i < 300; i++ {
		b.WriteString(line + "\n")
	}
	seed(t, db, st.ID, map[string]string{"/long.md": b.String(), "/one-line.md": strings.Repeat("x", 20000)})
	tool := memtool.New(db, st.ID, versions.UserActor("test"))

	got := run(t, tool, cmd("command", "view", "path", "/memories/long.md"))
	// 160 lines of 99 characters and 159 newlines are 15,999 characters.
	var want strings.Builder
	want.WriteString("Here's the content of /memories/long.md with line numbers:\n")
	for i := 1; i <= 160; i++ {
		fmt.Fprintf(&want, "%6d\t%s", i, line)
		if i < 160 {
			want.WriteByte('\n')
		}
	}
	want.WriteString("\n\nNote: this file has 30000 characters and view shows at most 16000 at a time: lines 1-160 of 301 are shown. View the rest with view_range [161, -1], or a smaller range.")
	if got.IsError || got.Content != want.String() {
		t.Errorf("view long.md: got %d characters ending %q", len(got.Content), tail(got.Content))
	}

	got = run(t, tool, cmd("command", "view", "path", "/memories/long.md", "view_range", []int{161, -1}))
	if got.IsError || strings.Contains(got.Content, "Note:") || !strings.HasSuffix(got.Content, "   301\t") || !strings.Contains(got.Content, "   161\t"+line+"\n") {
		t.Errorf("view long.md [161, -1]: ends %q", tail(got.Content))
	}

	got = run(t, tool, cmd("command", "view", "path", "/memories/one-line.md"))
	wantOne := "Here's the content of /memories/one-line.md with line numbers:\n     1\t" + strings.Repeat("x", 16000) +
		"\n\nNote: this file has 20000 characters and view shows at most 16000 at a time: line 1 was cut after 16000 of its 20000 characters. The rest of the file starts at line 2: view it with view_range [2, -1]."
	if got.IsError || got.Content != wantOne {
		t.Errorf("view one-line.md: ends %q", tail(got.Content))
	}
}

func tail(s string) string {
	if len(s) > 300 {
		return "…" + s[len(s)-300:]
	}
	return s
}

// TestLimits: the store's memory count and bytes per memory hold, with an
// error that names the limit, and nothing changes.
func TestLimits(t *testing.T) {
	db := openDB(t)
	st := newStore(t, db, versions.StoreParams{MaxMemories: 2, MaxMemoryBytes: 100})
	tool := memtool.New(db, st.ID, versions.UserActor("test"))
	for _, p := range []string{"/memories/a", "/memories/b"} {
		if r := run(t, tool, cmd("command", "create", "path", p, "file_text", "0123456789")); r.IsError {
			t.Fatal(r.Content)
		}
	}
	checks := []struct{ in, want string }{
		{cmd("command", "create", "path", "/memories/c", "file_text", "x"),
			"Error: Cannot create /memories/c: memory store " + st.ID + " holds its maximum of 2 memories: delete some, or raise the store's limit"},
		{cmd("command", "insert", "path", "/memories/a", "insert_line", 1, "insert_text", strings.Repeat("y", 90)),
			"Error: Cannot edit /memories/a: content is 101 bytes, over this store's limit of 100 bytes per memory: shorten it or split it into several memories"},
		{cmd("command", "str_replace", "path", "/memories/a", "old_str", "5", "new_str", strings.Repeat("z", 92)),
			"Error: Cannot edit /memories/a: content is 101 bytes, over this store's limit of 100 bytes per memory: shorten it or split it into several memories"},
	}
	for _, c := range checks {
		if r := run(t, tool, c.in); !r.IsError || r.Content != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.in, r.Content, c.want)
		}
	}
	if got := content(t, db, st.ID, "/a"); got != "0123456789" {
		t.Errorf("/a = %q after refused edits", got)
	}
	// At the limit, existing memories stay editable, and a delete frees a place.
	if r := run(t, tool, cmd("command", "str_replace", "path", "/memories/a", "old_str", "0123456789", "new_str", "zero")); r.IsError {
		t.Error(r.Content)
	}
	run(t, tool, cmd("command", "delete", "path", "/memories/b"))
	if r := run(t, tool, cmd("command", "create", "path", "/memories/c", "file_text", "x")); r.IsError {
		t.Error(r.Content)
	}
	small := newStore(t, db, versions.StoreParams{Name: "small", MaxMemoryBytes: 4})
	r := memtool.New(db, small.ID, versions.UserActor("test")).Run(ctx, memtool.Command{Command: "create", Path: "/memories/big", FileText: ptr("12345")})
	if want := "Error: Cannot create /memories/big: content is 5 bytes, over this store's limit of 4 bytes per memory: shorten it or split it into several memories"; r.Content != want {
		t.Errorf("create over the size limit:\n got %q\nwant %q", r.Content, want)
	}
}

func ptr[T any](v T) *T { return &v }

// mutations is one of each mutating command, on paths seeded by readOnlyStore.
var mutations = []struct{ verb, path, in string }{
	{"create", "/memories/new", cmd("command", "create", "path", "/memories/new", "file_text", "x")},
	{"edit", "/memories/a", cmd("command", "str_replace", "path", "/memories/a", "old_str", "a", "new_str", "b")},
	{"edit", "/memories/a", cmd("command", "insert", "path", "/memories/a", "insert_line", 0, "insert_text", "x")},
	{"delete", "/memories/d", cmd("command", "delete", "path", "/memories/d")},
	{"delete", "/memories/a", cmd("command", "delete", "path", "/memories/a")},
	{"rename", "/memories/a", cmd("command", "rename", "old_path", "/memories/a", "new_path", "/memories/b")},
}

// TestReadOnly: a read_only attachment and an archived store refuse every
// mutation with a sentence that says why, and still serve views.
func TestReadOnly(t *testing.T) {
	db := openDB(t)
	st := newStore(t, db, versions.StoreParams{})
	seed(t, db, st.ID, map[string]string{"/a": "a", "/d/x": "x"})
	sess, err := db.CreateSession(ctx, []versions.AttachmentParams{{StoreID: st.ID, Access: versions.ReadOnly}})
	if err != nil {
		t.Fatal(err)
	}
	ro, err := memtool.ForSession(ctx, db, st.ID, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mutations {
		want := fmt.Sprintf("Error: Cannot %s %s: memory store %s is attached read-only to session %s; nothing was changed", m.verb, m.path, st.ID, sess.ID)
		if r := run(t, ro, m.in); !r.IsError || r.Content != want {
			t.Errorf("read_only %s:\n got %q\nwant %q", m.in, r.Content, want)
		}
	}
	if r := run(t, ro, cmd("command", "view", "path", "/memories/a")); r.IsError {
		t.Errorf("view through a read_only attachment: %s", r.Content)
	}

	other := newStore(t, db, versions.StoreParams{Name: "other"})
	if _, err := memtool.ForSession(ctx, db, other.ID, sess.ID); versions.ErrorCode(err) != versions.CodeNotFound {
		t.Errorf("a session acting on a store it was not given: %v", err)
	}

	if _, err := db.EndSession(ctx, sess.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := memtool.ForSession(ctx, db, st.ID, sess.ID); versions.ErrorCode(err) != versions.CodeConflict {
		t.Errorf("acting for an ended session: %v, want a conflict", err)
	}

	rw := memtool.New(db, st.ID, versions.UserActor("test"))
	if _, err := db.ArchiveStore(ctx, st.ID); err != nil {
		t.Fatal(err)
	}
	for _, m := range mutations {
		want := fmt.Sprintf("Error: Cannot %s %s: memory store %s is archived, which makes its memories read-only; nothing was changed", m.verb, m.path, st.ID)
		if r := run(t, rw, m.in); !r.IsError || r.Content != want {
			t.Errorf("archived %s:\n got %q\nwant %q", m.in, r.Content, want)
		}
	}
	if r := run(t, rw, cmd("command", "view", "path", "/memories")); r.IsError || !strings.Contains(r.Content, "/memories/d/x") {
		t.Errorf("view of an archived store: %s", r.Content)
	}
	page, err := db.ListVersions(ctx, st.ID, versions.VersionListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 2 {
		t.Errorf("%d versions after refused mutations, want the 2 seeded", len(page.Data))
	}
}

// TestConcurrentEdits: edits of one file from many callers at once each
// land (the read and the write are one transaction), one version each.
func TestConcurrentEdits(t *testing.T) {
	db := openDB(t)
	st := newStore(t, db, versions.StoreParams{})
	seed(t, db, st.ID, map[string]string{"/log.md": "end"})
	const n = 16
	errs := make(chan string, n)
	for i := range n {
		go func() {
			tool := memtool.New(db, st.ID, versions.SessionActor(fmt.Sprintf("sesn_%02d", i)))
			r := tool.Run(ctx, memtool.Command{Command: "insert", Path: "/memories/log.md", InsertLine: ptr(0), InsertText: ptr(fmt.Sprintf("entry %02d\n", i))})
			if r.IsError {
				errs <- r.Content
				return
			}
			errs <- ""
		}()
	}
	for range n {
		if e := <-errs; e != "" {
			t.Error(e)
		}
	}
	lines := strings.Split(content(t, db, st.ID, "/log.md"), "\n")
	if len(lines) != n+1 || lines[n] != "end" {
		t.Errorf("log.md has %d lines, want %d entries and the end: %q", len(lines), n, lines)
	}
	page, err := db.ListVersions(ctx, st.ID, versions.VersionListOptions{Operation: versions.OpModified})
	if err != nil || len(page.Data) != n {
		t.Errorf("%d modified versions (%v), want %d", len(page.Data), err, n)
	}
}
