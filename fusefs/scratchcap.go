package fusefs

import (
	"fmt"
	"sync/atomic"
	"syscall"
)

// DefaultMaxScratchFiles bounds the scratch files (scratch.go) one mount
// holds, over all its stores. A scratch file lives only in the daemon's
// memory: its bytes count toward the mount's unsaved budget (budget.go),
// and this bounds the files themselves, which cost memory when empty too.
// An editor makes one or two per file it has open, and leaves a backup
// behind per file it saved.
const DefaultMaxScratchFiles = 4096

// scratchCap counts the scratch files of a mount against its cap. It
// takes no lock.
type scratchCap struct {
	max   int64
	files atomic.Int64
}

// scratchRoom refuses one more scratch file at p with ENOSPC once the
// mount holds its maximum.
func (sm *storeMount) scratchRoom(op, p string) syscall.Errno {
	c := sm.srv.scratchCap
	if c.files.Load() < c.max {
		return 0
	}
	return sm.refuse(op, p, syscall.ENOSPC, fmt.Sprintf("the mount holds at most %d scratch files (editors' swap, lock and backup files, kept only in the daemon's memory): remove some, then try again", c.max))
}
