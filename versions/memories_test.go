package versions_test

import (
	"strings"
	"testing"

	"github.com/memfs/memfs/versions"
)

// segs builds a path of segments of the given byte lengths.
func segs(lengths ...int) string {
	var b strings.Builder
	for _, n := range lengths {
		b.WriteString("/" + strings.Repeat("s", n))
	}
	return b.String()
}

func TestPathValidation(t *testing.T) {
	long := "/" + strings.Repeat("a", 255)
	cases := []struct {
		name, path string
		code       versions.Code // CodeInternal: valid
	}{
		{"simple", "/notes.md", versions.CodeInternal},
		{"nested", "/a/b/c.txt", versions.CodeInternal},
		{"unicode-nfc", "/café/naïve.md", versions.CodeInternal},
		{"segment-255", long, versions.CodeInternal},
		{"20-segments", strings.Repeat("/x", 20), versions.CodeInternal},
		{"1024-bytes", segs(255, 255, 255, 255), versions.CodeInternal},
		{"empty", "", versions.CodeInvalid},
		{"root", "/", versions.CodeInvalid},
		{"relative", "notes.md", versions.CodeInvalid},
		{"trailing-slash", "/notes/", versions.CodeInvalid},
		{"empty-segment", "/a//b", versions.CodeInvalid},
		{"dot", "/a/./b", versions.CodeInvalid},
		{"dotdot", "/a/../b", versions.CodeInvalid},
		{"nul", "/a\x00b", versions.CodeInvalid},
		{"control", "/a\x07b", versions.CodeInvalid},
		{"newline", "/a\nb", versions.CodeInvalid},
		{"format-char", "/a\u200bb", versions.CodeInvalid},
		{"line-separator", "/a\u2028b", versions.CodeInvalid},
		{"paragraph-separator", "/a\u2029b", versions.CodeInvalid},
		{"not-utf8", "/a\xffb", versions.CodeInvalid},
		{"not-nfc", "/cafe\u0301", versions.CodeInvalid},
		{"segment-256", long + "a", versions.CodeNameTooLong},
		{"21-segments", strings.Repeat("/x", 21), versions.CodeNameTooLong},
		{"1025-bytes", segs(255, 255, 255, 253, 2), versions.CodeNameTooLong},
	}
	if n := len(cases[5].path); n != 1024 {
		t.Fatalf("fixture: 1024-bytes case has %d bytes", n)
	}
	if n := len(cases[len(cases)-1].path); n != 1025 {
		t.Fatalf("fixture: 1025-bytes case has %d bytes", n)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := versions.ValidatePath(c.path)
			if c.code == versions.CodeInternal {
				ok(t, err)
				return
			}
			wantCode(t, err, c.code)
		})
	}
	t.Run("not-nfc-message-names-the-problem", func(t *testing.T) {
		err := versions.ValidatePath("/cafe\u0301")
		if !strings.Contains(err.Error(), "NFC") {
			t.Fatalf("message %q does not name NFC", err)
		}
	})
	t.Run("create-refuses-invalid-path", func(t *testing.T) {
		db := openDB(t)
		s := newStore(t, db, versions.StoreParams{})
		_, err := db.CreateMemory(ctx, s.ID, "/a/../b", "x", me)
		wantCode(t, err, versions.CodeInvalid)
		_, err = db.CreateMemory(ctx, s.ID, long+"a", "x", me)
		wantCode(t, err, versions.CodeNameTooLong)
	})
}

func TestS1CreateNeverOverwrites(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{})
	m := create(t, db, s.ID, "/notes/todo.md", "one")

	t.Run("create-new-path", func(t *testing.T) {
		if !strings.HasPrefix(m.ID, "mem_") || !strings.HasPrefix(m.VersionID, "memver_") {
			t.Fatalf("ids %q %q lack their prefixes", m.ID, m.VersionID)
		}
		if got, want := m.ContentSHA256, "7692c3ad3540bb803c020b3aee66cd8887123234ea0c6e7143c0add73ff431ed"; got != want {
			t.Fatalf("sha = %s, want %s", got, want)
		}
		if m.Content == nil || *m.Content != "one" || m.ContentSize != 3 || m.Ino == 0 {
			t.Fatalf("created memory = %+v", m)
		}
	})
	t.Run("create-over-existing-refused", func(t *testing.T) {
		_, err := db.CreateMemory(ctx, s.ID, "/notes/todo.md", "two", me)
		e := wantCode(t, err, versions.CodePathConflict)
		if e.ConflictingMemoryID != m.ID || e.ConflictingPath != "/notes/todo.md" {
			t.Fatalf("conflict names %q %q", e.ConflictingMemoryID, e.ConflictingPath)
		}
		got, err := db.GetMemory(ctx, s.ID, m.ID)
		ok(t, err)
		if *got.Content != "one" {
			t.Fatalf("content changed to %q", *got.Content)
		}
	})
	t.Run("ancestor-is-a-file-refused", func(t *testing.T) {
		_, err := db.CreateMemory(ctx, s.ID, "/notes/todo.md/sub", "x", me)
		e := wantCode(t, err, versions.CodePathConflict)
		if e.ConflictingMemoryID != m.ID || e.ConflictingPath != "/notes/todo.md" {
			t.Fatalf("conflict names %q %q", e.ConflictingMemoryID, e.ConflictingPath)
		}
	})
	t.Run("descendant-exists-refused", func(t *testing.T) {
		_, err := db.CreateMemory(ctx, s.ID, "/notes", "x", me)
		e := wantCode(t, err, versions.CodePathConflict)
		if e.ConflictingMemoryID != m.ID || e.ConflictingPath != "/notes/todo.md" {
			t.Fatalf("conflict names %q %q", e.ConflictingMemoryID, e.ConflictingPath)
		}
	})
	t.Run("explicit-dir-refused", func(t *testing.T) {
		ok(t, db.MakeDir(ctx, s.ID, "/empty"))
		_, err := db.CreateMemory(ctx, s.ID, "/empty", "x", me)
		e := wantCode(t, err, versions.CodePathConflict)
		if e.ConflictingPath != "/empty" {
			t.Fatalf("conflicting path %q", e.ConflictingPath)
		}
		create(t, db, s.ID, "/empty/inside.md", "ok")
	})
	t.Run("sibling-prefix-allowed", func(t *testing.T) {
		create(t, db, s.ID, "/notes-archive", "x")
		create(t, db, s.ID, "/notes.md", "x")
	})
	t.Run("path-free-after-delete", func(t *testing.T) {
		x := create(t, db, s.ID, "/tmp.md", "x")
		ok(t, db.DeleteMemory(ctx, s.ID, x.ID, versions.MemoryDelete{}, me))
		y := create(t, db, s.ID, "/tmp.md", "y")
		if y.ID == x.ID || y.Ino == x.Ino {
			t.Fatalf("recreated memory reuses id or inode: %s/%d vs %s/%d", y.ID, y.Ino, x.ID, x.Ino)
		}
	})
}

func TestS2UpdateKeepsID(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{})
	m := create(t, db, s.ID, "/a.md", "one")

	t.Run("content", func(t *testing.T) {
		u := update(t, db, s.ID, m.ID, versions.MemoryUpdate{Content: ptr("two")})
		if u.ID != m.ID || *u.Content != "two" || u.Path != "/a.md" || u.VersionID == m.VersionID || u.Ino != m.Ino {
			t.Fatalf("updated = %+v", u)
		}
	})
	t.Run("rename", func(t *testing.T) {
		u := update(t, db, s.ID, m.ID, versions.MemoryUpdate{Path: ptr("/dir/b.md")})
		if u.ID != m.ID || u.Path != "/dir/b.md" || *u.Content != "two" {
			t.Fatalf("renamed = %+v", u)
		}
		if _, err := db.GetMemory(ctx, s.ID, "/a.md"); versions.ErrorCode(err) != versions.CodeNotFound {
			t.Fatalf("old path still resolves: %v", err)
		}
		got, err := db.GetMemory(ctx, s.ID, "/dir/b.md")
		ok(t, err)
		if got.ID != m.ID {
			t.Fatalf("new path resolves to %s", got.ID)
		}
	})
	t.Run("both", func(t *testing.T) {
		u := update(t, db, s.ID, m.ID, versions.MemoryUpdate{Path: ptr("/c.md"), Content: ptr("three")})
		if u.Path != "/c.md" || *u.Content != "three" {
			t.Fatalf("updated = %+v", u)
		}
	})
	t.Run("rename-onto-existing-refused", func(t *testing.T) {
		other := create(t, db, s.ID, "/other.md", "o")
		_, err := db.UpdateMemory(ctx, s.ID, m.ID, versions.MemoryUpdate{Path: ptr("/other.md")}, me)
		e := wantCode(t, err, versions.CodePathConflict)
		if e.ConflictingMemoryID != other.ID {
			t.Fatalf("conflict names %s", e.ConflictingMemoryID)
		}
		_, err = db.UpdateMemory(ctx, s.ID, m.ID, versions.MemoryUpdate{Path: ptr("/other.md/x")}, me)
		wantCode(t, err, versions.CodePathConflict)
	})
	t.Run("rename-below-itself", func(t *testing.T) {
		// The memory is the only thing in the way and it moves.
		u := update(t, db, s.ID, m.ID, versions.MemoryUpdate{Path: ptr("/c.md/inner.md")})
		if u.Path != "/c.md/inner.md" {
			t.Fatalf("path = %s", u.Path)
		}
	})
	t.Run("unknown-memory", func(t *testing.T) {
		_, err := db.UpdateMemory(ctx, s.ID, "mem_nope", versions.MemoryUpdate{Content: ptr("x")}, me)
		wantCode(t, err, versions.CodeNotFound)
	})
	t.Run("invalid-new-path", func(t *testing.T) {
		_, err := db.UpdateMemory(ctx, s.ID, m.ID, versions.MemoryUpdate{Path: ptr("/x/")}, me)
		wantCode(t, err, versions.CodeInvalid)
	})
}

func TestS3Preconditions(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{})
	m := create(t, db, s.ID, "/a.md", "one")
	stale := m.ContentSHA256
	m = update(t, db, s.ID, m.ID, versions.MemoryUpdate{Content: ptr("two"), IfSHA256: stale})

	t.Run("update-matching-hash", func(t *testing.T) {
		u := update(t, db, s.ID, m.ID, versions.MemoryUpdate{Content: ptr("three"), IfSHA256: m.ContentSHA256})
		if *u.Content != "three" {
			t.Fatalf("content %q", *u.Content)
		}
		m = u
	})
	t.Run("update-mismatch-refused", func(t *testing.T) {
		before := len(history(t, db, s.ID, m.ID))
		_, err := db.UpdateMemory(ctx, s.ID, m.ID, versions.MemoryUpdate{Content: ptr("four"), IfSHA256: stale}, me)
		e := wantCode(t, err, versions.CodePreconditionFailed)
		if !strings.Contains(e.Message, "re-read") {
			t.Fatalf("message %q does not say to re-read", e.Message)
		}
		if after := len(history(t, db, s.ID, m.ID)); after != before {
			t.Fatalf("refused update wrote a version: %d → %d", before, after)
		}
	})
	t.Run("precondition-refers-to-content-on-rename", func(t *testing.T) {
		_, err := db.UpdateMemory(ctx, s.ID, m.ID, versions.MemoryUpdate{Path: ptr("/b.md"), IfSHA256: stale}, me)
		wantCode(t, err, versions.CodePreconditionFailed)
		u := update(t, db, s.ID, m.ID, versions.MemoryUpdate{Path: ptr("/b.md"), IfSHA256: m.ContentSHA256})
		m = u
	})
	t.Run("idempotent-retry-succeeds", func(t *testing.T) {
		before := len(history(t, db, s.ID, m.ID))
		// The retried request's change already happened: hash differs, but
		// content and path are what was asked.
		u := update(t, db, s.ID, m.ID, versions.MemoryUpdate{Content: ptr("three"), Path: ptr("/b.md"), IfSHA256: stale})
		if u.VersionID != m.VersionID {
			t.Fatalf("retry wrote version %s", u.VersionID)
		}
		if after := len(history(t, db, s.ID, m.ID)); after != before {
			t.Fatalf("retry wrote a version: %d → %d", before, after)
		}
	})
	t.Run("delete-mismatch-refused", func(t *testing.T) {
		err := db.DeleteMemory(ctx, s.ID, m.ID, versions.MemoryDelete{IfSHA256: stale}, me)
		wantCode(t, err, versions.CodePreconditionFailed)
		if _, err := db.GetMemory(ctx, s.ID, m.ID); err != nil {
			t.Fatalf("memory gone after refused delete: %v", err)
		}
	})
	t.Run("delete-matching-hash", func(t *testing.T) {
		ok(t, db.DeleteMemory(ctx, s.ID, m.ID, versions.MemoryDelete{IfSHA256: m.ContentSHA256}, me))
		_, err := db.GetMemory(ctx, s.ID, m.ID)
		wantCode(t, err, versions.CodeNotFound)
	})
}

func TestS4OneVersionPerMutation(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{})
	m := create(t, db, s.ID, "/a.md", "one")
	update(t, db, s.ID, m.ID, versions.MemoryUpdate{Content: ptr("two")})
	update(t, db, s.ID, m.ID, versions.MemoryUpdate{Path: ptr("/b.md")})
	update(t, db, s.ID, m.ID, versions.MemoryUpdate{Content: ptr("three"), Path: ptr("/c.md")})

	t.Run("noop-update-writes-nothing", func(t *testing.T) {
		u := update(t, db, s.ID, m.ID, versions.MemoryUpdate{Content: ptr("three"), Path: ptr("/c.md")})
		u2 := update(t, db, s.ID, m.ID, versions.MemoryUpdate{})
		if u.VersionID != u2.VersionID || len(history(t, db, s.ID, m.ID)) != 4 {
			t.Fatalf("no-op update wrote a version")
		}
	})
	ok(t, db.DeleteMemory(ctx, s.ID, m.ID, versions.MemoryDelete{}, me))

	t.Run("one-version-each", func(t *testing.T) {
		h := history(t, db, s.ID, m.ID)
		want := []struct {
			op      versions.Operation
			path    string
			content string
		}{
			{versions.OpDeleted, "/c.md", ""},
			{versions.OpModified, "/c.md", "three"},
			{versions.OpModified, "/b.md", "two"},
			{versions.OpModified, "/a.md", "two"},
			{versions.OpCreated, "/a.md", "one"},
		}
		if len(h) != len(want) {
			t.Fatalf("got %d versions, want %d", len(h), len(want))
		}
		for i, w := range want {
			v := h[i]
			if v.Operation != w.op || *v.Path != w.path || v.MemoryID != m.ID || v.StoreID != s.ID {
				t.Errorf("version %d = %s %s, want %s %s", i, v.Operation, *v.Path, w.op, w.path)
			}
			if w.op == versions.OpDeleted {
				if v.Content != nil || v.ContentSHA256 != nil || v.ContentSize != nil {
					t.Errorf("deleted version keeps content/sha/size")
				}
				continue
			}
			if v.Content == nil || *v.Content != w.content || *v.ContentSize != len(w.content) {
				t.Errorf("version %d content = %v, want %q", i, v.Content, w.content)
			}
			if v.CreatedBy == nil || *v.CreatedBy != me {
				t.Errorf("version %d created_by = %v", i, v.CreatedBy)
			}
		}
	})
}

func TestS5VersionsSurviveDeletion(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{})
	m := create(t, db, s.ID, "/a.md", "one")
	ok(t, db.DeleteMemory(ctx, s.ID, m.ID, versions.MemoryDelete{}, me))
	t.Run("history-after-delete", func(t *testing.T) {
		h := history(t, db, s.ID, m.ID)
		if len(h) != 2 || h[0].Operation != versions.OpDeleted || *h[1].Content != "one" {
			t.Fatalf("history after delete = %+v", h)
		}
		v, err := db.GetVersion(ctx, s.ID, h[1].ID)
		ok(t, err)
		if *v.Content != "one" {
			t.Fatalf("version content %q", *v.Content)
		}
	})
	t.Run("other-store-cannot-see", func(t *testing.T) {
		other := newStore(t, db, versions.StoreParams{Name: "other"})
		_, err := db.GetVersion(ctx, other.ID, m.VersionID)
		wantCode(t, err, versions.CodeNotFound)
	})
}

func TestS11MemoryLimit(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{MaxMemories: 3})
	a := create(t, db, s.ID, "/a", "a")
	create(t, db, s.ID, "/b", "b")
	create(t, db, s.ID, "/c", "c")
	t.Run("create-at-limit-refused", func(t *testing.T) {
		_, err := db.CreateMemory(ctx, s.ID, "/d", "d", me)
		e := wantCode(t, err, versions.CodeStoreFull)
		if !strings.Contains(e.Message, "3") {
			t.Fatalf("message %q does not name the limit", e.Message)
		}
	})
	t.Run("full-store-stays-editable", func(t *testing.T) {
		update(t, db, s.ID, a.ID, versions.MemoryUpdate{Content: ptr("aa"), Path: ptr("/a2")})
		ok(t, errOf(db.Rename(ctx, s.ID, "/a2", "/a3", false, me)))
		if _, err := db.GetMemory(ctx, s.ID, "/a3"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("create-after-delete", func(t *testing.T) {
		ok(t, db.DeleteMemory(ctx, s.ID, "/b", versions.MemoryDelete{}, me))
		create(t, db, s.ID, "/d", "d")
	})
	t.Run("default-is-2000", func(t *testing.T) {
		d := newStore(t, db, versions.StoreParams{Name: "default"})
		if d.MaxMemories != versions.DefaultMaxMemories || d.MaxMemoryBytes != versions.DefaultMaxMemoryBytes {
			t.Fatalf("default limits %d %d", d.MaxMemories, d.MaxMemoryBytes)
		}
	})
}

func TestS12ContentLimits(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{})
	small := newStore(t, db, versions.StoreParams{Name: "small", MaxMemoryBytes: 10})
	t.Run("at-limit", func(t *testing.T) {
		create(t, db, s.ID, "/max", strings.Repeat("x", versions.DefaultMaxMemoryBytes))
		create(t, db, small.ID, "/max", "0123456789")
		create(t, db, s.ID, "/empty", "")
	})
	t.Run("over-limit-refused", func(t *testing.T) {
		_, err := db.CreateMemory(ctx, s.ID, "/big", strings.Repeat("x", versions.DefaultMaxMemoryBytes+1), me)
		e := wantCode(t, err, versions.CodeTooLarge)
		if !strings.Contains(e.Message, "102400 bytes") {
			t.Fatalf("message %q does not name the limit in bytes", e.Message)
		}
		_, err = db.CreateMemory(ctx, small.ID, "/big", "0123456789a", me)
		e = wantCode(t, err, versions.CodeTooLarge)
		if !strings.Contains(e.Message, "10 bytes") {
			t.Fatalf("message %q does not name the limit in bytes", e.Message)
		}
		_, err = db.UpdateMemory(ctx, small.ID, "/max", versions.MemoryUpdate{Content: ptr("0123456789a")}, me)
		wantCode(t, err, versions.CodeTooLarge)
	})
	t.Run("not-utf8-refused", func(t *testing.T) {
		_, err := db.CreateMemory(ctx, s.ID, "/bin", "a\xffb", me)
		wantCode(t, err, versions.CodeNotUTF8)
		_, err = db.UpdateMemory(ctx, s.ID, "/empty", versions.MemoryUpdate{Content: ptr("\xc3")}, me)
		wantCode(t, err, versions.CodeNotUTF8)
		m, err := db.GetMemory(ctx, s.ID, "/empty")
		ok(t, err)
		if *m.Content != "" {
			t.Fatalf("refused update changed content to %q", *m.Content)
		}
	})
	t.Run("negative-limit-refused", func(t *testing.T) {
		_, err := db.CreateStore(ctx, versions.StoreParams{Name: "neg", MaxMemoryBytes: -1})
		wantCode(t, err, versions.CodeInvalid)
	})
}

func TestGetMemory(t *testing.T) {
	db := openDB(t)
	s := newStore(t, db, versions.StoreParams{})
	m := create(t, db, s.ID, "/a.md", "one")
	for _, ref := range []string{m.ID, "/a.md"} {
		got, err := db.GetMemory(ctx, s.ID, ref)
		ok(t, err)
		if got.ID != m.ID || *got.Content != "one" || got.VersionID != m.VersionID || got.Ino != m.Ino {
			t.Fatalf("GetMemory(%s) = %+v", ref, got)
		}
	}
	_, err := db.GetMemory(ctx, s.ID, "/nope")
	wantCode(t, err, versions.CodeNotFound)
	_, err = db.GetMemory(ctx, "memstore_nope", m.ID)
	wantCode(t, err, versions.CodeNotFound)
	other := newStore(t, db, versions.StoreParams{Name: "other"})
	_, err = db.GetMemory(ctx, other.ID, m.ID)
	wantCode(t, err, versions.CodeNotFound)
}
