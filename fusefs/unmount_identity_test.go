package fusefs

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/memfs/memfs/internal/fusemount"
	"github.com/memfs/memfs/versions"
)

// A copy of the mount in another namespace (a memfs run's) keeps the old
// connection open after its unmount, so Unmount waited and then detached
// the path lazily: by then a restarted daemon had mounted there, and the
// old one took the new one's mount away.
func TestUnmountLeavesARestartedDaemonsMount(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("no unshare to copy the mount into another namespace")
	}
	e := newEnv(t)
	st := e.store(t, "A")
	first := e.mount(t, Options{}, versions.AttachmentParams{StoreID: st.ID})
	own, _ := os.Readlink("/proc/self/ns/mnt")
	hold := exec.Command("unshare", "-m", "--propagation", "private", "sleep", "60")
	if err := hold.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hold.Process.Kill(); _ = hold.Wait() })
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		ns, _ := os.Readlink("/proc/" + strconv.Itoa(hold.Process.Pid) + "/ns/mnt")
		if ns != "" && ns != own {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("unshare made no mount namespace")
		}
	}
	done := make(chan error, 1)
	go func() { done <- first.srv.Unmount() }()
	for deadline := time.Now().Add(fusemount.UnmountWait); fusemount.IsMounted(first.root); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the first mount never left this namespace")
		}
	}
	sess, err := e.db.CreateSession(context.Background(), []versions.AttachmentParams{{StoreID: st.ID}})
	if err != nil {
		t.Fatal(err)
	}
	second := e.mountOn(t, first.root, e.db, sess, Options{})
	if err := <-done; err != nil {
		t.Errorf("the first daemon's unmount: %v", err)
	}
	if !fusemount.IsMounted(second.root) {
		t.Fatalf("the first daemon's unmount took away the mount a second daemon made on %s since", second.root)
	}
	checkAlive(t, second.dir(0))
}
