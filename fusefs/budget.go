package fusefs

import (
	"fmt"
	"sync/atomic"
	"syscall"
)

// DefaultMaxUnsavedBytes bounds the content a mount holds that is not a
// saved version: open write buffers, files unlinked while still open and
// scratch files. Without a bound, processes holding many open buffers
// grow the daemon without limit.
const DefaultMaxUnsavedBytes = 64 << 20

// unsavedBudget counts the bytes of every buffer the mount holds: the
// content loaded for open files, what writes and truncates add, files
// unlinked while open (their buffer lives until the last close) and
// scratch files and held backups (their buffer is their only copy). It
// takes no lock, so it may be used under any other.
type unsavedBudget struct {
	max  int64
	used atomic.Int64
	// full is set by a refusal and cleared once bytes are given back, so
	// that a burst of refused writes is logged once.
	full atomic.Bool
}

// take reserves n bytes; false when that would pass the budget, and then
// nothing is reserved. first is true for the first refusal since bytes
// were last given back.
func (b *unsavedBudget) take(n int64) (ok, first bool) {
	if n <= 0 {
		return true, false
	}
	for {
		u := b.used.Load()
		if u+n > b.max {
			return false, b.full.CompareAndSwap(false, true)
		}
		if b.used.CompareAndSwap(u, u+n) {
			return true, false
		}
	}
}

func (b *unsavedBudget) give(n int64) {
	if n > 0 {
		b.used.Add(-n)
		b.full.Store(false)
	}
}

func (b *unsavedBudget) reason() string {
	return fmt.Sprintf("the mount holds at most %d bytes of unsaved data (the content of open files, files deleted while open, scratch files); close open files or remove scratch files, then try again", b.max)
}

// growLocked reserves what taking the buffer to size bytes adds to the
// node's charge. A refusal is ENOSPC, logged once per burst.
func (n *fileNode) growLocked(op, p string, size int64) syscall.Errno {
	b := n.sm.srv.unsaved
	ok, first := b.take(size - n.charged)
	if !ok {
		if first {
			return n.sm.refuse(op, p, syscall.ENOSPC, b.reason())
		}
		n.sm.srv.opts.Observer.Refused(syscall.ENOSPC)
		return syscall.ENOSPC
	}
	n.charged = max(n.charged, size)
	return 0
}

// settleLocked gives back the charge the node's buffer no longer holds:
// after a shrink, and all of it once the buffer is dropped.
func (n *fileNode) settleLocked() {
	var size int64
	if n.buf != nil {
		size = int64(len(n.buf.data))
	}
	if size < n.charged {
		n.sm.srv.unsaved.give(n.charged - size)
		n.charged = size
	}
}
