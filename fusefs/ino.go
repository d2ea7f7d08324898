package fusefs

import (
	"hash/fnv"

	"github.com/memfs/memfs/versions"
)

// Inode numbers. The kernel and programs (find, du, tar, rsync, git) tell
// files apart by st_ino, so two live nodes of one mount never share one,
// and a node keeps its number for as long as the kernel knows it. The
// store tree's numbers come from its mirror (internal/mirror), which hands
// them out from the mount's ranges and keeps them while the mount runs:
//
//	number                  what
//	1                       the mount root (FUSE_ROOT_ID): rootIno
//	2 … 2^61-1              a memory: the engine's Memory.Ino, unique in
//	                        the database and never reused (fileIno)
//	2^61|0, 2^61|1          a memory whose Ino is 0 or 1
//	2^62|n, n = 1, 2, …     a file created in the mount, kept by the memory
//	                        it is saved as; and a memory's next node once a
//	                        node keeping its number was renamed to a scratch
//	                        name (an editor's backup)
//	2^63|n, n = 1, 2, …     a directory, by path: a directory moved away
//	                        takes its number along, the next one at its
//	                        old path gets another
//	2^63|fnv64a(".history", the history tree: its top (no store), a
//	  store, path)          store's and a path's directory
//	2^62|2^61|fnv64a(id)    a version in the history tree
//	  mod 2^61
//
// "." and ".." repeat the numbers of the nodes they name.
const (
	rootIno         = 1
	lowMemoryInoBit = 1 << 61
	pendingInoBit   = 1 << 62
	dirInoBit       = 1 << 63
)

// fileIno is a memory's own inode number.
func fileIno(m *versions.Memory) uint64 {
	if m.Ino <= 1 {
		return lowMemoryInoBit | m.Ino
	}
	return m.Ino
}

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
