package mirror

import (
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"testing"
)

// TestLastOpenedThreadGroup: a version opened by one thread of a process
// is found for a rename by another thread of it, the latest open winning.
func TestLastOpenedThreadGroup(t *testing.T) {
	o := NewLastOpened(8, 8)
	me := os.Getpid()
	// A thread of this process other than the main one.
	var other int
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		other = syscall.Gettid()
		o.Note(other, "mem_a", "v1")
		o.Note(other, "mem_b", "w1")
	}()
	wg.Wait()
	o.Note(me, "mem_a", "v2")
	if v, ok := o.Version(me, "mem_a"); !ok || v != "v2" {
		t.Errorf("the renaming thread's own open: %q, %v", v, ok)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tid := syscall.Gettid()
	if v, ok := o.Version(tid, "mem_b"); (!ok || v != "w1") && tid != other {
		t.Errorf("another thread's open, found from this one: %q, %v", v, ok)
	}
	if _, ok := o.Version(tid, "mem_c"); ok {
		t.Error("a memory nobody opened has a version")
	}
	if _, ok := o.Version(1, "mem_a"); ok {
		t.Error("another process's rename found this process's open")
	}
}

// TestSameProcess: two threads of this process are one group; this
// process and a child are not, and a child that ended cannot be told.
func TestSameProcess(t *testing.T) {
	// Each goroutine locked to its own thread: two threads for certain.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	me := uint32(syscall.Gettid())
	tids := make(chan uint32)
	release := make(chan struct{})
	defer close(release)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		tids <- uint32(syscall.Gettid())
		<-release
	}()
	other := <-tids
	if same, known := SameProcess(me, other); !same || !known {
		t.Errorf("two threads of this process: same %v, known %v", same, known)
	}
	if same, known := SameProcess(other, uint32(os.Getpid())); !same || !known {
		t.Errorf("a thread and this process's main thread: same %v, known %v", same, known)
	}
	child := exec.Command("sleep", "60")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	pid := uint32(child.Process.Pid)
	if same, known := SameProcess(other, pid); same || !known {
		t.Errorf("this process and a child: same %v, known %v", same, known)
	}
	child.Process.Kill()
	child.Wait()
	if same, known := SameProcess(other, pid); same || known {
		t.Errorf("a child that ended: same %v, known %v", same, known)
	}
}
