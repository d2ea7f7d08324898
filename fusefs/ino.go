package fusefs

import (
	"hash/fnv"

	"github.com/memfs/memfs/versions"
)

// Inode numbers. The kernel and programs (find, du, tar, rsync, git) tell
// files apart by st_ino, so two live nodes of one mount must never share
// one, and a node must keep its number for as long as the kernel knows it.
// Every number the mount hands out comes from the functions below:
//
//	number                  what                                      from
//	1                       the mount root (FUSE_ROOT_ID)             rootIno
//	2 … 2^61-1              a memory: the engine's Memory.Ino,        fileIno
//	                        unique in the database, never reused
//	                        (a row key counting up from 1); kept
//	                        through renames, also to a scratch name,
//	                        whose node keeps it until removed
//	2^61|0, 2^61|1          a memory whose Ino is 0 or 1 (kept off    fileIno
//	                        the root's number)
//	2^62|n, n = 1, 2, …     a file created in the mount: pending,     pendingInos.next
//	                        not yet published, or scratch; kept
//	                        by the memory it is published as, for
//	                        as long as the mount runs; a scratch
//	                        file keeps it until removed or unmounted,
//	                        what the kernel forgets included
//	                        (scratchFiles)                            inodes.file
//	                        or a memory, once a node standing for     (renumber)
//	                        it was renamed to a scratch name
//	2^63|fnv64a(store,      a directory, a store's top directory      inodes.dir
//	  path[, generation])   ("/") included
//	2^63|fnv64a(".history", the history tree: its top (no store),     historyDirIno
//	  store, path)          a store's and a path's directory
//	2^62|2^61|fnv64a(id)    a version in the history tree             historyEntryIno
//	  mod 2^61
//
// "." and ".." repeat the numbers of the nodes they name. A directory's
// number is a hash, so a path has the same number in every mount of the
// store and across remounts, and the store id in it keeps stores apart. The
// top bit keeps it off every other range; go-fuse numbers nodes given no
// number from 2^63 up too, and the mount gives none such. Generations tell
// apart successive kernel identities of a path or memory: a directory
// moved away keeps its number, so the next directory at its old path gets
// a new one; a file node replaced by a rename keeps standing for the
// destination memory, so the next lookup of that memory is a new inode
// (StableAttr.Gen). An editor's backup rename (notes.md to notes.md~)
// leaves the memory's number on the backup while the new notes.md
// continues the memory: new nodes of the memory get another number, or
// cmp, diff and cp would take the two files for one.

// historyDirIno is the number of a directory of the history tree
// (history.go); store "" is the tree's top.
func historyDirIno(store, path string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(".history\x00"))
	h.Write([]byte(store))
	h.Write([]byte{0})
	h.Write([]byte(path))
	return h.Sum64() | dirInoBit
}

// historyEntryIno is the number of a version's file in the history tree:
// pending numbers count up from 1 and never reach 2^61.
func historyEntryIno(versionID string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(versionID))
	return pendingInoBit | lowMemoryInoBit | h.Sum64()&(lowMemoryInoBit-1)
}

// rootIno is the mount root's number.
const rootIno = 1

const (
	lowMemoryInoBit = 1 << 61
	pendingInoBit   = 1 << 62
	dirInoBit       = 1 << 63
)

// fileIno is a memory's inode number.
func fileIno(m *versions.Memory) uint64 {
	if m.Ino <= 1 {
		return lowMemoryInoBit | m.Ino
	}
	return m.Ino
}
