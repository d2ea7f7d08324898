package sandbox

//go:generate go run ../scripts/seccompgen -o seccomp_profile.go

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The command's seccomp filter is an allowlist: Docker's default profile
// for a container without added capabilities (seccomp_profile.go, made by
// scripts/seccompgen from the profile itself), which answers EPERM to any
// call it does not list, ENOSYS to clone3 (so that C libraries fall back to
// clone, whose namespace flags it refuses) and to numbers newer than it
// knows (as an older kernel would, so that programs fall back), and lets
// socket make no AF_VSOCK or AF_KCM socket. To it the sandbox adds the
// refusal of the terminal-injection ioctls, TIOCSTI and TIOCLINUX, of
// i386's socketcall(SYS_SOCKET), and of every x32 call and every call of an
// architecture it does not list.

// terminalInjection are the ioctl requests refused on top of the profile:
// they push input into a terminal, which the caller's shell would read.
var terminalInjection = []uint32{unix.TIOCSTI, unix.TIOCLINUX}

// sysSocketcallSocket is socketcall's operation number for socket.
const sysSocketcallSocket = 1

// AllowedCalls lists, for the documentation and the tests, the calls the
// command may make on this architecture (some only with the arguments
// the profile allows).
func AllowedCalls() []string {
	var names []string
	for _, a := range seccompArches[runtime.GOARCH][:1] {
		for _, r := range profileRules[a.table] {
			if r.errno == 0 && (len(names) == 0 || names[len(names)-1] != r.name) {
				names = append(names, r.name)
			}
		}
	}
	return names
}

// profileRule is one rule of the profile: the call number nr, allowed
// (errno 0) or answered with errno when every check of args holds.
type profileRule struct {
	nr    uint32
	name  string
	errno uint32
	args  []profileArg
}

// profileArg compares the low 32 bits of argument index with value; for
// cmpMaskedEq, (argument & value) with valueTwo.
type profileArg struct {
	index           int
	op              cmpOp
	value, valueTwo uint32
}

type cmpOp int

const (
	cmpEq cmpOp = iota
	cmpNe
	cmpLt
	cmpLe
	cmpGt
	cmpGe
	cmpMaskedEq
)

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
// system calls as, and its table in profileRules.
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

// program assembles classic BPF. A conditional jump's offsets are 8 bits,
// so every jump to a label is a conditional skip over an unconditional
// jump (BPF_JA, 32 bits).
type program struct {
	code   []unix.SockFilter
	fixups map[int]string // a BPF_JA → the label it jumps to
	labels map[string]int
	next   int // for fresh labels
}

const (
	bpfLoad = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	bpfJeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	bpfJgt  = unix.BPF_JMP | unix.BPF_JGT | unix.BPF_K
	bpfJge  = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
	bpfJa   = unix.BPF_JMP | unix.BPF_JA
	bpfAnd  = unix.BPF_ALU | unix.BPF_AND | unix.BPF_K
	bpfRet  = unix.BPF_RET | unix.BPF_K
	// Offsets in struct seccomp_data (little-endian: an argument's low half).
	nrAt, archAt, argsAt = 0, 4, 16
)

func (p *program) op(code uint16, k uint32) {
	p.code = append(p.code, unix.SockFilter{Code: code, K: k})
}
func (p *program) label(name string) { p.labels[name] = len(p.code) }
func (p *program) ret(k uint32)      { p.op(bpfRet, k) }
func (p *program) fresh() string     { p.next++; return fmt.Sprintf(".%d", p.next) }

// goTo jumps to label.
func (p *program) goTo(label string) {
	p.fixups[len(p.code)] = label
	p.op(bpfJa, 0)
}

// jumpIf jumps to label when the test holds (when it fails, with not).
func (p *program) jumpIf(code uint16, k uint32, not bool, label string) {
	jt, jf := uint8(0), uint8(1)
	if not {
		jt, jf = 1, 0
	}
	p.code = append(p.code, unix.SockFilter{Code: code, K: k, Jt: jt, Jf: jf})
	p.goTo(label)
}

func (p *program) link() ([]unix.SockFilter, error) {
	for at, name := range p.fixups {
		to, ok := p.labels[name]
		if !ok || to <= at {
			return nil, fmt.Errorf("seccomp filter: jump from %d to %q (%d) out of range", at, name, to)
		}
		p.code[at].K = uint32(to - at - 1)
	}
	if len(p.code) > unix.BPF_MAXINSNS {
		return nil, fmt.Errorf("seccomp filter: %d instructions, more than the kernel's %d", len(p.code), unix.BPF_MAXINSNS)
	}
	return p.code, nil
}

const (
	retAllow = unix.SECCOMP_RET_ALLOW
	retErrno = unix.SECCOMP_RET_ERRNO
)

// commandFilter is the filter: for each architecture, the sandbox's own
// refusals, then a binary search of the profile's rules by call number.
func commandFilter(arches []seccompArch) ([]unix.SockFilter, error) {
	p := &program{fixups: map[int]string{}, labels: map[string]int{}}
	eperm := retErrno | uint32(unix.EPERM)
	p.op(bpfLoad, archAt)
	for _, a := range arches {
		p.jumpIf(bpfJeq, a.audit, false, a.table)
	}
	p.ret(eperm)
	for _, a := range arches {
		rules := profileRules[a.table]
		nums := syscallNumbers[a.table]
		t := a.table + "."
		p.label(a.table)
		p.op(bpfLoad, nrAt)
		if a.x32 {
			p.jumpIf(bpfJge, 0x40000000, false, t+"eperm")
		}
		p.jumpIf(bpfJeq, nums["ioctl"], true, t+"socketcall")
		p.op(bpfLoad, argsAt+8) // the request
		for _, req := range terminalInjection {
			p.jumpIf(bpfJeq, req, false, t+"eperm")
		}
		p.op(bpfLoad, nrAt)
		p.label(t + "socketcall")
		if nr, ok := nums["socketcall"]; ok {
			// i386's socketcall passes socket's domain in memory, where
			// the filter cannot check it: an AF_VSOCK socket would pass
			// (from any x86-64 process, through int 0x80). Its socket
			// operation is refused; socket(2) itself is checked.
			p.jumpIf(bpfJeq, nr, true, t+"profile")
			p.op(bpfLoad, argsAt)
			p.jumpIf(bpfJeq, sysSocketcallSocket, false, t+"eperm")
			p.op(bpfLoad, nrAt)
		}
		p.label(t + "profile")
		// By number, each with its rules.
		var nrs [][]profileRule
		for i, r := range rules {
			if i == 0 || r.nr != rules[i-1].nr {
				nrs = append(nrs, nil)
			}
			nrs[len(nrs)-1] = append(nrs[len(nrs)-1], r)
		}
		var blocks []func()
		p.search(nrs, t, &blocks)
		// Not listed: newer than the profile, or refused.
		p.label(t + "unlisted")
		p.jumpIf(bpfJgt, syscallMax[a.table], false, t+"enosys")
		p.label(t + "eperm")
		p.ret(eperm)
		p.label(t + "enosys")
		p.ret(retErrno | uint32(unix.ENOSYS))
		for _, b := range blocks {
			b()
		}
	}
	return p.link()
}

// search emits a binary search of nrs (sorted) on the call number in the
// accumulator, going to t+"unlisted" when it is none of them; the checks of
// arguments are appended to blocks, to be emitted after.
func (p *program) search(nrs [][]profileRule, t string, blocks *[]func()) {
	if len(nrs) > 6 {
		mid := len(nrs) / 2
		upper := p.fresh()
		p.jumpIf(bpfJge, nrs[mid][0].nr, false, upper)
		p.search(nrs[:mid], t, blocks)
		p.label(upper)
		p.search(nrs[mid:], t, blocks)
		return
	}
	for _, rules := range nrs {
		if len(rules) == 1 && len(rules[0].args) == 0 {
			// Not this call: skip its return.
			p.code = append(p.code, unix.SockFilter{Code: bpfJeq, K: rules[0].nr, Jt: 0, Jf: 1})
			p.ret(retOf(rules[0]))
			continue
		}
		block := p.fresh()
		p.jumpIf(bpfJeq, rules[0].nr, false, block)
		*blocks = append(*blocks, func() { p.argChecks(block, rules, t) })
	}
	p.goTo(t + "unlisted")
}

func retOf(r profileRule) uint32 {
	if r.errno == 0 {
		return retAllow
	}
	return retErrno | r.errno
}

// argChecks emits, at label, the rules of one call: the first whose checks
// all hold decides; none holding, the call is refused as unlisted.
func (p *program) argChecks(label string, rules []profileRule, t string) {
	p.label(label)
	for _, r := range rules {
		next := p.fresh()
		for _, a := range r.args {
			p.op(bpfLoad, uint32(argsAt+8*a.index))
			switch a.op {
			case cmpEq:
				p.jumpIf(bpfJeq, a.value, true, next)
			case cmpNe:
				p.jumpIf(bpfJeq, a.value, false, next)
			case cmpLt:
				p.jumpIf(bpfJge, a.value, false, next)
			case cmpLe:
				p.jumpIf(bpfJgt, a.value, false, next)
			case cmpGt:
				p.jumpIf(bpfJgt, a.value, true, next)
			case cmpGe:
				p.jumpIf(bpfJge, a.value, true, next)
			case cmpMaskedEq:
				p.op(bpfAnd, a.value)
				p.jumpIf(bpfJeq, a.valueTwo, true, next)
			}
		}
		p.ret(retOf(r))
		p.label(next)
	}
	p.ret(retErrno | uint32(unix.EPERM))
}
