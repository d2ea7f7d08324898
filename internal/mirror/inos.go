package mirror

import (
	"sync/atomic"

	"github.com/memfs/memfs/versions"
)

// Inode numbers. The kernel and programs (find, du, tar, rsync, git) tell
// files apart by st_ino, so two live nodes of one mount never share one,
// and a node keeps its number for as long as the kernel knows it. A
// mount's stores share one Inos, which hands the numbers out, and each
// mirror keeps the ones it gave while the mount runs:
//
//	number                  what
//	1                       the mount root (FUSE_ROOT_ID): RootIno
//	2 … 2^61-1              a memory: the engine's Memory.Ino (a version's
//	                        row number, which the engine keeps below
//	                        2^61), unique in the database and never
//	                        reused (ownIno)
//	2^61|0, 2^61|1          a memory whose Ino is 0 or 1
//	2^62|n, n = 1, 2, …     a file created in the mount, kept by the memory
//	                        it is saved as; and a memory's next node once a
//	                        node keeping its number was renamed to a scratch
//	                        name (an editor's backup)
//	2^63|n, n = 1, 2, …     a directory, by path: a directory moved away
//	                        takes its number along, the next one at its
//	                        old path gets another
//	2^63|fnv64a(…)          the history tree's directories (fusefs)
//	2^62|2^61|fnv64a(id)    a version in the history tree (fusefs)
//	  mod 2^61
//
// "." and ".." repeat the numbers of the nodes they name.
const (
	RootIno         = 1
	LowMemoryInoBit = 1 << 61
	LocalInoBit     = 1 << 62
	DirInoBit       = 1 << 63
)

// Inos hands out the numbers of files created in the mount and of
// directories.
type Inos struct{ files, dirs atomic.Uint64 }

func NewInos() *Inos { return &Inos{} }

func (x *Inos) file() uint64 { return LocalInoBit | x.files.Add(1) }
func (x *Inos) dir() uint64  { return DirInoBit | x.dirs.Add(1) }

// ownIno is a memory's own inode number.
func ownIno(m *versions.Memory) uint64 {
	if m.Ino <= 1 {
		return LowMemoryInoBit | m.Ino
	}
	return m.Ino
}
