package mirror

import (
	"fmt"
	"strings"
	"syscall"

	"github.com/memfs/memfs/guard"
)

// CheckWrite refuses at write(2) what the save at close(2) would refuse,
// so that a writer that never looks at close's result (a shell built-in's
// implicit close) still sees the error: a backend known to be offline
// (EIO), content past the history quota (EDQUOT), a credential in the
// region written (EACCES). buf is the content before the write of data at
// off; base is what the store has (its lines are not refused again).
//
// A credential refused is returned too, for the guard's metrics.
//
// The guard looks at the lines the write touched and one line around
// them: the same rules as the engine's check at commit, on a region, so
// that the cost follows the write. The shared region function belongs in
// package guard, beside ScanAdded; until it is there this uses guard.Scan
// on the region.
func CheckWrite(s StoreInfo, p string, buf, data []byte, off int64, base string) (syscall.Errno, string, *guard.Finding) {
	if s.Offline {
		return syscall.EIO, "the database cannot be reached: nothing can be saved until it is back", nil
	}
	end := max(int64(len(buf)), off+int64(len(data)))
	if s.MaxMemoryBytes > 0 && end > int64(s.MaxMemoryBytes) {
		return syscall.EFBIG, fmt.Sprintf("a memory holds at most %d bytes in this store; write less or split it into several files", s.MaxMemoryBytes), nil
	}
	if s.MaxHistoryBytes > 0 && int64(s.HistoryBytes)+end > int64(s.MaxHistoryBytes) {
		return syscall.EDQUOT, fmt.Sprintf("the store retains %d bytes of history and its quota is %d: this content cannot be saved; run `memfs version prune` to remove old versions (or raise the store's history quota)", s.HistoryBytes, s.MaxHistoryBytes), nil
	}
	if s.Guard == guard.Refuse || s.Guard == "" {
		if f, ok := credentialIn(buf, data, off, base); ok {
			return syscall.EACCES, fmt.Sprintf("credential found (%s): nothing of this write is kept; remove the credential, or set the store's guard to warn or off", f), &f
		}
	}
	return 0, "", nil
}

// credentialIn scans the lines data touches once written at off in buf,
// with one line of context on each side.
func credentialIn(buf, data []byte, off int64, base string) (guard.Finding, bool) {
	lo, hi := int(min(off, int64(len(buf)))), int(off)+len(data)
	var w strings.Builder
	// One line before the write.
	start := lo
	for n := 0; start > 0 && n < 2; start-- {
		if buf[start-1] == '\n' {
			n++
			if n == 2 {
				break
			}
		}
	}
	w.Write(buf[start:lo])
	for i := int64(len(buf)); i < off; i++ {
		w.WriteByte(0)
	}
	w.Write(data)
	// One line after it.
	if hi < len(buf) {
		rest := buf[hi:]
		n, i := 0, 0
		for ; i < len(rest) && n < 2; i++ {
			if rest[i] == '\n' {
				n++
			}
		}
		w.Write(rest[:i])
	}
	region := w.String()
	for _, f := range guard.Scan(region) {
		line := lineOf(region, f.Line)
		if base != "" && strings.Contains(base, line) {
			continue // the store has it already
		}
		return f, true
	}
	return guard.Finding{}, false
}

func lineOf(s string, n int) string {
	for i := 1; i < n; i++ {
		j := strings.IndexByte(s, '\n')
		if j < 0 {
			return ""
		}
		s = s[j+1:]
	}
	if j := strings.IndexByte(s, '\n'); j >= 0 {
		return s[:j]
	}
	return s
}
