package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestRemountOverHungDaemon: a daemon killed with SIGKILL can be unable to
// finish exiting (a thread stuck in the kernel in a FUSE notification,
// waiting for a lock that a client holds while it waits for the dead
// daemon: scripts/crash meets it about once in 50 kills). Its FUSE
// connection then stays open with nobody answering, so statfs or stat on
// the mountpoint never return. A stopped daemon leaves the mountpoint in
// the same state, deterministically. The next memfs mount must still take
// the mountpoint by itself.
func TestRemountOverHungDaemon(t *testing.T) {
	env := newE2EEnv(t)
	storeID, slug := env.createStore(t, "Hung")
	mnt := mountDir(t)
	old := env.startMount(t, mnt, "--store", storeID)
	before := filepath.Join(mnt, slug, "before.md")
	if err := os.WriteFile(before, []byte("saved before the hang"), 0o644); err != nil {
		t.Fatal(err)
	}
	env.stopIdle(t, old.cmd.Process)
	t.Cleanup(func() {
		old.cmd.Process.Signal(syscall.SIGKILL)
		old.cmd.Process.Signal(syscall.SIGCONT)
	})
	// An agent's process that asks the hung mount for something it has
	// not cached waits for an answer that will never come.
	blocked := exec.Command("cat", filepath.Join(mnt, slug, "never-looked-up.md"))
	if err := blocked.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- blocked.Wait() }()
	t.Cleanup(func() {
		blocked.Process.Kill()
		<-exited
	})

	env.startMount(t, mnt, "--store", storeID)
	t.Run("BlockedClientReleased", func(t *testing.T) {
		// Detaching the dead mount is not enough: its connection must be
		// aborted, or the agent's process (and a daemon stuck while dying)
		// hang for good.
		select {
		case err := <-exited:
			exited <- err
			if err == nil {
				t.Fatal("cat of a file that does not exist succeeded")
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a process blocked in the hung mount is still blocked 10s after the new mount took over: abort the old FUSE connection (umount2 MNT_FORCE) before detaching it")
		}
	})
	got, err := os.ReadFile(before)
	if err != nil || string(got) != "saved before the hang" {
		t.Fatalf("read through the new mount: %q, %v", got, err)
	}
	after := filepath.Join(mnt, slug, "after.md")
	if err := os.WriteFile(after, []byte("saved after the remount"), 0o644); err != nil {
		t.Fatalf("save through the new mount: %v", err)
	}
}
