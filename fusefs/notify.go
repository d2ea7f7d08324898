package fusefs

import (
	"sync"
	"sync/atomic"
)

// notifier runs the kernel notifications a request decides on. They must
// not run inside that request: the kernel takes the locks of the inodes
// concerned, which the request holds until it is answered. Unmount waits
// for the ones running (stop), and none starts after that.
type notifier struct {
	mu      sync.Mutex // held only to start one: a leaf
	stopped bool
	running sync.WaitGroup
}

// notifyHook, when set by a test, runs before each notification.
var notifyHook atomic.Pointer[func()]

// async runs notify in its own goroutine, unless the mount is going away:
// then the kernel is about to drop everything it caches anyway.
func (nt *notifier) async(notify func()) {
	nt.mu.Lock()
	defer nt.mu.Unlock()
	if nt.stopped {
		return
	}
	nt.running.Add(1)
	hook := notifyHook.Load()
	go func() {
		defer nt.running.Done()
		if hook != nil {
			(*hook)()
		}
		notify()
	}()
}

// stop refuses new notifications and waits for those running.
func (nt *notifier) stop() {
	nt.mu.Lock()
	nt.stopped = true
	nt.mu.Unlock()
	nt.running.Wait()
}
