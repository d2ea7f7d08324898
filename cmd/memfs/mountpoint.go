package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/versions"
)

// checkMountpoint refuses, before anything is created, a mountpoint memfs
// mount cannot use: missing or not a directory (a usage error) or already
// served by a FUSE daemon that answers (a conflict). A mount whose daemon
// died is left for the mount to detach.
func checkMountpoint(mnt string) error {
	abs, err := filepath.Abs(mnt)
	if err != nil {
		return usageError("mountpoint %s: %v", mnt, err)
	}
	st, err := os.Stat(abs)
	switch {
	case errors.Is(err, unix.ENOTCONN), errors.Is(err, unix.ECONNABORTED):
		return nil // a dead daemon's mount: the mount detaches it
	case errors.Is(err, os.ErrNotExist):
		return usageError("mountpoint %s does not exist: create it first (mkdir -p %s)", mnt, mnt)
	case err != nil:
		return usageError("mountpoint %s: %v", mnt, err)
	case !st.IsDir():
		return usageError("mountpoint %s is not a directory: give an empty directory", mnt)
	}
	if !fuseMounted(abs) {
		return nil
	}
	answer := make(chan error, 1)
	go func() {
		var sfs unix.Statfs_t
		answer <- unix.Statfs(abs, &sfs)
	}()
	select {
	case err := <-answer:
		if err == nil {
			return &versions.Error{Code: versions.CodeConflict, Message: fmt.Sprintf(
				"%s is already a live FUSE mount (another memfs mount?): stop that daemon, or umount %s, or mount elsewhere", mnt, mnt)}
		}
	case <-time.After(2 * time.Second):
		// Hung: the mount takes it over as dead.
	}
	return nil
}

func fuseMounted(dir string) bool {
	mounts, err := mountinfo.GetMounts(func(m *mountinfo.Info) (skip, stop bool) {
		return m.Mountpoint != dir || !strings.HasPrefix(m.FSType, "fuse"), false
	})
	return err == nil && len(mounts) > 0
}

// fuseDevice is the FUSE device a mount opens (a variable for tests).
var fuseDevice = "/dev/fuse"

// checkFuseAccess says what to do when a mount as a user other than root
// cannot work: go-fuse's own errors ("fusermount exited with code 256",
// "exec: /bin/fusermount: no such file") do not.
func checkFuseAccess() error {
	if os.Geteuid() == 0 {
		if _, err := os.Stat(fuseDevice); err != nil {
			return noFuseDevice(err)
		}
		return nil
	}
	if _, err := os.Stat(fuseDevice); err != nil {
		return noFuseDevice(err)
	}
	if err := unix.Access(fuseDevice, unix.R_OK|unix.W_OK); err != nil {
		// As a database this user cannot write: exit 6.
		return &versions.Error{Code: versions.CodeReadOnly, Message: fmt.Sprintf(
			"mounting as a user other than root needs read and write access to %s, which you lack (%v): run memfs mount as root, or make the device usable by your user (chmod 0666 %s, the usual mode)", fuseDevice, err, fuseDevice)}
	}
	if _, err := exec.LookPath("fusermount3"); err != nil {
		if _, err2 := exec.LookPath("fusermount"); err2 != nil {
			return &versions.Error{Code: versions.CodeNotFound, Message: "mounting as a user other than root needs fusermount3, which is not on PATH: install it (apt-get install fuse3), or run memfs mount as root"}
		}
	}
	return nil
}

// noFuseDevice is exit 3, as a database that is not there: what the mount
// needs is missing, and the message says how to get it.
func noFuseDevice(err error) error {
	return &versions.Error{Code: versions.CodeNotFound, Message: fmt.Sprintf(
		"no FUSE device at %s (%v): load the fuse module (modprobe fuse), or in a container pass --device /dev/fuse", fuseDevice, err)}
}
