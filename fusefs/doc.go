package fusefs

// Locks. A request may wait on the engine (SQLite's busy timeout, a
// PostgreSQL round trip) for a long time, so what it holds meanwhile must
// stop as little else as possible. There are two kinds of lock:
//
//   - fileNode.mu, a file's lock, is the only one held while calling the
//     engine: a save, load, publication or drop of a pending row runs under
//     it, so that writes, saves and the buffer of one file are ordered. It
//     stops only requests on that file.
//   - Every other lock is a leaf: held for a few map or field operations,
//     never while calling the engine, taking another lock, or calling into
//     go-fuse or the kernel. They are
//     storeMount's storeRow.mu, memoryCounts.mu, ownChanges.mu, inodes.mu
//     (store.go, ino.go); index.mu (index.go); metaTable.mu (meta.go);
//     contents.mu (contents.go); publisher.mu (pending.go);
//     scratchFiles.mu (scratch.go); notifier.mu (notify.go). unsavedBudget (budget.go), pendingInos (ino.go) and
//     Server.offline (outage.go) are atomics.
//
// Under a file's lock any leaf may be taken, and go-fuse's own tree lock
// (Inode.Parent, ForgetPersistent). Two files' locks are held together only
// by a rename, source then destination (rename.go: a pending source
// published over the destination); the kernel holds the parent
// directories' locks for a rename and files have one parent, so no two
// renames take the same two files, let alone in opposite orders.
//
// Nothing is held while the kernel is notified: a notification waits for
// the requests on the inodes it names, which may wait for a file's lock.
// One exception: storePages (file.go) holds a file's lock while the kernel
// stores the file's pages, and only while no handle of the file is open:
// then no read or write holds those pages while it waits for the lock.
// Requests leave their notifications to a goroutine (notify.go); the
// watcher (watch.go) notifies holding nothing.
//
// dirNode and rootNode have no lock. Server.once runs Unmount, engine calls
// included, and nothing else takes it. The watcher alone uses
// storeMount.seq.
