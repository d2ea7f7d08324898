package fusefs

import (
	"bytes"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/memfs/memfs/versions"
)

// Unmount returns only after the notifications requests left running have
// ended, and none starts after it began: a goroutine of a mount that is gone
// must not be left talking to the kernel. The notification is held back by
// a hook so that Unmount comes while it runs.
func TestUnmountWaitsForNotifications(t *testing.T) {
	e := newEnv(t)
	st := e.storeWith(t, versions.StoreParams{Name: "Notify", MaxMemoryBytes: 100})
	m, dir := e.mountStore(t, st, Options{})
	p := filepath.Join(dir, "m.txt")
	write(t, p, "old")
	e.settle() // a stored memory, not a file pending in the mount

	var started, ended atomic.Int32
	hold := func() {
		started.Add(1)
		time.Sleep(300 * time.Millisecond)
		ended.Add(1)
	}
	notifyHook.Store(&hold)
	t.Cleanup(func() { notifyHook.Store(nil) })

	// A save refused for good makes the kernel forget the pages it was
	// given (file.go): a notification from outside the request.
	fd, err := syscall.Open(p, syscall.O_WRONLY|syscall.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = syscall.Write(fd, bytes.Repeat([]byte("a"), 200))
	wantErrno(t, "write", err, syscall.EFBIG)
	wantErrno(t, "close", syscall.Close(fd), syscall.EFBIG)
	if err := m.srv.Unmount(); err != nil {
		t.Fatal(err)
	}
	if s, d := started.Load(), ended.Load(); s == 0 || d != s {
		t.Errorf("Unmount returned with %d of %d notifications still running", s-d, s)
	}
	m.srv.notes.async(func() { t.Error("a notification ran after Unmount") })
}
