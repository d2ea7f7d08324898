package fusefs

// The store tree is thin go-fuse nodes over internal/mirror. A fileNode
// holds its inode, its storeMount and its mirror.ID; a fileHandle its
// mirror.HandleID; a dirNode its inode. Every fact about a file (state,
// buffer, base version, mode and times, what the kernel's caches hold of
// it, refusals, the unsaved budget it holds, pending row, held memory) and
// about the store as this mount shows it (listing index, inode numbers,
// directories' mode and times, own feed positions, count of memories)
// lives in the store's mirror.Mirror, and every decision is made in its
// Apply. A request becomes an event; storeMount.run gives it to
// mirror.Mirror.Run, which applies it, asks the engine (Engine.Execute)
// and applies the answers, and carries out the rest of each plan: the
// errno, the timers (mirror.Timers, whose ends are applied like
// requests), the kernel notifications (notify.go). The
// watcher (watch.go) gives the mirror each change of the feed, and the
// unmount flush is the event mirror.Unmounting.
//
// Locks. A request may wait on the engine (SQLite's busy timeout, a
// PostgreSQL round trip) for a long time, so what it holds meanwhile must
// stop as little else as possible.
//
//   - A file's lock (mirror.Mirror.Lock, a mutex per mirror.ID inside the
//     mirror) is the only one held while calling the engine: run takes the
//     locks of the files a request names before its first Apply and holds
//     them until its plan is carried out, so that one file's writes, saves,
//     loads, publications and drops are ordered. A plan asking the engine
//     about another file takes that file's lock and applies the event again
//     under it. Two files' locks are held together only by a rename,
//     source then destination; the kernel holds the parent directories'
//     locks for a rename and files have one parent, so no two renames
//     take the same two files in opposite orders.
//   - The mirror's inflight lock: held shared by Run from an engine
//     request to its answer's Apply (never while waiting for a file's
//     lock), and alone by the watcher's Apply of a change from the feed, so
//     that this mount's own commit is known as its own before the feed's
//     copy of it is applied. Taken before the mirror's own lock.
//   - Every other lock is a leaf: held for a few map or field operations,
//     never while calling the engine, taking another lock, or calling into
//     go-fuse or the kernel. They are the mirror's own lock (Apply), its
//     index's, content cache's and timers' (mirror.Timers), and
//     notifier.mu (notify.go). The unsaved budget, the
//     scratch cap, the inode allocator and Server.offline are atomics.
//
// Under a file's lock any leaf may be taken, and go-fuse's own tree lock
// (Inode.Parent, GetChild). Nothing is held while the kernel is notified:
// a notification waits for the requests on the inodes it names, which may
// wait for a file's lock. One exception: storePages (store.go) holds a
// file's lock while the kernel stores the file's pages, and only while no
// handle of the file is open: then no read or write holds those pages
// while it waits for the lock. Plans' notifications run in a goroutine
// (notify.go); the watcher notifies holding nothing.
//
// dirNode and rootNode have no lock, nor have the history tree's nodes
// (history.go: what an entry shows is an atomic pointer, read again once
// the watcher drops it). Server.once runs Unmount, engine calls
// included, and nothing else takes it. The watcher alone uses
// storeMount.seq.
