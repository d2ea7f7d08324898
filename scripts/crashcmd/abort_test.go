package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// hangingRoot answers no lookup until release is closed: a daemon that is
// alive on paper but serves nothing, like one stuck while dying.
type hangingRoot struct {
	fs.Inode
	entered chan struct{}
	release chan struct{}
}

func (r *hangingRoot) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	select {
	case r.entered <- struct{}{}:
	default:
	}
	<-r.release
	return nil, syscall.ENOENT
}

// TestAbortConnectionReleasesBlockedClient: after the mount is detached, a
// process blocked in it is released only by aborting the connection.
func TestAbortConnectionReleasesBlockedClient(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting FUSE directly needs root")
	}
	mnt := t.TempDir()
	root := &hangingRoot{entered: make(chan struct{}, 1), release: make(chan struct{})}
	srv, err := fs.Mount(mnt, root, &fs.Options{MountOptions: fuse.MountOptions{DirectMount: true, FsName: "hang"}})
	if err != nil {
		t.Fatalf("mount: %v", err)
	}
	released := false
	t.Cleanup(func() {
		if !released {
			close(root.release)
		}
		srv.Unmount()
		unix.Unmount(mnt, unix.MNT_DETACH)
	})
	conn := fuseConnection(mnt)
	if conn == "" {
		t.Fatalf("no FUSE connection found for %s in mountinfo", mnt)
	}
	cat := exec.Command("cat", filepath.Join(mnt, "x"))
	if err := cat.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cat.Wait() }()
	t.Cleanup(func() {
		cat.Process.Kill()
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
		}
	})
	select {
	case <-root.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("cat's lookup never reached the file system")
	}
	if err := unix.Unmount(mnt, unix.MNT_DETACH); err != nil {
		t.Fatalf("detach: %v", err)
	}
	select {
	case err := <-exited:
		exited <- err
		t.Fatal("cat returned although its lookup was never answered")
	case <-time.After(300 * time.Millisecond):
	}
	if err := abortConnection(conn); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		exited <- err
		if err == nil {
			t.Fatal("cat succeeded on an aborted connection")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("cat is still blocked 10s after its FUSE connection was aborted")
	}
	close(root.release)
	released = true
}
