package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// defaultLogMaxBytes bounds the log when it goes to a file; MEMFS_LOG_MAX_BYTES
// sets another bound.
const defaultLogMaxBytes = 100 << 20

// logOutput is where the log goes: standard error, bounded when it is a
// regular file (memfs run --log, or a daemon's 2>file). Refusals are
// rate-limited where they are logged; the bound catches whatever else
// keeps coming.
func logOutput() io.Writer {
	st, err := os.Stderr.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return os.Stderr
	}
	max := int64(defaultLogMaxBytes)
	if v := os.Getenv("MEMFS_LOG_MAX_BYTES"); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 {
			max = n
		} else {
			fmt.Fprintf(os.Stderr, "memfs: MEMFS_LOG_MAX_BYTES=%q is not a positive number of bytes: the log is kept under %d bytes; set it to a number such as 10485760, or unset it\n", v, max)
		}
	}
	path, _ := os.Readlink("/proc/self/fd/2")
	if !filepath.IsAbs(path) || strings.HasSuffix(path, " (deleted)") {
		path = ""
	}
	return &cappedLog{f: os.Stderr, path: path, size: st.Size(), max: max, reopen: "/proc/self/fd/2"}
}

// cappedLog is a log file that is rotated when it would pass max bytes:
// its content is copied to PATH.1 (replacing the previous one) and the
// file emptied. Copy-then-truncate, because the file is standard error,
// opened by whoever started memfs: it cannot be renamed away from under
// them. At most twice max bytes of log are kept.
type cappedLog struct {
	mu   sync.Mutex
	f    *os.File
	path string // "" when the file's name is unknown: it is emptied, not copied
	size int64
	max  int64
	// reopen opens f again for reading, whatever its name is now.
	reopen string
}

func (l *cappedLog) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.size+int64(len(b)) > l.max && l.size > 0 {
		l.rotate()
	}
	n, err := l.f.Write(b)
	l.size += int64(n)
	return n, err
}

func (l *cappedLog) rotate() {
	kept := "dropped (the log file's name is unknown)"
	if l.path != "" {
		if err := copyFile(l.reopen, l.path+".1"); err != nil {
			kept = fmt.Sprintf("dropped (copying them to %s.1 failed: %v)", l.path, err)
		} else {
			kept = "in " + l.path + ".1"
		}
	}
	if err := l.f.Truncate(0); err != nil {
		return // keep writing: a log that cannot be emptied is not lost
	}
	l.f.Seek(0, io.SeekStart)
	l.size = 0
	line := fmt.Sprintf("time=%s level=WARN msg=\"the log reached %d bytes and starts again; the earlier lines are %s\"\n",
		time.Now().UTC().Format(time.RFC3339Nano), l.max, kept)
	n, _ := l.f.WriteString(line)
	l.size += int64(n)
}

func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}
