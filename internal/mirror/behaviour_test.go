package mirror_test

import (
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/memfs/memfs/internal/mirror"
	"github.com/memfs/memfs/versions"
)

// scenario is one behaviour of the mount, played as the kernel requests
// the tools cause, against a real engine.
type scenario struct {
	name   string
	params versions.StoreParams
	strict bool
	run    func(t *testing.T, r *rig)
}

// tokenLine holds a GitHub token as the guard's rules find it, built at
// run time so that no scanner flags this file.
var tokenLine = "token: ghp_" + strings.Repeat("aB3dE5fG7h", 4)[:36] + "\n"

// The thread groups of the scenarios' processes.
const (
	shell = 100 + iota
	agent
	tool
)

var scenarios = []scenario{
	{name: "RedirectionTwice", run: func(t *testing.T, r *rig) {
		// echo v1 > f; echo v2 > f: the shell opens with O_TRUNC, moves
		// the descriptor to 1 (closing the one it opened: a flush), then
		// writes, then closes.
		h := r.create("/f.md", shell)
		r.flush(h)
		r.write(h, 0, "v1\n")
		r.close(h)
		h = r.open("/f.md", shell, true, true)
		if e := r.flush(h); e != 0 {
			t.Fatal(e)
		}
		if got, _ := r.content("/f.md"); got != "v1\n" {
			t.Fatalf("after the truncating open's first close the store has %q: an empty version", got)
		}
		r.write(h, 0, "v2\n")
		r.close(h)
		r.expectHistory("/f.md", "created:v1\n", "modified:v2\n")
	}},
	{name: "ColonTruncates", run: func(t *testing.T, r *rig) {
		r.writeFile("/f.md", "old\n", shell)
		h := r.open("/f.md", shell, true, true) // : > f
		r.flush(h)
		r.release(h)
		r.expectHistory("/f.md", "created:old\n", "modified:")
	}},
	{name: "Touch", run: func(t *testing.T, r *rig) {
		h := r.create("/t.md", shell)
		r.flush(h)
		r.release(h)
		r.expectHistory("/t.md", "created:")
	}},
	{name: "TouchTemporary", run: func(t *testing.T, r *rig) {
		h := r.create("/.tmp-9-touch", tool)
		r.release(h)
		r.advance(settle)
		if got := r.state("/.tmp-9-touch"); got != mirror.StateTemporary {
			t.Fatalf("state %v", got)
		}
	}},
	{name: "ScratchAndStored", run: func(t *testing.T, r *rig) {
		// vim's swap file: any bytes, never stored; a memory written
		// elsewhere, read here.
		h := r.create("/.w.md.swp", tool)
		if e := r.write(h, 0, "b0VIM \x00\xff"); e != 0 {
			t.Fatal(e)
		}
		r.close(h)
		if _, ok := r.content("/.w.md.swp"); ok {
			t.Fatal("a scratch file was stored")
		}
		r.unlink("/.w.md.swp")
		if _, err := r.db.CreateMemory(ctx, r.store, "/w.md", "from the CLI", versions.UserActor("usr_other")); err != nil {
			t.Fatal(err)
		}
		if got := r.read("/w.md", tool); got != "from the CLI" {
			t.Fatalf("read %q", got)
		}
	}},
	{name: "Fsync", run: func(t *testing.T, r *rig) {
		h := r.create("/s.md", tool)
		r.write(h, 0, "a")
		r.do(mirror.Fsync{Handle: h})
		r.write(h, 1, "b")
		r.do(mirror.Fsync{Handle: h})
		r.close(h)
		r.expectHistory("/s.md", "created:a", "modified:ab")
	}},
	{name: "TruncatePath", run: func(t *testing.T, r *rig) {
		r.writeFile("/t.md", "abcdef", shell)
		if _, e := r.do(mirror.Truncate{File: r.file("/t.md"), Size: 3}); e != 0 {
			t.Fatal(e)
		}
		r.expectHistory("/t.md", "created:abcdef", "modified:abc")
	}},
	{name: "AtomicSaveConflict/tmp", run: func(t *testing.T, r *rig) {
		atomicConflict(t, r, ".tmp-1-abc", agent, true)
	}},
	{name: "AtomicSaveConflict/sed", run: func(t *testing.T, r *rig) {
		atomicConflict(t, r, "sedAb12Cd", tool, true)
	}},
	{name: "AtomicSaveConflict/python", run: func(t *testing.T, r *rig) {
		atomicConflict(t, r, "tmpab_12cd3", tool, true)
	}},
	{name: "AtomicSaveConflict/NothingOpened", run: func(t *testing.T, r *rig) {
		// The saver opened nothing through this mount (its read came from
		// the page cache): the base is the target's head when the
		// temporary file was created.
		atomicConflict(t, r, ".tmp-2-def", agent, false)
	}},
	{name: "AtomicSaveStrict", strict: true, run: func(t *testing.T, r *rig) {
		r.writeFile("/x.md", "v1\n", shell)
		r.read("/x.md", tool)
		r.other("/x.md", "v2 elsewhere\n")
		r.feed()
		h := r.create("/sedZZZZZZ", tool)
		r.write(h, 0, "v3 from a stale read\n")
		r.close(h)
		if e := r.rename("/sedZZZZZZ", "/x.md", tool); e != syscall.ESTALE {
			t.Fatalf("rename over a memory changed since it was read, strict: %v, want ESTALE", e)
		}
		if got, _ := r.content("/x.md"); got != "v2 elsewhere\n" {
			t.Fatalf("the target after a refused atomic save: %q", got)
		}
		r.advance(settle)
		if got := r.state("/sedZZZZZZ"); got != mirror.StateTemporary {
			t.Fatalf("the temporary file after a refused rename: %v", got)
		}
	}},
	{name: "AtomicSaveOneCommit", run: func(t *testing.T, r *rig) {
		// The temporary file's close writes nothing: its rename, within
		// Settle, saves its content over the target.
		r.writeFile("/x.md", "v1\n", shell)
		before := r.writes
		h := r.create("/.tmp-3-xyz", agent)
		r.write(h, 0, "v2\n")
		r.close(h)
		if e := r.rename("/.tmp-3-xyz", "/x.md", agent); e != 0 {
			t.Fatal(e)
		}
		if got := r.writes - before; got != 1 {
			t.Fatalf("an atomic save cost %d commits, want 1", got)
		}
		vs := r.expectHistory("/x.md", "created:v1\n", "modified:v2\n")
		if vs[1].Conflict {
			t.Fatal("an atomic save with no other writer is flagged as a conflict")
		}
		if got := r.state("/x.md"); got != mirror.StateMemory {
			t.Fatalf("state after the save: %v", got)
		}
		r.advance(2 * grace)
		r.expectHistory("/x.md", "created:v1\n", "modified:v2\n")
	}},
	{name: "AtomicSaveAbandoned", run: func(t *testing.T, r *rig) {
		// A temporary file removed before Settle ends costs no commit.
		before := r.writes
		h := r.create("/sedAbc123", tool)
		r.write(h, 0, "never kept")
		r.close(h)
		r.unlink("/sedAbc123")
		r.advance(settle + grace)
		if got := r.writes - before; got != 0 {
			t.Fatalf("a temporary file removed before its row was due cost %d commits", got)
		}
		if _, ok := r.m.At("/sedAbc123"); ok {
			t.Fatal("a removed temporary file is still shown")
		}
	}},
	{name: "TemporaryRefusedWhenDue", params: versions.StoreParams{MaxHistoryBytes: 3000}, run: func(t *testing.T, r *rig) {
		// It fit the quota when written; the store filled elsewhere before
		// its row was due.
		h := r.create("/b.tmp", tool)
		if e := r.write(h, 0, strings.Repeat("p", 1200)); e != 0 {
			t.Fatalf("write: %v", e)
		}
		r.close(h)
		if _, err := r.db.CreateMemory(ctx, r.store, "/elsewhere.md", strings.Repeat("e", 2000), versions.UserActor("usr_other")); err != nil {
			t.Fatal(err)
		}
		r.advance(settle)
		if _, ok := r.m.At("/b.tmp"); ok {
			t.Fatal("a temporary file whose row the quota refused is still shown")
		}
	}},
	{name: "RefusedWriteNotRenamedIn", params: versions.StoreParams{MaxMemoryBytes: 1000}, run: func(t *testing.T, r *rig) {
		// A temporary file closed (due), opened again, and written past a
		// memory's size: renamed over a memory while open, it fails as
		// its close does, and the memory keeps its head. Closed, it holds
		// again what its first close confirmed, which a rename saves.
		r.writeFile("/x.md", "head\n", shell)
		r.writeFile("/x.md.tmp", "ok\n", tool)
		h := r.open("/x.md.tmp", tool, true, false)
		if e := r.write(h, 3, strings.Repeat("w", 2000)); e != syscall.EFBIG {
			t.Fatalf("write past a memory's size: %v, want EFBIG", e)
		}
		if e := r.rename("/x.md.tmp", "/x.md", tool); e != syscall.EFBIG {
			t.Fatalf("rename of refused content: %v, want EFBIG", e)
		}
		r.expectHistory("/x.md", "created:head\n")
		if e := r.close(h); e != syscall.EFBIG {
			t.Fatalf("close after a refused write: %v, want EFBIG", e)
		}
		if e := r.rename("/x.md.tmp", "/x.md", tool); e != 0 {
			t.Fatalf("rename of the content the first close confirmed: %v", e)
		}
		r.expectHistory("/x.md", "created:head\n", "modified:ok\n")
	}},
	{name: "RefusedWriteNotSettled", run: func(t *testing.T, r *rig) {
		// A temporary file closed (due), opened again with O_TRUNC,
		// written a line, then a credential the guard refuses: no row
		// holds the line alone, neither when Settle ends while it is
		// open (its directory's rename fails with the write's error
		// meanwhile) nor after its close failed, which takes it back to
		// what its first close confirmed: that is published.
		if _, e := r.do(mirror.MakeDir{Path: "/d", Mode: 0o755}); e != 0 {
			t.Fatal(e)
		}
		r.writeFile("/d/x.md.tmp", "before\n", tool)
		h := r.open("/d/x.md.tmp", tool, true, true)
		if e := r.write(h, 0, "part\n"); e != 0 {
			t.Fatal(e)
		}
		if e := r.write(h, 5, tokenLine); e != syscall.EACCES {
			t.Fatalf("write of a token: %v, want EACCES", e)
		}
		r.advance(settle)
		if _, e := r.do(mirror.RenameDir{From: "/d", To: "/e"}); e != syscall.EACCES {
			t.Fatalf("rename of the directory of refused content: %v, want EACCES", e)
		}
		if _, e := r.do(mirror.RemoveDir{Path: "/d"}); e != syscall.ENOTEMPTY {
			t.Fatalf("rmdir of the directory of refused content: %v, want ENOTEMPTY", e)
		}
		if e := r.close(h); e != syscall.EACCES {
			t.Fatalf("close after a refused write: %v, want EACCES", e)
		}
		r.advance(settle + 2*grace)
		r.expectHistory("/d/x.md.tmp", "created:before\n")
	}},
	{name: "RefusedWriteAtUnmount", run: func(t *testing.T, r *rig) {
		// The same file still open at the unmount: the unmount ends,
		// and keeps what the file's first close confirmed.
		r.writeFile("/x.md.tmp", "before\n", tool)
		h := r.open("/x.md.tmp", tool, true, true)
		r.write(h, 0, "part\n")
		if e := r.write(h, 5, tokenLine); e != syscall.EACCES {
			t.Fatalf("write of a token: %v, want EACCES", e)
		}
		if _, e := r.do(mirror.Unmounting{}); e != 0 {
			t.Fatalf("unmount: %v", e)
		}
		r.expectHistory("/x.md.tmp", "created:before\n")
	}},
	{name: "ReaderKeepsSettleTimer", run: func(t *testing.T, r *rig) {
		// A reader's open and close of a closed temporary file does not
		// put its row off: Settle counts from the writer's close.
		r.writeFile("/r.md.tmp", "r\n", tool)
		r.advance(settle / 2)
		r.close(r.open("/r.md.tmp", agent, false, false))
		r.advance(settle / 2)
		if got := r.state("/r.md.tmp"); got != mirror.StateTemporary {
			t.Fatalf("Settle after the writer's close, a reader's close between: %v, want its row written", got)
		}
	}},
	{name: "RewrittenWhenGraceEnds", run: func(t *testing.T, r *rig) {
		// A temporary file whose row is written, opened again and
		// rewritten, still open when its grace ends: the row's content is
		// published, and the rewrite is saved at its close, not lost.
		r.writeFile("/t.md.tmp", "one\n", tool)
		r.advance(settle)
		h := r.open("/t.md.tmp", tool, true, true)
		if e := r.write(h, 0, "two\n"); e != 0 {
			t.Fatal(e)
		}
		r.advance(2 * grace)
		r.expectHistory("/t.md.tmp", "created:one\n")
		if e := r.close(h); e != 0 {
			t.Fatalf("close of the rewrite: %v", e)
		}
		r.expectHistory("/t.md.tmp", "created:one\n", "modified:two\n")
	}},
	{name: "DueRowRefusedWhileRead", params: versions.StoreParams{MaxHistoryBytes: 3000}, run: func(t *testing.T, r *rig) {
		// A closed temporary file whose row the store refuses for good
		// when Settle ends (its quota filled meanwhile), while a reader
		// holds it open: its reader's close makes it due again, and it
		// goes when Settle's end is refused again, as a new file whose
		// save failed, rather than stay unsaved for good.
		r.writeFile("/q.md.tmp", "q\n", tool)
		h := r.open("/q.md.tmp", agent, false, false)
		if _, err := r.db.CreateMemory(ctx, r.store, "/big.md", strings.Repeat("b", 2500), versions.UserActor("usr_other")); err != nil {
			t.Fatal(err)
		}
		r.advance(settle)
		r.close(h)
		r.advance(settle)
		if got := r.state("/q.md.tmp"); got != 0 {
			t.Fatalf("a temporary file whose row was refused for good, after its reader's close: %v, want gone", got)
		}
	}},
	{name: "TruncateCutsCharacterOfDueFile", run: func(t *testing.T, r *rig) {
		// truncate(2) by path of a closed temporary file to a size that
		// cuts a character in two fails, and the file keeps what its
		// close confirmed: its row is written when Settle ends.
		r.writeFile("/c.md.tmp", "é\n", tool)
		size := int64(1)
		if _, e := r.do(mirror.Setattr{File: r.file("/c.md.tmp"), Size: &size}); e != syscall.EILSEQ {
			t.Fatalf("truncate into a character: %v, want EILSEQ", e)
		}
		r.advance(settle + 2*grace)
		r.expectHistory("/c.md.tmp", "created:é\n")
	}},
	{name: "WrittenAfterFlushBesideReader", run: func(t *testing.T, r *rig) {
		// A closed temporary file opened again, written, and released
		// with no flush after the write (a mapping's writeback) while a
		// reader holds it: Settle's end waited for the writer, and its
		// release sets the timer again.
		r.writeFile("/m.md.tmp", "one\n", tool)
		rd := r.open("/m.md.tmp", agent, false, false)
		w := r.open("/m.md.tmp", tool, true, false)
		r.flush(w)
		if e := r.write(w, 0, "two\n"); e != 0 {
			t.Fatal(e)
		}
		r.advance(settle)
		r.release(w)
		r.advance(settle + 2*grace)
		r.close(rd)
		r.expectHistory("/m.md.tmp", "created:two\n")
	}},
	{name: "RmdirLeavesOtherTemporaryFiles", run: func(t *testing.T, r *rig) {
		// Only the temporary files in the directory removed are
		// published first (the store must know it is not empty).
		h := r.create("/a.tmp", tool)
		r.write(h, 0, "elsewhere")
		r.close(h)
		r.advance(settle)
		if _, e := r.do(mirror.MakeDir{Path: "/d", Mode: 0o755}); e != 0 {
			t.Fatal(e)
		}
		if _, e := r.do(mirror.RemoveDir{Path: "/d"}); e != 0 {
			t.Fatal(e)
		}
		if got := r.state("/a.tmp"); got != mirror.StateTemporary {
			t.Fatalf("a temporary file elsewhere after an rmdir: %v", got)
		}
	}},
	{name: "TemporaryGraceEnds", run: func(t *testing.T, r *rig) {
		h := r.create("/notes.md.tmp", tool)
		r.write(h, 0, "kept\n")
		r.close(h)
		if _, ok := r.content("/notes.md.tmp"); ok {
			t.Fatal("a temporary file is a memory before its grace ended")
		}
		r.advance(settle + grace)
		r.expectHistory("/notes.md.tmp", "created:kept\n")
	}},
	{name: "TemporaryRewrittenThenRenamed", run: func(t *testing.T, r *rig) {
		h := r.create("/x.lock", tool)
		r.write(h, 0, "a")
		r.close(h)
		r.advance(settle)
		h = r.open("/x.lock", tool, true, false)
		r.write(h, 1, "b")
		r.close(h)
		h = r.create("/y.tmp", tool) // written, renamed before its close
		r.write(h, 0, "c")
		r.flush(h)
		r.write(h, 1, "d")
		if e := r.rename("/y.tmp", "/y.md", tool); e != 0 {
			t.Fatal(e)
		}
		r.release(h)
		r.rename("/x.lock", "/y.lock", tool)
		r.rename("/y.lock", "/x", tool)
		r.expectHistory("/x", "created:ab")
		r.expectHistory("/y.md", "created:cd")
	}},
	{name: "TemporaryReplaced", run: func(t *testing.T, r *rig) {
		// cp a x.tmp; cp b y.tmp; mv y.tmp x.tmp; mv x.tmp x.md
		for _, p := range []string{"/x.tmp", "/y.tmp"} {
			h := r.create(p, tool)
			r.write(h, 0, p)
			r.close(h)
		}
		r.advance(settle)
		if e := r.rename("/y.tmp", "/x.tmp", tool); e != 0 {
			t.Fatal(e)
		}
		r.rename("/x.tmp", "/x.md", tool)
		r.advance(2 * grace)
		r.expectHistory("/x.md", "created:/y.tmp")
		if ps, _ := r.db.ListPending(ctx, r.store, r.eng.Owner.Mount, r.now); len(ps) != 0 {
			t.Fatalf("pending rows left: %d", len(ps))
		}
	}},
	{name: "TemporaryRemoved", run: func(t *testing.T, r *rig) {
		h := r.create("/a.new", tool)
		r.write(h, 0, "gone")
		r.close(h)
		r.advance(settle)
		r.unlink("/a.new")
		r.advance(2 * grace)
		if _, ok := r.content("/a.new"); ok {
			t.Fatal("a removed temporary file was published")
		}
		if ps, _ := r.db.ListPending(ctx, r.store, r.eng.Owner.Mount, r.now); len(ps) != 0 {
			t.Fatalf("pending rows left: %d", len(ps))
		}
	}},
	{name: "TemporaryToScratch", run: func(t *testing.T, r *rig) {
		h := r.create("/b.tmp", tool)
		r.write(h, 0, "x")
		r.close(h)
		r.advance(settle)
		r.rename("/b.tmp", "/b.md~", tool)
		r.advance(2 * grace)
		if got := r.state("/b.md~"); got != mirror.StateScratch {
			t.Fatalf("state %v", got)
		}
		r.rename("/b.md~", "/c.md~", tool)
		r.rename("/c.md~", "/c.md", tool)
		r.expectHistory("/c.md", "created:x")
	}},
	{name: "NewRenamed", run: func(t *testing.T, r *rig) {
		// cp then mv: a new file never saved under its first name.
		h := r.create("/n.md", tool)
		r.write(h, 0, "one")
		r.rename("/n.md", "/n.md.new", tool)
		r.rename("/n.md.new", "/m.md", tool)
		r.close(h)
		r.expectHistory("/m.md", "created:one")
		h = r.create("/s.md", tool)
		r.rename("/s.md", "/.s.md.swp", tool)
		r.release(h)
		r.unlink("/.s.md.swp")
		if _, ok := r.m.At("/.s.md.swp"); ok {
			t.Fatal("a removed scratch file is still shown")
		}
	}},
	{name: "NewUnlinkedWhileOpen", run: func(t *testing.T, r *rig) {
		h := r.create("/u.md", tool)
		r.write(h, 0, "u")
		r.unlink("/u.md")
		r.close(h)
		if _, ok := r.content("/u.md"); ok {
			t.Fatal("a file removed before its close was saved")
		}
	}},
	{name: "NewRefusedAtRelease", params: versions.StoreParams{MaxMemories: 2}, run: func(t *testing.T, r *rig) {
		r.writeFile("/one.md", "1", shell)
		h := r.create("/two.md", shell)
		// Elsewhere, after the create's check: the store is full.
		if _, err := r.db.CreateMemory(ctx, r.store, "/three.md", "3", versions.UserActor("usr_other")); err != nil {
			t.Fatal(err)
		}
		if e := r.release(h); e == 0 {
			t.Fatal("a new file past the store's limit was saved")
		}
		if _, ok := r.m.At("/two.md"); ok {
			t.Fatal("a new file whose save failed is still shown after its release")
		}
	}},
	{name: "VimWritebackup", run: func(t *testing.T, r *rig) {
		r.writeFile("/v.md", "v1\n", shell)
		id := r.history("/v.md")[0].MemoryID
		r.read("/v.md", tool)
		if e := r.rename("/v.md", "/v.md~", tool); e != 0 {
			t.Fatal(e)
		}
		if !r.m.IsHeld("/v.md") {
			t.Fatal("the renamed-away memory is not held")
		}
		h := r.create("/v.md", tool)
		r.write(h, 0, "v2\n")
		r.close(h)
		r.unlink("/v.md~")
		r.advance(2 * grace)
		vs := r.expectHistory("/v.md", "created:v1\n", "modified:v2\n")
		if vs[1].MemoryID != id {
			t.Fatal("the editor's save is another memory")
		}
	}},
	{name: "PagesGivenAfterEachSave", run: func(t *testing.T, r *rig) {
		// The next open of a file saved in this mount reads nothing from
		// the daemon: the close that ends a save gives the kernel the
		// head as its pages; a reader's close gives nothing.
		pages := func(what, p string, want bool) {
			t.Helper()
			got := slices.ContainsFunc(r.notices, func(n mirror.Notice) bool { return n.Pages && n.Path == p })
			if got != want {
				t.Errorf("%s: pages given %v, want %v (notices %v)", what, got, want, r.notices)
			}
			r.notices = nil
		}
		r.writeFile("/n.md", "new", shell)
		pages("a new file", "/n.md", true)
		r.writeFile("/n.md", "overwritten", shell)
		pages("an overwrite", "/n.md", true)
		r.read("/n.md", shell)
		pages("a read", "/n.md", false)
		r.writeFile("/.tmp-7-n", "saved atomically", tool)
		r.rename("/.tmp-7-n", "/n.md", tool)
		pages("a temporary file renamed over it", "/n.md", true)
	}},
	{name: "EmacsBackupKept", run: func(t *testing.T, r *rig) {
		r.writeFile("/e.md", "e1\n", shell)
		r.rename("/e.md", "/e.md~", tool)
		h := r.create("/e.md", tool)
		r.write(h, 0, "e2\n")
		r.close(h)
		if got := r.state("/e.md~"); got != mirror.StateScratch {
			t.Fatalf("the backup after the save: %v", got)
		}
		r.expectHistory("/e.md", "created:e1\n", "modified:e2\n")
	}},
	{name: "HeldGraceEnds", run: func(t *testing.T, r *rig) {
		r.writeFile("/h.md", "h\n", shell)
		r.writeFile("/g.md", "g\n", shell)
		r.rename("/h.md", "/h.md~", tool)
		r.rename("/g.md", "/g.md~", tool)
		r.unlink("/g.md~")
		r.advance(grace)
		for _, p := range []string{"/h.md", "/g.md"} {
			if _, ok := r.content(p); ok {
				t.Fatalf("%s is still in the store after its hold ended", p)
			}
		}
		if got := r.state("/h.md~"); got != mirror.StateScratch {
			t.Fatalf("the backup after its hold: %v", got)
		}
	}},
	{name: "MemoryMovedAndReplaced", run: func(t *testing.T, r *rig) {
		r.writeFile("/a.md", "a", shell)
		r.writeFile("/b.md", "b", shell)
		r.writeFile("/c.md", "c", shell)
		r.file("/b.md")
		h := r.open("/c.md", tool, false, false)
		if e := r.rename("/a.md", "/d.md", shell); e != 0 {
			t.Fatal(e)
		}
		r.rename("/d.md", "/b.md", shell) // b not open: gone
		r.rename("/b.md", "/c.md", shell) // c open: unlinked
		if f, _ := r.m.File(r.file("/c.md")); f.State != mirror.StateMemory {
			t.Fatalf("state %v", f.State)
		}
		r.release(h)
		if got, _ := r.content("/c.md"); got != "a" {
			t.Fatalf("content %q", got)
		}
		r.notices = nil
		r.feed()
		if len(r.notices) != 0 {
			t.Fatalf("own changes came back as news: %v", r.notices)
		}
	}},
	{name: "UnlinkedWhileOpen", run: func(t *testing.T, r *rig) {
		r.writeFile("/o.md", "open", shell)
		h := r.open("/o.md", tool, true, false)
		r.unlink("/o.md")
		r.write(h, 0, "more")
		if e := r.close(h); e != 0 {
			t.Fatal(e)
		}
		if _, ok := r.content("/o.md"); ok {
			t.Fatal("an unlinked file was saved")
		}
		r.writeFile("/p.md", "p", shell)
		r.file("/p.md")
		r.unlink("/p.md")
	}},
	{name: "ForeignChanges", run: func(t *testing.T, r *rig) {
		r.writeFile("/f.md", "mine", shell)
		r.writeFile("/g.md", "g", shell)
		r.feed()
		r.notices = nil
		fid, gid := r.file("/f.md"), r.file("/g.md")
		r.other("/f.md", "theirs")
		if err := r.db.DeleteMemory(ctx, r.store, "/g.md", versions.MemoryDelete{}, versions.UserActor("usr_other")); err != nil {
			t.Fatal(err)
		}
		r.feed()
		if len(r.notices) == 0 {
			t.Fatal("a change made elsewhere told the kernel nothing")
		}
		if got := r.read("/f.md", tool); got != "theirs" {
			t.Fatalf("read after a change elsewhere: %q", got)
		}
		_ = fid
		if _, ok := r.m.File(gid); ok {
			t.Fatal("a memory deleted elsewhere is still in the mirror")
		}
	}},
	{name: "OwnChangeBeforeItsAnswer", run: func(t *testing.T, r *rig) {
		// The feed may bring a save back before the mount has its answer
		// (another thread reads the feed meanwhile): it is known as the
		// mount's own at once, with nothing to wait for.
		r.writeFile("/f.md", "one", shell)
		r.writeFile("/g.md", "g", shell)
		r.feed()
		r.notices = nil
		h := r.open("/f.md", shell, true, true)
		r.write(h, 0, "two")
		p := r.m.Apply(mirror.Flush{Handle: h})
		if p.Ask == nil || p.Ask.Kind != mirror.AskSave {
			t.Fatalf("flush asked %+v, want a save", p.Ask)
		}
		a := r.eng.Execute(ctx, *p.Ask)
		cs, pos, err := r.db.Changes(ctx, r.store, r.pos)
		if err != nil || len(cs) != 1 {
			t.Fatalf("the feed after the save: %+v %v", cs, err)
		}
		r.pos = pos
		if fp := r.m.Apply(mirror.Foreign{Change: cs[0]}); !fp.Own || len(fp.Notify) != 0 {
			t.Fatalf("the mount's own save, read from the feed before its answer: %+v", fp)
		}
		r.other("/g.md", "theirs")
		if r.m.Apply(a); r.read("/f.md", tool) != "two" {
			t.Fatal("the save's answer after its feed copy")
		}
		r.release(h)
		r.feed()
		if len(r.notices) == 0 {
			t.Fatal("another's change after it told the kernel nothing")
		}
		r.expectHistory("/f.md", "created:one", "modified:two")
	}},
	{name: "LeaseLapsed", run: func(t *testing.T, r *rig) {
		h := r.create("/l.tmp", tool)
		r.write(h, 0, "l")
		r.close(h)
		r.advance(settle)
		f, _ := r.m.File(r.file("/l.tmp"))
		// Recovery, elsewhere, published the row; the mount finds it no
		// longer its own when its grace ends.
		if _, _, err := r.db.PublishPending(ctx, r.store, r.eng.Owner, f.Pending, "/l.tmp"); err != nil {
			t.Fatal(err)
		}
		r.advance(2 * grace)
		r.expectHistory("/l.tmp", "created:l")
		if got := r.state("/l.tmp"); got != mirror.StateMemory {
			t.Fatalf("state %v", got)
		}
	}},
	{name: "RefusedAtWrite/guard", run: func(t *testing.T, r *rig) {
		h := r.create("/s.md", shell)
		r.flush(h)
		if e := r.write(h, 0, tokenLine); e != syscall.EACCES {
			t.Fatalf("write of a token: %v, want EACCES", e)
		}
		r.close(h)
	}},
	{name: "RefusedAtWrite/quota", params: versions.StoreParams{MaxHistoryBytes: 2000}, run: func(t *testing.T, r *rig) {
		r.writeFile("/q.md", strings.Repeat("q", 1500), shell)
		st, _ := r.db.GetStore(ctx, r.store)
		r.m.SetStore(st)
		h := r.open("/q.md", shell, true, true)
		if e := r.write(h, 0, strings.Repeat("r", 1000)); e != syscall.EDQUOT {
			t.Fatalf("write past the history quota: %v, want EDQUOT", e)
		}
		r.close(h)
	}},
	{name: "UnmountPublishesAndDeletesHeld", run: func(t *testing.T, r *rig) {
		h := r.create("/u.tmp", tool)
		r.write(h, 0, "u")
		r.close(h)
		r.writeFile("/h.md", "h", shell)
		r.file("/h.md")
		r.rename("/h.md", "/h.md~", agent)
		r.do(mirror.Unmounting{})
		r.expectHistory("/u.tmp", "created:u")
		if _, ok := r.content("/h.md"); ok {
			t.Fatal("the held memory is still in the store after the unmount")
		}
		for e := range r.timers {
			if _, ok := e.(mirror.GraceEnded); ok {
				t.Fatalf("a timer is set after the unmount: %v", e)
			}
		}
	}},
	{name: "DeletedElsewhereWhileOpen", run: func(t *testing.T, r *rig) {
		r.writeFile("/d.md", "d", shell)
		r.feed()
		h := r.open("/d.md", tool, true, false)
		if err := r.db.DeleteMemory(ctx, r.store, "/d.md", versions.MemoryDelete{}, versions.UserActor("usr_other")); err != nil {
			t.Fatal(err)
		}
		r.feed()
		r.write(h, 0, "mine")
		if e := r.close(h); e != syscall.ESTALE {
			t.Fatalf("save of a memory deleted elsewhere: %v, want ESTALE", e)
		}
	}},
	{name: "DirectoryMoved", run: func(t *testing.T, r *rig) {
		r.writeFile("/a/x.md", "x", shell)
		h := r.open("/a/x.md", tool, true, false)
		if _, e := r.do(mirror.RenameDir{From: "/a", To: "/b"}); e != 0 {
			t.Fatalf("rename of a directory: %v", e)
		}
		if got := r.state("/b/x.md"); got != mirror.StateMemory {
			t.Fatalf("the file below the moved directory: %v", got)
		}
		r.write(h, 0, "y")
		if e := r.close(h); e != 0 {
			t.Fatal(e)
		}
		if vs := r.expectHistory("/b/x.md", "created:x", "modified:x", "modified:y"); vs[2].Conflict {
			t.Fatal("a save after its directory moved is flagged as a conflict")
		}
	}},
	{name: "NewTruncatedByPath", run: func(t *testing.T, r *rig) {
		h := r.create("/n.md", shell)
		r.write(h, 0, "abc")
		if _, e := r.do(mirror.Truncate{File: r.file("/n.md"), Size: 1}); e != 0 {
			t.Fatalf("truncate(2) of a file not saved yet: %v", e)
		}
		r.release(h)
		r.expectHistory("/n.md", "created:a")
	}},
	{name: "HeldRenamedAgain", run: func(t *testing.T, r *rig) {
		r.writeFile("/b.md", "b", shell)
		r.file("/b.md")
		r.rename("/b.md", "/b.md~", agent)
		r.rename("/b.md~", "/#b.md#", agent)
		if got := r.state("/#b.md#"); got != mirror.StateHeld {
			t.Fatalf("a held backup renamed to another scratch name: %v", got)
		}
		r.advance(2 * grace)
		if _, ok := r.content("/b.md"); ok {
			t.Fatal("the held memory outlived its hold")
		}
	}},
	{name: "RefusedAtWrite/offline", run: func(t *testing.T, r *rig) {
		h := r.create("/off.md", shell)
		if _, e := r.do(mirror.Write{Handle: h, Data: []byte("x"), Offline: true}); e != syscall.EIO {
			t.Fatalf("write while the backend is offline: %v, want EIO", e)
		}
		r.release(h)
	}},
}

// atomicConflict is the two-mount case: this mount's process reads x.md
// (v1), another writer saves v2, then the process writes a temporary file
// and renames it over x.md: v3 is flagged as a conflict.
func atomicConflict(t *testing.T, r *rig, temp string, tgid int, opens bool) {
	r.writeFile("/x.md", "v1\n", shell)
	r.feed()
	if opens {
		if got := r.read("/x.md", tgid); got != "v1\n" {
			t.Fatalf("read %q", got)
		}
	} else {
		r.file("/x.md")
	}
	h := r.create("/"+temp, tgid)
	r.other("/x.md", "v2 elsewhere\n")
	r.feed()
	r.write(h, 0, "v3 from v1\n")
	r.close(h)
	if e := r.rename("/"+temp, "/x.md", tgid); e != 0 {
		t.Fatalf("rename: %v", e)
	}
	vs := r.expectHistory("/x.md", "created:v1\n", "modified:v2 elsewhere\n", "modified:v3 from v1\n")
	if !vs[2].Conflict {
		t.Fatal("an atomic save over a version it did not read is not flagged as a conflict")
	}
	if ps, _ := r.db.ListPending(ctx, r.store, r.eng.Owner.Mount, r.now); len(ps) != 0 {
		t.Fatalf("pending rows left: %d", len(ps))
	}
}

// runScenarios plays every scenario and returns the changes of state they
// made.
func runScenarios(t *testing.T) []mirror.Transition {
	var all []mirror.Transition
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) {
			r := newRig(t, s.params, s.strict)
			s.run(t, r)
			all = append(all, r.moves...)
		})
	}
	return all
}
