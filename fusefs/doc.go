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
// States of a file name. Every file the mount shows is in one of these
// (fileNode.stateLocked names it from file.go's fields; held is a scratch
// node whose memory the publisher holds by its old path). They are
// internal/mirror's states, whose package doc holds the transition table
// its tests hold the code to; this mount makes the same decisions in its
// nodes until they move onto the mirror:
//
//	state      what it is                                 the store has
//	memory     a memory (memID set)                       the memory
//	new        created here, no save yet (pending)        nothing
//	temporary  a temporary name saved (unpublished,       a pending row owned
//	           pendID): pending.go                        by this mount's lease
//	scratch    a scratch name (scratch): scratch.go       nothing
//	held       scratch holding a memory renamed to a      the memory, at its
//	           scratch name (publisher.held by path)      old path, for the grace
//	unlinked   removed or replaced while open (unlinked)  nothing of this node
//
// Transitions (the request, what the engine is asked, the new state):
//
//	new        first close/fsync, ordinary name   CreateMemory              memory
//	new        first close/fsync, temporary name  SavePending               temporary
//	new        rename to a scratch name           -                         scratch
//	new        rename to any other name           save at the new name      memory/temporary
//	new        last close with nothing saved      -                         gone
//	temporary  close/fsync                        SavePending (same row)    temporary
//	temporary  rename over a memory               Save there, row consumed  memory
//	           (one commit; based on the version the renaming process last
//	           opened, else the target's head at the temporary's creation:
//	           a conflict, or ESTALE in strict mode; rename.go atomicBase)
//	temporary  rename to a free name              PublishPending there      memory
//	temporary  the grace ends, unmount, rmdir     PublishPending            memory
//	temporary  unlink, rename to a scratch name   DropPending               gone/scratch
//	temporary  its mount dies                     others PublishPending     (the store's)
//	scratch    rename to an ordinary name         save at the new name      memory/temporary
//	scratch    unlink                             -                         gone
//	memory     save                               UpdateMemory              memory
//	memory     close of a handle that only        -                         memory
//	           truncated (the write's close, or the last release, saves)
//	memory     rename to a scratch name           - (hold)                  held
//	memory     unlink, replaced by a rename       DeleteMemory/Rename       unlinked
//	held       a new file saved at the old path   UpdateMemory of it        scratch (+memory)
//	held       the grace ends, unmount            DeleteMemory              scratch
//	unlinked   last close                         -                         gone
//
// dirNode and rootNode have no lock, nor have the history tree's nodes
// (history.go: what an entry shows is an atomic pointer, read again once
// the watcher drops it). Server.once runs Unmount, engine calls
// included, and nothing else takes it. The watcher alone uses
// storeMount.seq.
