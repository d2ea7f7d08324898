package fusefs

// The store tree is thin go-fuse nodes over internal/mirror. A fileNode
// holds its inode, its storeMount and its mirror.ID; a fileHandle its
// mirror.HandleID; a dirNode its inode. Every fact about a file (state,
// buffer, base version, mode and times, what the kernel's caches hold of
// it, refusals, the unsaved budget it holds, pending row, held memory) and
// about the store as this mount shows it (listing index, inode numbers,
// directories' mode and times, the origin of its commits, count of memories)
// lives in the store's mirror.Mirror, and every decision is made in its
// Apply. A request becomes an event; storeMount.run gives it to
// mirror.Mirror.Run, which applies it, asks the engine (Engine.Execute)
// and applies the answers, and carries out the rest of each plan: the
// errno, the timers (mirror.Timers, whose ends are applied like
// requests), the kernel notifications (notify.go). The
// watcher (watch.go) gives the mirror each change of the feed, and the
// unmount flush is the event mirror.Unmounting.
//
// Locks: the mirror's (internal/mirror, in their order), then go-fuse's
// own tree lock (Inode.Parent, GetChild), which may be taken under a
// file's lock, and notifier.mu (notify.go), a leaf. Server.offline is an
// atomic.
//
// Nothing is held while the kernel is notified:
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
