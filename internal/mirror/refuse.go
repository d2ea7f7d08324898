package mirror

import (
	"fmt"
	"strings"
	"syscall"

	"github.com/memfs/memfs/guard"
)

// checkWrite refuses at write(2) what the save at close(2) would refuse,
// so that a writer that never looks at close's result (a shell built-in's
// implicit close) still sees the error: a backend known to be offline
// (EIO), content past the history quota (EDQUOT), a credential in the
// region written (EACCES). buf is the content before the write of data at
// off; base is what the store has (its lines are not refused again). The
// size of a memory is checked before (Mirror.wrote).
//
// A credential refused is returned too, for the guard's metrics.
func checkWrite(s storeInfo, buf, data []byte, off int64, base string) (syscall.Errno, string, *guard.Finding) {
	if s.offline {
		return syscall.EIO, "the database cannot be reached: nothing can be saved until it is back", nil
	}
	end := max(int64(len(buf)), off+int64(len(data)))
	if s.row.MaxHistoryBytes > 0 && int64(s.row.HistoryBytes+s.pending)+end > int64(s.row.MaxHistoryBytes) {
		return syscall.EDQUOT, fmt.Sprintf("the store retains %d bytes of history, and this mount's temporary files %d more, and its quota is %d: this content cannot be saved; run `memfs version prune` to remove old versions (or raise the store's history quota)", s.row.HistoryBytes, s.pending, s.row.MaxHistoryBytes), nil
	}
	if s.row.Guard == guard.Refuse || s.row.Guard == "" {
		if f, ok := credentialIn(buf, data, off, base); ok {
			return syscall.EACCES, fmt.Sprintf("credential found (%s): nothing of this write is kept; remove the credential, or set the store's guard to warn or off", f), &f
		}
	}
	return 0, "", nil
}

// credentialIn is the guard's check of a save (as the engine's at commit)
// applied to the lines the write of data at off touches in buf, with the
// unchanged lines around it that a rule may need. A line the store has
// already (base) is not refused again.
func credentialIn(buf, data []byte, off int64, base string) (guard.Finding, bool) {
	after := make([]byte, max(int64(len(buf)), off+int64(len(data))))
	copy(after, buf)
	copy(after[off:], data)
	text := string(after)
	for _, f := range guard.ScanRange(text, int(off), int(off)+len(data)) {
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
