package mirror

import (
	"os"
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
