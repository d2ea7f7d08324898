package sandbox

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// refuseTerminalInjection installs a seccomp filter on this thread, which
// what it execs inherits, refusing with EPERM the ioctls that push input
// into a terminal (TIOCSTI) or act on a virtual console (TIOCLINUX). Cmd
// shares the user's terminal: what it pushed there would be read, after
// memfs exits, by the user's shell. Needs no_new_privs. On architectures
// not listed in seccompArches it installs nothing.
func refuseTerminalInjection() error {
	arches := seccompArches[runtime.GOARCH]
	if arches == nil {
		return nil
	}
	filter := terminalInjectionFilter(arches)
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	return unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&prog)), 0, 0)
}

// seccompArch is an audit architecture a process of this GOARCH can make
// system calls as, and its numbers for ioctl.
type seccompArch struct {
	audit  uint32
	ioctls []uint32
}

var seccompArches = map[string][]seccompArch{
	"amd64": {
		{unix.AUDIT_ARCH_X86_64, []uint32{16, 0x40000000 | 16, 0x40000000 | 514}}, // x86-64, x32 (16 before Linux 5.4)
		{unix.AUDIT_ARCH_I386, []uint32{54}},
	},
	"arm64": {
		{unix.AUDIT_ARCH_AARCH64, []uint32{29}},
		{unix.AUDIT_ARCH_ARM, []uint32{54}},
	},
}

// terminalInjectionFilter is the classic BPF program: for each
// architecture, whether the call is an ioctl; for an ioctl, whether its
// request is refused. Everything else is allowed.
func terminalInjectionFilter(arches []seccompArch) []unix.SockFilter {
	const (
		load = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		ret  = unix.BPF_RET | unix.BPF_K
		// Offsets in struct seccomp_data (little-endian).
		nrAt, archAt, requestAt = 0, 4, 24 // requestAt: the low half of args[1], all the kernel keeps
	)
	allow := unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_ALLOW}
	// Where each architecture's block, and the request check, start.
	starts := make([]int, len(arches))
	at := 1 + len(arches) + 1
	for i, a := range arches {
		starts[i] = at
		at += 1 + len(a.ioctls) + 1
	}
	request := at

	f := []unix.SockFilter{{Code: load, K: archAt}}
	for i, a := range arches {
		f = append(f, unix.SockFilter{Code: jeq, K: a.audit, Jt: uint8(starts[i] - len(f) - 1)})
	}
	f = append(f, allow)
	for _, a := range arches {
		f = append(f, unix.SockFilter{Code: load, K: nrAt})
		for _, nr := range a.ioctls {
			f = append(f, unix.SockFilter{Code: jeq, K: nr, Jt: uint8(request - len(f) - 1)})
		}
		f = append(f, allow)
	}
	return append(f,
		unix.SockFilter{Code: load, K: requestAt},
		unix.SockFilter{Code: jeq, K: unix.TIOCSTI, Jt: 2},
		unix.SockFilter{Code: jeq, K: unix.TIOCLINUX, Jt: 1},
		allow,
		unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)},
	)
}
