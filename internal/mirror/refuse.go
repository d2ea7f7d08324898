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
// The guard runs the engine's check of a save on the write alone, so
// that the cost follows the write.
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

// credentialIn is the guard's check of a save (guard.ScanChange, as the
// engine's at commit) applied to the write alone: the credentials the
// write of data at off brings into buf, with the unchanged lines around it
// that a rule may need. A line the store has already (base) is not refused
// again.
func credentialIn(buf, data []byte, off int64, base string) (guard.Finding, bool) {
	after := make([]byte, max(int64(len(buf)), off+int64(len(data))))
	copy(after, buf)
	copy(after[off:], data)
	text := string(after)
	for _, f := range guard.ScanChange(string(buf), text) {
		if base != "" && strings.Contains(base, lineOf(text, f.Line)) {
			continue
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
