package versions_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/memfs/memfs/versions"
	"github.com/memfs/memfs/versions/pgtest"
)

// exportBytes is a store's export as memfs export prints it.
func exportBytes(t testing.TB, db *versions.DB, storeID string) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	ok(t, db.Export(ctx, storeID, func(v any) error { return enc.Encode(v) }))
	return buf.Bytes()
}

// richStore fills a store with everything an export carries: its own
// limits and metadata, memories saved several times, a conflict mark, a
// rename, a deletion, a redaction, writes by a session and by a user,
// directories made explicitly, content with a NUL, non-ASCII text and
// HTML-like characters. It returns the store's id.
func richStore(t testing.TB, db *versions.DB, name string) string {
	t.Helper()
	s := newStore(t, db, versions.StoreParams{Name: name, Description: "everything <&> an export holds",
		Metadata: map[string]string{"team": "α", "z": "last"}, MaxMemories: 7, MaxMemoryBytes: 4096})
	sess := versions.SessionActor("sesn_01JFAKESESSION0000000000")
	plan := create(t, db, s.ID, "/plan.md", "# plan\n")
	base := plan.VersionID
	update(t, db, s.ID, plan.ID, versions.MemoryUpdate{Content: ptr("# plan\n- one\n"), BaseVersionID: base})
	if _, err := db.UpdateMemory(ctx, s.ID, plan.ID, versions.MemoryUpdate{Content: ptr("# plan\n- two\n"), BaseVersionID: base}, sess); err != nil {
		t.Fatal(err)
	}
	secret := create(t, db, s.ID, "/notes/secret.txt", "password: hunter2\n")
	update(t, db, s.ID, secret.ID, versions.MemoryUpdate{Content: ptr("nothing here\n")})
	h := history(t, db, s.ID, secret.ID)
	ok(t, errOf(db.RedactVersion(ctx, s.ID, h[len(h)-1].ID, sess)))
	odd := create(t, db, s.ID, "/Заметки/café\u00e9.md", "nul \x00 byte, tab\t, quote \" <b>&amp;</b> \u2028 end")
	ok(t, errOf(db.Rename(ctx, s.ID, odd.Path, "/Заметки/renamed.md", false, me)))
	gone := create(t, db, s.ID, "/gone.md", "bye")
	ok(t, db.DeleteMemory(ctx, s.ID, gone.ID, versions.MemoryDelete{KeepParentDir: true}, sess))
	ok(t, db.MakeDir(ctx, s.ID, "/empty"))
	ok(t, db.MakeDir(ctx, s.ID, "/empty/deeper"))
	return s.ID
}

func importBytes(t testing.TB, db *versions.DB, b []byte) []versions.Imported {
	t.Helper()
	done, err := db.Import(ctx, bytes.NewReader(b))
	if err != nil {
		t.Fatalf("Import: %v", err)
	}
	return done
}

func TestImportRoundTrip(t *testing.T) {
	src := openDB(t)
	id := richStore(t, src, "Rich")
	archived := newStore(t, src, versions.StoreParams{Name: "Old"})
	create(t, src, archived.ID, "/kept.md", "kept")
	ok(t, errOf(src.ArchiveStore(ctx, archived.ID)))
	want := exportBytes(t, src, id)
	wantArchived := exportBytes(t, src, archived.ID)

	dst := openDB(t)
	// Two exports one after the other import as two stores.
	done := importBytes(t, dst, append(append([]byte{}, want...), wantArchived...))
	if len(done) != 2 || done[0].Store.ID != id || done[1].Store.ID != archived.ID {
		t.Fatalf("imported %+v, want the stores %s and %s", done, id, archived.ID)
	}
	if d := done[0]; d.Memories != 3 || d.Directories != 2 || d.Versions != 9 {
		t.Errorf("imported %d memories, %d directories, %d versions; want 3, 2, 9", d.Memories, d.Directories, d.Versions)
	}
	for _, c := range []struct {
		id   string
		want []byte
	}{{id, want}, {archived.ID, wantArchived}} {
		if got := exportBytes(t, dst, c.id); !bytes.Equal(got, c.want) {
			t.Errorf("store %s exported after import differs from its export before:\nbefore:\n%s\nafter:\n%s", c.id, c.want, got)
		}
	}

	t.Run("TheStoreWorks", func(t *testing.T) {
		// memory_count came along: the store holds 3 of its 7.
		for i := range 4 {
			create(t, dst, id, "/more"+string(rune('a'+i)), "x")
		}
		wantCode(t, errOf(dst.CreateMemory(ctx, id, "/one-too-many", "x", me)), versions.CodeStoreFull)
		wantCode(t, errOf(dst.CreateMemory(ctx, archived.ID, "/new", "x", me)), versions.CodeReadOnly)
		m, err := dst.GetMemory(ctx, id, "/plan.md")
		ok(t, err)
		wantCode(t, errOf(dst.UpdateMemory(ctx, id, m.ID, versions.MemoryUpdate{Content: ptr(strings.Repeat("x", 4097))}, me)), versions.CodeTooLarge)
		wantCode(t, dst.MakeDir(ctx, id, "/empty/deeper"), versions.CodePathConflict)
	})
}

// SQLite → PostgreSQL → SQLite gives the same bytes.
func TestImportAcrossBackends(t *testing.T) {
	if pgtest.Server() == "" {
		t.Skipf("needs a PostgreSQL server: set %s (scripts/pg start prints a URL)", pgtest.Env)
	}
	open := func(dsn string) *versions.DB {
		db, err := versions.Open(dsn, versions.Options{})
		ok(t, err)
		t.Cleanup(func() { db.Close() })
		return db
	}
	lite := open(filepath.Join(t.TempDir(), "a.db"))
	id := richStore(t, lite, "Across")
	want := exportBytes(t, lite, id)
	pg := open(pgtest.Database(t))
	importBytes(t, pg, want)
	if got := exportBytes(t, pg, id); !bytes.Equal(got, want) {
		t.Fatalf("PostgreSQL's export differs from SQLite's:\nSQLite:\n%s\nPostgreSQL:\n%s", want, got)
	}
	back := open(filepath.Join(t.TempDir(), "b.db"))
	importBytes(t, back, exportBytes(t, pg, id))
	if got := exportBytes(t, back, id); !bytes.Equal(got, want) {
		t.Fatalf("the export after SQLite → PostgreSQL → SQLite differs:\nbefore:\n%s\nafter:\n%s", want, got)
	}
}

func TestImportRefuses(t *testing.T) {
	src := openDB(t)
	id := richStore(t, src, "Src")
	exp := exportBytes(t, src, id)
	other := newStore(t, src, versions.StoreParams{Name: "Other"})
	create(t, src, other.ID, "/o.md", "o")
	otherExp := exportBytes(t, src, other.ID)

	dst := openDB(t)
	importBytes(t, dst, otherExp)
	t.Run("StoreIDClash", func(t *testing.T) {
		// The first store is new, the second is already there: neither
		// is imported.
		e := wantCode(t, errOf(dst.Import(ctx, bytes.NewReader(append(append([]byte{}, exp...), otherExp...)))), versions.CodeConflict)
		if !strings.Contains(e.Message, other.ID) || !strings.Contains(e.Message, "nothing was imported") {
			t.Errorf("message %q does not name the store or say nothing was imported", e.Message)
		}
		wantCode(t, errOf(dst.GetStore(ctx, id)), versions.CodeNotFound)
	})
	t.Run("VersionIDClash", func(t *testing.T) {
		// The same history under another store id: its version ids are
		// taken.
		renamed := bytes.ReplaceAll(otherExp, []byte(other.ID), []byte("memstore_01JFAKEOTHERSTORE000000000"))
		e := wantCode(t, errOf(dst.Import(ctx, bytes.NewReader(renamed))), versions.CodeConflict)
		if !strings.Contains(e.Message, "memver_") || !strings.Contains(e.Message, other.ID) {
			t.Errorf("message %q does not name the version and the store holding it", e.Message)
		}
		wantCode(t, errOf(dst.GetStore(ctx, "memstore_01JFAKEOTHERSTORE000000000")), versions.CodeNotFound)
	})

	t.Run("MemoryInTwoStores", func(t *testing.T) {
		// A store whose memory was deleted, and a copy of it under another
		// store id and other version ids: the deleted memory's id has
		// versions in both, and a memory belongs to one store.
		gone := newStore(t, src, versions.StoreParams{Name: "Gone"})
		g := create(t, src, gone.ID, "/g.md", "g")
		ok(t, src.DeleteMemory(ctx, gone.ID, g.ID, versions.MemoryDelete{}, me))
		goneExp := exportBytes(t, src, gone.ID)
		twin := bytes.ReplaceAll(goneExp, []byte(gone.ID), []byte("memstore_01JFAKEOTHERSTORE000000000"))
		twin = regexp.MustCompile(`memver_[0-9A-Z]+`).ReplaceAllFunc(twin, func(id []byte) []byte { return append([]byte("memver_0TWIN"), id[12:]...) })
		fresh := openDB(t)
		e := wantCode(t, errOf(fresh.Import(ctx, bytes.NewReader(append(append([]byte{}, goneExp...), twin...)))), versions.CodeInvalid)
		if !strings.Contains(e.Message, "belongs to one store") {
			t.Errorf("message %q does not say why", e.Message)
		}
	})

	lines := strings.SplitAfter(string(exp), "\n")
	for _, c := range []struct{ name, input string }{
		{"Empty", ""},
		{"NotJSON", "store: nope\n"},
		{"NoStoreLine", strings.Join(lines[1:], "")},
		{"UnknownType", lines[0] + `{"type":"memory_thing"}` + "\n"},
		{"AlteredContent", strings.Replace(string(exp), "# plan\\n- two\\n", "# plan\\n- 2\\n", 1)},
		{"MissingVersions", lines[0] + lines[1]},
		{"RepeatedID", string(exp) + lines[len(lines)-2]},
		{"BadPath", strings.Replace(string(exp), `"path":"/plan.md"`, `"path":"plan.md"`, 1)},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantCode(t, errOf(dst.Import(ctx, strings.NewReader(c.input))), versions.CodeInvalid)
			wantCode(t, errOf(dst.GetStore(ctx, id)), versions.CodeNotFound)
		})
	}

	t.Run("WithoutLimits", func(t *testing.T) {
		// An export from before the limits were part of it gets the
		// defaults.
		old := strings.Replace(string(otherExp), `,"max_memories":2000,"max_memory_bytes":102400`, "", 1)
		if old == string(otherExp) {
			t.Fatalf("the store line has no limits to remove: %s", lines[0])
		}
		fresh := openDB(t)
		done := importBytes(t, fresh, []byte(old))
		if s := done[0].Store; s.MaxMemories != versions.DefaultMaxMemories || s.MaxMemoryBytes != versions.DefaultMaxMemoryBytes {
			t.Errorf("limits %d, %d; want the defaults", s.MaxMemories, s.MaxMemoryBytes)
		}
	})
}
