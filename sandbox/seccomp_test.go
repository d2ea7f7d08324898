package sandbox

import (
	"encoding/binary"
	"testing"

	"golang.org/x/sys/unix"
)

// runFilter interprets the classic BPF the filter is made of on one
// struct seccomp_data.
func runFilter(t *testing.T, prog []unix.SockFilter, arch, nr uint32, args ...uint64) uint32 {
	t.Helper()
	data := make([]byte, 64)
	binary.LittleEndian.PutUint32(data[nrAt:], nr)
	binary.LittleEndian.PutUint32(data[archAt:], arch)
	for i, a := range args {
		binary.LittleEndian.PutUint64(data[argsAt+8*i:], a)
	}
	var acc uint32
	for pc, steps := 0, 0; pc < len(prog); pc, steps = pc+1, steps+1 {
		in := prog[pc]
		switch in.Code {
		case bpfLoad:
			acc = binary.LittleEndian.Uint32(data[in.K:])
		case bpfAnd:
			acc &= in.K
		case bpfRet:
			return in.K
		case bpfJa:
			pc += int(in.K)
		case bpfJeq, bpfJgt, bpfJge:
			var hold bool
			switch in.Code {
			case bpfJeq:
				hold = acc == in.K
			case bpfJgt:
				hold = acc > in.K
			default:
				hold = acc >= in.K
			}
			if hold {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		default:
			t.Fatalf("instruction %d: unknown code %#x", pc, in.Code)
		}
	}
	t.Fatal("the filter ran off its end")
	return 0
}

func TestCommandFilter(t *testing.T) {
	eperm, enosys := uint32(unix.SECCOMP_RET_ERRNO|uint32(unix.EPERM)), uint32(unix.SECCOMP_RET_ERRNO|uint32(unix.ENOSYS))
	allow := uint32(unix.SECCOMP_RET_ALLOW)
	type call struct {
		name string
		nr   uint32
		args []uint64
		want uint32
	}
	cases := map[string]struct {
		goarch string
		audit  uint32
		calls  []call
	}{
		"amd64": {"amd64", unix.AUDIT_ARCH_X86_64, []call{
			{"read", 0, nil, allow},
			{"execve", 59, nil, allow},
			{"ptrace", 101, nil, allow},
			{"removexattrat", 466, nil, allow},
			{"socket AF_INET", 41, []uint64{unix.AF_INET}, allow},
			{"socket AF_UNIX", 41, []uint64{unix.AF_UNIX}, allow},
			{"socket AF_VSOCK", 41, []uint64{unix.AF_VSOCK}, eperm},
			{"socket AF_VSOCK, high bits set", 41, []uint64{1<<32 | unix.AF_VSOCK}, eperm},
			{"socket AF_ALG", 41, []uint64{unix.AF_ALG}, eperm},
			{"socket AF_NFC", 41, []uint64{unix.AF_NFC}, allow},
			{"socket AF_XDP", 41, []uint64{unix.AF_XDP}, allow},
			{"clone thread", 56, []uint64{unix.CLONE_VM | unix.CLONE_THREAD}, allow},
			{"clone new user", 56, []uint64{unix.CLONE_NEWUSER}, eperm},
			{"clone new net", 56, []uint64{unix.CLONE_NEWNET | unix.CLONE_VM}, eperm},
			{"clone3", 435, nil, enosys},
			{"personality Linux", 135, []uint64{0}, allow},
			{"personality query", 135, []uint64{0xffffffff}, allow},
			{"personality other", 135, []uint64{0x0400000}, eperm},
			{"ioctl TCGETS", 16, []uint64{0, unix.TCGETS}, allow},
			{"ioctl TIOCSTI", 16, []uint64{0, unix.TIOCSTI}, eperm},
			{"ioctl TIOCLINUX", 16, []uint64{0, unix.TIOCLINUX}, eperm},
			{"mount", 165, nil, eperm},
			{"unshare", 272, nil, eperm},
			{"keyctl", 250, nil, eperm},
			{"bpf", 321, nil, eperm},
			{"io_uring_setup", 425, nil, eperm},
			{"open_by_handle_at", 304, nil, eperm},
			{"kcmp", 312, nil, eperm},
			{"newer than the profile", 1000, nil, enosys},
			{"x32 read", 0x40000000, nil, eperm},
		}},
		"386": {"amd64", unix.AUDIT_ARCH_I386, []call{
			{"read", 3, nil, allow},
			{"socket AF_VSOCK", 359, []uint64{unix.AF_VSOCK}, eperm},
			{"socket AF_INET", 359, []uint64{unix.AF_INET}, allow},
			{"mount", 21, nil, eperm},
			{"socketcall socket", 102, []uint64{1, 0x1000}, eperm},
			{"socketcall connect", 102, []uint64{3, 0x1000}, allow},
		}},
		"arm64": {"arm64", unix.AUDIT_ARCH_AARCH64, []call{
			{"read", 63, nil, allow},
			{"socket AF_VSOCK", 198, []uint64{unix.AF_VSOCK}, eperm},
			{"clone new pid", 220, []uint64{unix.CLONE_NEWPID}, eperm},
			{"ioctl TIOCSTI", 29, []uint64{0, unix.TIOCSTI}, eperm},
			{"mount", 40, nil, eperm},
		}},
		"arm": {"arm64", unix.AUDIT_ARCH_ARM, []call{
			{"set_tls", 0x0f0005, nil, allow},
			{"read", 3, nil, allow},
		}},
		"other architecture": {"amd64", unix.AUDIT_ARCH_AARCH64, []call{{"read", 63, nil, eperm}}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			prog, err := commandFilter(seccompArches[c.goarch])
			if err != nil {
				t.Fatal(err)
			}
			for _, call := range c.calls {
				if got := runFilter(t, prog, c.audit, call.nr, call.args...); got != call.want {
					t.Errorf("%s: %#x, want %#x", call.name, got, call.want)
				}
			}
		})
	}
}

// Every call of the profile is allowed by number, and none the profile
// leaves out: a table mixed up with another architecture's would not pass.
func TestCommandFilterFollowsProfile(t *testing.T) {
	prog, err := commandFilter(seccompArches["amd64"])
	if err != nil {
		t.Fatal(err)
	}
	listed := map[uint32]bool{}
	for _, r := range profileRules["amd64"] {
		listed[r.nr] = true
		if len(r.args) == 0 && r.errno == 0 && r.nr != 16 {
			if got := runFilter(t, prog, unix.AUDIT_ARCH_X86_64, r.nr); got != unix.SECCOMP_RET_ALLOW {
				t.Errorf("%s (%d): %#x, want allowed", r.name, r.nr, got)
			}
		}
	}
	for nr := uint32(0); nr <= syscallMax["amd64"]; nr++ {
		if !listed[nr] {
			if got := runFilter(t, prog, unix.AUDIT_ARCH_X86_64, nr); got != unix.SECCOMP_RET_ERRNO|uint32(unix.EPERM) {
				t.Errorf("call %d, not in the profile: %#x, want EPERM", nr, got)
			}
		}
	}
	t.Logf("%d instructions; %d calls allowed", len(prog), len(AllowedCalls()))
}
