package sandbox

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// deniedCalls are refused with EPERM, as by Docker's default profile for a
// container without added capabilities: keyrings (a usermode helper runs
// for request_key), bpf, perf, userfaultfd, kexec and modules, handles that
// open files by inode, swap, reboot, clock setting, every way to mount or
// change namespaces, accounting, quotas, the kernel log, raw port I/O and
// io_uring (whose operations pass the filter unseen).
var deniedCalls = []string{
	"acct", "add_key", "adjtimex", "bpf", "clock_adjtime", "clock_settime", "create_module",
	"delete_module", "fanotify_init", "finit_module", "fsconfig", "fsmount", "fsopen", "fspick",
	"get_kernel_syms", "init_module", "io_uring_enter", "io_uring_register", "io_uring_setup",
	"ioperm", "iopl", "kcmp", "kexec_file_load", "kexec_load", "keyctl", "lookup_dcookie", "mount",
	"mount_setattr", "move_mount", "name_to_handle_at", "nfsservctl", "open_by_handle_at", "open_tree",
	"perf_event_open", "pivot_root", "query_module", "quotactl", "quotactl_fd", "reboot",
	"request_key", "setns", "settimeofday", "stime", "swapoff", "swapon", "_sysctl", "syslog",
	"sysfs", "umount", "umount2", "unshare", "uselib", "userfaultfd", "ustat", "vm86", "vm86old",
}

// DeniedCalls lists the system calls the command cannot make, for the
// documentation; besides them clone is refused new namespaces, clone3
// answers ENOSYS (so that C libraries fall back to clone), personality
// accepts only the values Docker allows, and ioctl refuses TIOCSTI and
// TIOCLINUX.
func DeniedCalls() []string { return append([]string(nil), deniedCalls...) }

// namespaceFlags are clone's flags for new namespaces.
const namespaceFlags = unix.CLONE_NEWNS | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC | unix.CLONE_NEWUSER |
	unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWCGROUP

// allowedPersonalities are Docker's: Linux, with a 32-bit address space or
// no randomisation, and the query.
var allowedPersonalities = []uint32{0x0, 0x8, 0x20000, 0x20008, 0xffffffff}

// installSeccomp installs the command's seccomp filter on this thread,
// which what it execs inherits. Needs no_new_privs. A call of an
// architecture not listed in seccompArches is refused.
func installSeccomp() error {
	arches := seccompArches[runtime.GOARCH]
	if arches == nil {
		return nil
	}
	filter, err := commandFilter(arches)
	if err != nil {
		return err
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	return unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&prog)), 0, 0)
}

// seccompArch is an audit architecture a process of this GOARCH can make
// system calls as, and where its numbers are in syscallNumbers.
type seccompArch struct {
	audit uint32
	table string
	// x32 marks x86-64, whose calls with bit 30 set are x32's: all refused.
	x32 bool
}

var seccompArches = map[string][]seccompArch{
	"amd64": {{unix.AUDIT_ARCH_X86_64, "amd64", true}, {unix.AUDIT_ARCH_I386, "386", false}},
	"arm64": {{unix.AUDIT_ARCH_AARCH64, "arm64", false}, {unix.AUDIT_ARCH_ARM, "arm", false}},
}

// program assembles classic BPF with jumps to labels.
type program struct {
	code   []unix.SockFilter
	fixups map[int]string // instruction → label its true branch jumps to
	labels map[string]int
}

const (
	bpfLoad = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	bpfJeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	bpfJge  = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
	bpfJset = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
	bpfRet  = unix.BPF_RET | unix.BPF_K
	// Offsets in struct seccomp_data (little-endian: an argument's low half).
	nrAt, archAt, arg0At, arg1At = 0, 4, 16, 24
)

func (p *program) op(code uint16, k uint32) {
	p.code = append(p.code, unix.SockFilter{Code: code, K: k})
}
func (p *program) label(name string) { p.labels[name] = len(p.code) }
func (p *program) ret(k uint32)      { p.op(bpfRet, k) }
func (p *program) jump(code uint16, k uint32, to string) {
	p.fixups[len(p.code)] = to
	p.op(code, k)
}

func (p *program) link() ([]unix.SockFilter, error) {
	for at, name := range p.fixups {
		to, ok := p.labels[name]
		off := to - at - 1
		if !ok || off < 0 || off > 255 {
			return nil, fmt.Errorf("seccomp filter: jump from %d to %q (%d) out of range", at, name, to)
		}
		p.code[at].Jt = uint8(off)
	}
	return p.code, nil
}

// commandFilter is the filter: for each architecture, its block of checks
// by call number, then the checks of arguments.
func commandFilter(arches []seccompArch) ([]unix.SockFilter, error) {
	const (
		allow  = unix.SECCOMP_RET_ALLOW
		eperm  = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
		enosys = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
	)
	p := &program{fixups: map[int]string{}, labels: map[string]int{}}
	p.op(bpfLoad, archAt)
	for _, a := range arches {
		p.jump(bpfJeq, a.audit, a.table)
	}
	p.ret(eperm)
	for _, a := range arches {
		nums := syscallNumbers[a.table]
		deny, args := a.table+".deny", a.table+"."
		p.label(a.table)
		p.op(bpfLoad, nrAt)
		if a.x32 {
			p.jump(bpfJge, 0x40000000, deny)
		}
		p.jump(bpfJeq, nums["ioctl"], args+"ioctl")
		p.jump(bpfJeq, nums["clone"], args+"clone")
		p.jump(bpfJeq, nums["personality"], args+"personality")
		if nr, ok := nums["clone3"]; ok {
			p.jump(bpfJeq, nr, args+"enosys")
		}
		for _, name := range deniedCalls {
			if nr, ok := nums[name]; ok {
				p.jump(bpfJeq, nr, deny)
			}
		}
		p.ret(allow)
		p.label(args + "ioctl")
		p.op(bpfLoad, arg1At)
		p.jump(bpfJeq, unix.TIOCSTI, deny)
		p.jump(bpfJeq, unix.TIOCLINUX, deny)
		p.ret(allow)
		p.label(args + "clone")
		p.op(bpfLoad, arg0At)
		p.jump(bpfJset, namespaceFlags, deny)
		p.ret(allow)
		p.label(args + "personality")
		p.op(bpfLoad, arg0At)
		for _, v := range allowedPersonalities {
			p.jump(bpfJeq, v, args+"allow")
		}
		p.label(deny)
		p.ret(eperm)
		p.label(args + "allow")
		p.ret(allow)
		p.label(args + "enosys")
		p.ret(enosys)
	}
	return p.link()
}
