// Package mirror is one memory store as a mount shows it, with no FUSE in
// it: files by id, names to ids, each file's state, buffer, base version,
// mode and times, what the kernel's caches hold of it (the size it
// believes, whether its pages are the content), the refusals that stick to
// its content, the unsaved budget it holds, its pending row, and its open
// handles (what each open and its writes did); and for the store, the
// listing index (Index), the inode numbers handed out (files', memories',
// directories'), the directories' mode and times, the memories held for
// editors, the versions each process last opened, the count of memories
// and the origin its commits record.
//
// Apply is the only way its state changes. It takes an event (a kernel
// request, a timer's end, the engine's answer to a request of a plan, a
// change the feed brought, the unmount) and returns a Plan: what to answer
// the kernel, what to ask the engine, what to tell the kernel, which timers
// to set or stop. Apply does no I/O; Run carries a plan out as far as the
// engine goes (Execute asks the engine) and gives each answer back to
// Apply as Answered, which finishes the transition (the one place for the
// bookkeeping after a commit) and may ask again. Timers runs the plans'
// timers, whose ends are applied like requests.
//
// Locks, in the order they are taken. A request may wait on the engine
// (SQLite's busy timeout, a PostgreSQL round trip) for a long time, so
// what it holds meanwhile must stop as little else as possible.
//
//   - A file's lock (Lock, a mutex per ID) is the only one held while
//     calling the engine: Run takes the locks of the files a request names
//     before its first Apply and holds them until its plan is carried
//     out, so that one file's writes, saves, loads, publications and drops
//     are ordered. A plan asking the engine about another file takes that
//     file's lock and applies the event again under it. A request holding
//     several files' locks (a rename: source and destination; a
//     directory's rename or removal, an unmount: each temporary file
//     below) takes them in ascending order of ID, or adds one only while
//     it is free, else lets go of all and takes them again in order, so
//     no two requests wait for each other.
//   - inflight (flights.go): a request is in flight from its engine call
//     to its answer's Apply (never while waiting for a file's lock). A
//     change made elsewhere that touches a request in flight (its path,
//     above or below it, its memory; any memory's change for a count) is
//     applied after Landed, which waits, holding no lock, for those
//     requests begun before it was called: their answers are about the
//     state before the change. Its own lock is a leaf.
//   - The mirror's own lock (Apply and the read accessors), never held
//     while the engine is asked or the kernel told; under it, the
//     leaves: the index's, the content cache's, LastOpened's. Timers' lock
//     is a leaf too. The budget, the scratch cap and Inos are atomics.
//
// States of a file (State):
//
//	memory     a memory the store has at the file's path
//	new        created in this mount, nothing saved yet
//	temporary  an atomic saver's temporary name, saved as a pending row
//	           only this mount shows (durable once Settle after its
//	           close ends: a rename before then saves it in one commit)
//	scratch    an editor's swap or backup name: never stored
//	held       a memory renamed to a scratch name: the store keeps it at
//	           its old path until the grace ends or a save there takes it
//	unlinked   removed or replaced while open: its handles still read it
//
// Transitions. Each row is the state a file leaves, the event (the kernel
// request, timer or feed change that caused it: "replaced" is a file losing
// its name to another, "taken" a held memory a save at its path made a
// version of), what the engine is asked, and the state it enters; "-" is no
// file yet, "gone" a file that left the mirror. TestTransitionTable holds
// the code to this table: every change of state the suite makes is a row,
// and every row is made by the suite.
//
//	from       event                engine        to
//	-          created              -             new
//	-          created              -             scratch
//	-          looked               -             memory
//	new        flushed              save          memory
//	new        fsynced              save          memory
//	new        released             save          memory
//	new        settled              save-pending  temporary
//	new        released             -             gone
//	new        renamed              -             scratch
//	new        renamed              -             new
//	new        renamed              save          memory
//	new        unlinked             -             unlinked
//	new        unlinked             -             gone
//	new        refused              save-pending  gone
//	new        truncated            save          memory
//	temporary  flushed              save-pending  temporary
//	temporary  renamed              save          memory
//	temporary  renamed              drop          scratch
//	temporary  renamed              -             temporary
//	temporary  grace                publish       memory
//	temporary  unlinked             drop          gone
//	temporary  replaced             drop          gone
//	temporary  published-elsewhere  -             memory
//	scratch    renamed              save          memory
//	scratch    renamed              -             scratch
//	scratch    unlinked             -             gone
//	memory     flushed              save          memory
//	memory     fsynced              save          memory
//	memory     released             save          memory
//	memory     truncated            save          memory
//	memory     renamed              -             held
//	memory     renamed              move          memory
//	memory     unlinked             delete        gone
//	memory     unlinked             delete        unlinked
//	memory     replaced             -             gone
//	memory     replaced             -             unlinked
//	memory     foreign              -             memory
//	memory     foreign              -             gone
//	held       taken                -             scratch
//	held       hold                 delete        scratch
//	held       unlinked             -             gone
//	held       renamed              -             held
//	unlinked   released             -             gone
//
// When a row applies:
//   - A new file's first save is at close of a handle that wrote, or at
//     the release of its last handle (touch): save (a version of the
//     memory held at its path, if one is, else a new memory). Under a
//     temporary name the close saves nothing: the file is due, and its
//     pending row is written when Settle ends (settled), unless its rename
//     saves it first, in one commit with no row, or an unlink drops it
//     with none (an fsync writes the row at once). A save that failed
//     leaves a new file nothing: its release drops it. A due file keeps
//     what its close confirmed (Saved): written again, Settle waits for
//     its writer's close (rewriting); written what a save refuses, its
//     failed close takes it back to that (restoreDue).
//   - A handle that only truncated (O_TRUNC, ftruncate to 0) saves nothing
//     at close: a shell's `> f` closes a duplicate of the descriptor
//     before the write that follows. The write's close, or the release,
//     saves, so `echo v2 > f` is one version and `: > f` still saves the
//     empty file once.
//   - A rename of a new, scratch or temporary file to an ordinary name
//     saves its content there: over a memory, as a version of it whose base
//     is the version of the target the renaming process (its thread group)
//     last opened, else the target's head when the temporary file was
//     created; a conflict when the head moved on since, refused with ESTALE
//     in strict mode. A temporary file's pending row, if it has one,
//     goes in the same commit.
//   - A memory renamed to a scratch name is held; one renamed elsewhere is
//     moved.
//
// Own changes. Every write the engine commits for this mirror records its
// origin (Mirror.Origin, versions.WithOrigin); a change the feed brings
// with that origin is this mount's own and changes nothing. It is known
// from the moment it commits, before its answer is applied, so the feed
// waits for none of this mount's requests (which may wait long on the
// database's lock) but those a change made elsewhere touches (Landed),
// and there is no time window.
//
// A temporary file whose pending row others published (its mount's lease
// lapsed) is the memory they made of it from this mount's next request on
// it: the engine finds the row no longer this mount's (resolved).
package mirror
