package sandbox

import (
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// dropPrivileges leaves the calling thread, and so what it execs, without
// any capability or the means to regain one: an empty bounding set (so even
// root's execve grants nothing), no ambient, permitted, effective or
// inheritable capabilities, no_new_privs, and u's credentials if given.
// The thread must be locked and must exec next: credentials are changed
// with raw system calls on this thread only, which is all execve keeps.
func dropPrivileges(u *User) error {
	for c := 0; c <= lastCap(); c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
			if err == unix.EINVAL { // past the kernel's last capability
				break
			}
			return os.NewSyscallError("prctl(PR_CAPBSET_DROP "+strconv.Itoa(c)+")", err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && err != unix.EINVAL {
		return os.NewSyscallError("prctl(PR_CAP_AMBIENT_CLEAR_ALL)", err)
	}
	if u != nil {
		if err := setCredentials(u); err != nil {
			return err
		}
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData // zero: no capability in any set
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return os.NewSyscallError("capset", err)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return os.NewSyscallError("prctl(PR_SET_NO_NEW_PRIVS)", err)
	}
	return nil
}

// setCredentials switches this thread alone to u (groups first, while the
// thread may still change them).
func setCredentials(u *User) error {
	var groups unsafe.Pointer
	if len(u.Groups) > 0 {
		groups = unsafe.Pointer(&u.Groups[0])
	}
	if _, _, e := unix.RawSyscall(unix.SYS_SETGROUPS, uintptr(len(u.Groups)), uintptr(groups), 0); e != 0 {
		return os.NewSyscallError("setgroups", e)
	}
	if _, _, e := unix.RawSyscall(unix.SYS_SETRESGID, uintptr(u.GID), uintptr(u.GID), uintptr(u.GID)); e != 0 {
		return os.NewSyscallError("setresgid", e)
	}
	if _, _, e := unix.RawSyscall(unix.SYS_SETRESUID, uintptr(u.UID), uintptr(u.UID), uintptr(u.UID)); e != 0 {
		return os.NewSyscallError("setresuid", e)
	}
	return nil
}

// lastCap is the highest capability number the kernel knows.
func lastCap() int {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err != nil {
		return 63 // PR_CAPBSET_DROP answers EINVAL past the real last one
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 63
	}
	return n
}
