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

// callerTID is the thread that made the request, 0 when it cannot be told
// (the kernel itself).
func callerTID(ctx context.Context) uint32 {
	if c, ok := fuse.FromContext(ctx); ok {
		return c.Pid
	}
	return 0
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
