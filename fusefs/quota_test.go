package fusefs

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memfs/memfs/versions"
)

// A save past the store's history quota fails at close with EDQUOT, keeps
// nothing, leaves the previous head, and the daemon log names the path and
// the quota.
func TestHistoryQuotaSaveFails(t *testing.T) {
	e := newEnv(t)
	st := e.storeWith(t, versions.StoreParams{Name: "Quota", MaxHistoryBytes: 1000})
	_, dir := e.mountStore(t, st, Options{})
	p := filepath.Join(dir, "m.txt")
	write(t, p, "old")
	mem := e.memory(t, st.ID, "/m.txt")
	before := len(e.versionsOf(t, st.ID, mem.ID))

	fd, err := syscall.Open(p, syscall.O_WRONLY|syscall.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := syscall.Write(fd, bytes.Repeat([]byte("a"), 700)); err != nil {
		t.Fatalf("write: %v (the quota is checked when the file is saved)", err)
	}
	wantErrno(t, "close", syscall.Close(fd), syscall.EDQUOT)

	got := e.memory(t, st.ID, "/m.txt")
	if *got.Content != "old" || got.VersionID != mem.VersionID {
		t.Errorf("head after the refused save: %s %q; want %s \"old\"", got.VersionID, *got.Content, mem.VersionID)
	}
	if n := len(e.versionsOf(t, st.ID, mem.ID)); n != before {
		t.Errorf("%d versions after the refused save, want %d", n, before)
	}
	// The kernel's pages of the refused content are dropped at release,
	// which the kernel sends after close returns.
	if err := eventually(2*time.Second, func() error {
		if b, err := os.ReadFile(p); err != nil || string(b) != "old" {
			return fmt.Errorf("read through the mount: %.20q, %v; want \"old\"", b, err)
		}
		return nil
	}); err != nil {
		t.Error(err)
	}
	log := e.log.String()
	for _, w := range []string{"/m.txt", "EDQUOT", "quota of 1000 bytes", "memfs version prune"} {
		if !strings.Contains(log, w) {
			t.Errorf("daemon log lacks %q:\n%s", w, log)
		}
	}
	// Removing a file still works over the quota.
	if err := os.Remove(p); err != nil {
		t.Errorf("remove over the quota: %v", err)
	}
}
