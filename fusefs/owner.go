package fusefs

import (
	"bytes"
	"context"
	"os"
	"strconv"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// The kernel sends FLUSH on every close(2) of a descriptor of the file,
// including the copies a forked child closes when it execs (Go, Python and
// shells fork all the time). A save is due only when a process that opened
// or wrote through the handle closes it, not when an unrelated child drops
// its inherited copy — otherwise a child's exec between open(O_TRUNC) and
// write() would save an empty version. FUSE names the calling thread, so
// threads are mapped to their process through /proc.

// callerProc is the process (thread group) of the request's caller, 0 when
// it cannot be told (the kernel itself, or /proc unavailable).
func (h *handle) callerProc(ctx context.Context) uint32 {
	c, ok := fuse.FromContext(ctx)
	if !ok || c.Pid == 0 {
		return 0
	}
	if p, ok := h.tids[c.Pid]; ok {
		return p
	}
	p := tgidOf(c.Pid)
	if h.tids == nil {
		h.tids = map[uint32]uint32{}
	}
	h.tids[c.Pid] = p
	return p
}

// noteUser records that the caller opened or wrote through the handle.
func (h *handle) noteUser(ctx context.Context) {
	p := h.callerProc(ctx)
	if p == 0 {
		return
	}
	if h.users == nil {
		h.users = map[uint32]bool{}
	}
	h.users[p] = true
}

// flushSaves reports whether a FLUSH from the caller should save: it comes
// from a process that used the handle, or its origin cannot be told.
func (h *handle) flushSaves(ctx context.Context) bool {
	p := h.callerProc(ctx)
	return p == 0 || len(h.users) == 0 || h.users[p]
}

// tgidOf reads the thread group id of thread tid from /proc/TID/status.
func tgidOf(tid uint32) uint32 {
	data, err := os.ReadFile("/proc/" + strconv.FormatUint(uint64(tid), 10) + "/status")
	if err != nil {
		return 0
	}
	i := bytes.Index(data, []byte("\nTgid:"))
	if i < 0 {
		return 0
	}
	line := data[i+len("\nTgid:"):]
	if j := bytes.IndexByte(line, '\n'); j >= 0 {
		line = line[:j]
	}
	v, err := strconv.ParseUint(string(bytes.TrimSpace(line)), 10, 32)
	if err != nil {
		return 0
	}
	return uint32(v)
}
