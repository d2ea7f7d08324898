package fusefs

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/internal/fusemount"
	"github.com/memfs/memfs/internal/proctest"
	"github.com/memfs/memfs/versions"
)

// A daemon killed with SIGKILL leaves a dead mount ("transport endpoint
// is not connected"), a stopped (or stuck) one a mount nobody answers; the
// next Mount on that path detaches either by itself.
func TestStaleMountRecovery(t *testing.T) {
	t.Run("Killed", func(t *testing.T) { testStaleMount(t, syscall.SIGKILL) })
	t.Run("Stopped", func(t *testing.T) { testStaleMount(t, syscall.SIGSTOP) })
}

func testStaleMount(t *testing.T, sig syscall.Signal) {
	e := newEnv(t)
	st := e.store(t, "Stale")
	sess, err := e.db.CreateSession(context.Background(), []versions.AttachmentParams{{StoreID: st.ID}})
	if err != nil {
		t.Fatal(err)
	}
	mnt := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	child := exec.Command(os.Args[0], "-test.run=^TestChildMount$")
	child.Env = append(os.Environ(), "FUSEFS_CHILD_MOUNT="+mnt, "FUSEFS_CHILD_DB="+filepath.Join(e.dir, "memfs.db"), "FUSEFS_CHILD_SESSION="+sess.ID)
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	child.Stderr = e.log
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		child.Process.Kill()
		child.Process.Signal(syscall.SIGCONT)
		child.Wait()
		if fusemount.IsMounted(mnt) {
			unix.Unmount(mnt, unix.MNT_DETACH)
		}
	})
	ready := false
	for sc := bufio.NewScanner(out); sc.Scan(); {
		if strings.Contains(sc.Text(), "child ready") {
			ready = true
			break
		}
	}
	if !ready {
		t.Fatal("the child daemon never mounted")
	}
	file := filepath.Join(mnt, sess.Resources[0].Slug, "kept.txt")
	write(t, file, "acknowledged")
	if err := child.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	if sig == syscall.SIGSTOP {
		proctest.WaitStopped(t, child.Process.Pid)
	}
	if sig == syscall.SIGKILL {
		child.Wait()
		var sfs unix.Statfs_t
		if err := unix.Statfs(mnt, &sfs); !errors.Is(err, syscall.ENOTCONN) {
			t.Fatalf("after SIGKILL statfs of the mount point: %v, want ENOTCONN", err)
		}
	}
	o := Options{Logger: nil}
	m := e.mountOn(t, mnt, e.db, sess, o)
	if got, err := os.ReadFile(filepath.Join(m.dir(0), "kept.txt")); err != nil || string(got) != "acknowledged" {
		t.Errorf("after recovery: %q, %v", got, err)
	}
	checkAlive(t, m.dir(0))
	if !strings.Contains(e.log.String(), "detached a stale mount") {
		t.Errorf("the recovery was not logged")
	}
}

// TestChildMount is the daemon TestStaleMountRecovery kills.
func TestChildMount(t *testing.T) {
	mnt := os.Getenv("FUSEFS_CHILD_MOUNT")
	if mnt == "" {
		t.Skip("helper process of TestStaleMountRecovery")
	}
	db, err := versions.Open(os.Getenv("FUSEFS_CHILD_DB"), versions.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := db.GetSession(context.Background(), os.Getenv("FUSEFS_CHILD_SESSION"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Mount(mnt, db, sess, Options{}); err != nil {
		t.Fatal(err)
	}
	fmt.Println("child ready")
	select {}
}

// A live mount on the mount point is not taken over.
func TestMountOnLiveMountRefused(t *testing.T) {
	e := newEnv(t)
	st := e.store(t, "Live")
	m, _ := e.mountStore(t, st, Options{})
	srv, err := Mount(m.root, e.db, m.sess, Options{})
	if err == nil {
		srv.Unmount()
		t.Fatal("a second daemon mounted over a live mount")
	}
	if !strings.Contains(err.Error(), "live FUSE mount") {
		t.Errorf("error %v, want one naming the live mount", err)
	}
	checkAlive(t, m.dir(0))
}

// An unmount from outside (umount) ends Wait, and Unmount then succeeds.
func TestUnmountedFromOutside(t *testing.T) {
	e := newEnv(t)
	st := e.store(t, "Outside")
	m, _ := e.mountStore(t, st, Options{})
	done := make(chan struct{})
	go func() {
		m.srv.Wait()
		close(done)
	}()
	if err := unix.Unmount(m.root, 0); err != nil {
		t.Fatal(err)
	}
	<-done
	if err := m.srv.Unmount(); err != nil {
		t.Errorf("Unmount after umount: %v", err)
	}
}
