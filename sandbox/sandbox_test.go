package sandbox_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/sandbox"
)

// procStatus returns the capability and no_new_privs lines a command in
// the sandbox reads from its own /proc/self/status.
func procStatus(t *testing.T, user *sandbox.User) map[string]string {
	t.Helper()
	e := newEnv(t)
	spec := e.spec("grep", "-E", "^(Uid|Gid|Groups|Cap[A-Za-z]+|NoNewPrivs):", "/proc/self/status")
	spec.User = user
	code, out := run(t, spec)
	if code != 0 {
		t.Fatalf("grep exited %d:\n%s", code, out)
	}
	m := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok {
			m[k] = strings.Join(strings.Fields(v), " ")
		}
	}
	return m
}

func TestCapabilitiesDropped(t *testing.T) {
	for _, tc := range []struct {
		name string
		user *sandbox.User
		uid  string
	}{
		{"Root", nil, "0 0 0 0"},
		{"OtherUser", &sandbox.User{UID: 65534, GID: 65534}, "65534 65534 65534 65534"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := procStatus(t, tc.user)
			for _, set := range []string{"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"} {
				if got, want := st[set], "0000000000000000"; got != want {
					t.Errorf("%s = %q, want %q", set, got, want)
				}
			}
			if got, want := st["NoNewPrivs"], "1"; got != want {
				t.Errorf("NoNewPrivs = %q, want %q", got, want)
			}
			if got := st["Uid"]; got != tc.uid {
				t.Errorf("Uid = %q, want %q", got, tc.uid)
			}
			if tc.user != nil && st["Groups"] != "" {
				t.Errorf("Groups = %q, want none", st["Groups"])
			}
		})
	}
}

// lockdownScript checks from inside what a sandboxed agent must and must
// not be able to do; each check prints "ok NAME" or "FAIL NAME".
const lockdownScript = `
check() { name=$1; shift; if "$@" >/dev/null 2>&1; then echo "ok $name"; else echo "FAIL $name"; fi; }
fails() { name=$1; shift; if "$@" >/dev/null 2>&1; then echo "FAIL $name"; else echo "ok $name"; fi; }
check listing test "$(ls "$ROOT" | tr '\n' ' ')" = "ro rw "
check write-rw sh -c 'echo note > "$ROOT/rw/note.md" && grep -q note "$ROOT/rw/note.md"'
fails write-ro sh -c 'echo x > "$ROOT/ro/new.md"'
check read-ro grep -q reference "$ROOT/ro/ref.md"
fails create-in-root touch "$ROOT/intruder"
fails mkdir-in-root mkdir "$ROOT/intruder"
fails umount umount "$ROOT/rw"
fails umount-root umount -l "$ROOT"
fails remount mount -o remount,rw "$ROOT"
fails mount-tmpfs mount -t tmpfs none "$ROOT/rw"
fails read-db cat "$DB/memfs.db"
check db-dir-empty sh -c 'out=$(ls -A "$DB" 2>/dev/null); test -z "$out"' 
fails write-db-dir touch "$DB/x"
check prompt grep -q "$ROOT" "$MEMFS_PROMPT_FILE"
fails write-prompt sh -c 'echo x >> "$MEMFS_PROMPT_FILE"'
`

func TestLockdown(t *testing.T) {
	for _, tc := range []struct {
		name string
		user *sandbox.User
	}{{"Root", nil}, {"OtherUser", &sandbox.User{UID: 65534, GID: 65534}}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			spec := e.spec("sh", "-c", lockdownScript)
			spec.User = tc.user
			code, out := run(t, spec)
			if code != 0 {
				t.Fatalf("script exited %d:\n%s", code, out)
			}
			got := checks(out)
			for _, name := range []string{"listing", "write-rw", "write-ro", "read-ro", "create-in-root", "mkdir-in-root",
				"umount", "umount-root", "remount", "mount-tmpfs", "read-db", "db-dir-empty", "write-db-dir",
				"prompt", "write-prompt"} {
				if !got[name] {
					t.Errorf("check %s failed or missing", name)
				}
			}
			if t.Failed() {
				t.Logf("script output:\n%s", out)
			}
			if _, err := os.Stat(e.stopped); err != nil {
				t.Errorf("the daemon was not stopped with SIGTERM: %v", err)
			}
			if b, _ := os.ReadFile(filepath.Join(e.db, "memfs.db")); string(b) != "secret database\n" {
				t.Errorf("database file changed on the host: %q", b)
			}
		})
	}
}

func TestExitStatus(t *testing.T) {
	for _, tc := range []struct {
		script string
		want   int
	}{
		{"exit 0", 0},
		{"exit 7", 7},
		{"kill -KILL $$", 128 + 9},
		{"kill -TERM $$", 128 + 15},
	} {
		t.Run(tc.script, func(t *testing.T) {
			code, out := run(t, newEnv(t).spec("sh", "-c", tc.script))
			if code != tc.want {
				t.Errorf("exit status %d, want %d; output:\n%s", code, tc.want, out)
			}
		})
	}
}

func TestSignalsReachCommand(t *testing.T) {
	for _, tc := range []struct {
		sig  syscall.Signal
		name string
	}{{syscall.SIGTERM, "TERM"}, {syscall.SIGINT, "INT"}, {syscall.SIGHUP, "HUP"}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			marker := filepath.Join(e.out, "trapped")
			started := filepath.Join(e.out, "started")
			// The trap counts deliveries and the command lingers after
			// the first, so that a second one would show.
			script := `got=0
trap 'echo ` + tc.name + ` >> "$MARKER"; got=1' ` + tc.name + `
touch "$STARTED"
while [ $got = 0 ]; do sleep 0.05; done
sleep 0.3
exit 42`
			spec := e.spec("sh", "-c", script)
			spec.Env = append(spec.Env, "MARKER="+marker, "STARTED="+started)
			sup := supervisorCmd(t, spec)
			sup.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := sup.Start(); err != nil {
				t.Fatal(err)
			}
			waitFor(t, started)
			// To memfs's whole process group, as a shell's kill %1 or a
			// terminal would: the command gets it once all the same.
			if err := syscall.Kill(-sup.Process.Pid, tc.sig); err != nil {
				t.Fatal(err)
			}
			err := sup.Wait()
			if got := sup.ProcessState.ExitCode(); got != 42 {
				t.Errorf("memfs exit status %d (%v), want 42", got, err)
			}
			if b, err := os.ReadFile(marker); err != nil || strings.TrimSpace(string(b)) != tc.name {
				t.Errorf("trap marker %q, %v; want %s", b, err, tc.name)
			}
		})
	}
}

// A supervisor killed outright takes the whole sandbox with it.
func TestSupervisorKilled(t *testing.T) {
	e := newEnv(t)
	started := filepath.Join(e.out, "started")
	nsFile := filepath.Join(e.out, "ns")
	spec := e.spec("sh", "-c", `readlink /proc/self/ns/pid > "$NSFILE"; touch "$STARTED"; while :; do sleep 0.05; done`)
	spec.Env = append(spec.Env, "NSFILE="+nsFile, "STARTED="+started)
	sup := supervisorCmd(t, spec)
	if err := sup.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, started)
	_ = sup.Process.Kill()
	_ = sup.Wait()
	waitNamespaceEmpty(t, readNamespace(t, nsFile))
	waitFor(t, e.stopped)
}

// Where no shell could continue memfs — here it leads its own session, as
// under ssh -t or docker exec -it — ^Z is dropped, as the kernel drops it
// for any command there, instead of stopping memfs for good.
func TestTerminalStopWithoutShell(t *testing.T) {
	e := newEnv(t)
	master, slave := openPTY(t)
	term := readTerminal(master)
	sup := supervisorCmd(t, e.spec("sh", "-c", `echo ready; read line; echo "got $line"; exit 7`))
	sup.Stdin, sup.Stdout, sup.Stderr = slave, slave, slave
	sup.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := sup.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	defer func() {
		_ = sup.Process.Kill()
		_ = sup.Wait()
	}()
	term.waitFor(t, "ready")
	if _, err := master.Write([]byte{0x1a}); err != nil { // ^Z
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if _, err := master.Write([]byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	term.waitFor(t, "got hello")
	err := sup.Wait()
	if code := sup.ProcessState.ExitCode(); code != 7 {
		t.Errorf("memfs exit status %d (%v), want 7; terminal:\n%s", code, err, term)
	}
}

// Through an interactive bash on a pseudo-terminal, as a user would: ^Z
// stops memfs (and the script running it), bg lets the command run on in
// the background (a read of the terminal stops it again), fg gives it the
// terminal, and however the run ends the shell keeps its terminal.
func TestShellJobControl(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash to drive job control with")
	}
	e := newEnv(t)
	self, _ := os.Executable()
	specEnv := func(name string, spec *sandbox.Spec) string {
		b, err := json.Marshal(spec)
		if err != nil {
			t.Fatal(err)
		}
		return name + "=" + string(b)
	}
	master, slave := openPTY(t)
	term := readTerminal(master)
	sh := exec.Command(bash, "--norc", "--noprofile", "--noediting", "-i")
	sh.Env = append(os.Environ(), "PS1=$ ", "TERM=dumb", "SUPERVISE="+self,
		// sleep is started before "ready": a ^Z that finds dash forking it
		// stops the child before its exec, and the shell waits for ever
		// in vfork (as it would in any terminal).
		specEnv("READS", e.spec("sh", "-c", `sleep 0.5 & echo ready; wait; echo slept; read line; echo "got $line"; exit 7`)),
		specEnv("ENDS", e.spec("sh", "-c", `echo started; sleep 0.5; echo finished; exit 3`)))
	sh.Stdin, sh.Stdout, sh.Stderr = slave, slave, slave
	sh.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	t.Cleanup(func() {
		_ = sh.Process.Kill()
		_ = sh.Wait()
	})
	typed := func(s string) {
		t.Helper()
		if _, err := master.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	stops := func() int { return strings.Count(term.String(), "Stopped") }

	typed("set -b\n") // report job changes at once, not at the next prompt
	typed(`SANDBOX_TEST_SPEC="$READS" "$SUPERVISE" supervise` + "\n")
	term.waitFor(t, "ready")
	typed("\x1a") // ^Z
	term.waitUntil(t, "memfs stopped by ^Z", func() bool { return stops() == 1 })
	typed("bg\n")
	term.waitFor(t, "slept")
	term.waitUntil(t, "the command, reading the terminal in the background, stopped again", func() bool { return stops() == 2 })
	typed("fg\n")
	typed("hello\n")
	term.waitFor(t, "got hello")
	typed("echo status=$?\n")
	term.waitFor(t, "status=7")

	// Run by a script, memfs shares the script's job: ^Z stops both.
	typed(`sh -c 'SANDBOX_TEST_SPEC="$READS" "$SUPERVISE" supervise; echo after-$?'` + "\n")
	term.waitUntil(t, "the second ready", func() bool { return strings.Count(term.String(), "ready\r\n") == 2 })
	typed("\x1a")
	term.waitUntil(t, "the script's job stopped by ^Z", func() bool { return stops() == 3 })
	typed("fg\n")
	typed("again\n")
	term.waitFor(t, "got again")
	term.waitFor(t, "after-7")

	// Started in the background, memfs ends there without taking the
	// terminal from the shell.
	typed(`SANDBOX_TEST_SPEC="$ENDS" "$SUPERVISE" supervise &` + "\n")
	term.waitFor(t, "finished")
	term.waitFor(t, "Exit 3") // bash reports the background job's status
	typed("echo shell-has-its-terminal\n")
	term.waitFor(t, "shell-has-its-terminal\r\n")
}

// The command cannot push input into the terminal it shares with the
// user's shell (TIOCSTI), as root or as another user.
func TestNoTerminalInjection(t *testing.T) {
	// The system's, which another user can run too.
	python := "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		t.Skip("no /usr/bin/python3 to call ioctl with")
	}
	script := `import fcntl, termios
try:
    fcntl.ioctl(0, termios.TIOCSTI, b"x")
    print("injected")
except OSError as e:
    print("refused", e.errno)`
	for _, user := range []*sandbox.User{nil, {UID: 65534, GID: 65534}} {
		t.Run(fmt.Sprintf("user=%v", user != nil), func(t *testing.T) {
			e := newEnv(t)
			master, slave := openPTY(t)
			term := readTerminal(master)
			spec := e.spec(python, "-c", script)
			spec.User = user
			sup := supervisorCmd(t, spec)
			sup.Stdin, sup.Stdout, sup.Stderr = slave, slave, slave
			sup.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
			if err := sup.Start(); err != nil {
				t.Fatal(err)
			}
			slave.Close()
			_ = sup.Wait()
			term.waitUntil(t, "the command reports", func() bool {
				return strings.Contains(term.String(), "refused") || strings.Contains(term.String(), "injected")
			})
			if out := term.String(); !strings.Contains(out, fmt.Sprint("refused ", int(syscall.EPERM))) {
				t.Errorf("TIOCSTI from the command was not refused with EPERM; terminal:\n%s", out)
			}
		})
	}
}

// Root without capabilities can still write what the kernel guards by uid
// alone: sysctls (core_pattern runs a program with every capability) and
// sysfs. In the sandbox they are read-only, /proc/kcore and the like
// hidden, and a procfs mounted elsewhere gone, while reading them goes on
// working.
func TestKernelInterfacesReadOnly(t *testing.T) {
	script := `check() { name=$1; shift; if "$@" >/dev/null 2>&1; then echo "ok $name"; else echo "FAIL $name"; fi; }
# access(2) probes, never writes: were the test wrong, a write would
# change the host's kernel.
writable() { for f in "$@"; do if [ -w "$f" ]; then echo "$f"; fi; done; }
owner_writable=$(find /proc/sys/kernel /sys/kernel /sys/module -maxdepth 3 -type f -perm -u+w 2>/dev/null | head -200)
check probes-found test -n "$owner_writable"
check kernel-ro test -z "$(writable /proc/sys/kernel/core_pattern /proc/sysrq-trigger $owner_writable)"
check other-proc-ro test -z "$(writable "$OTHER_PROC/sys/kernel/core_pattern" "$OTHER_PROC/sysrq-trigger")"
check other-proc-gone test ! -e "$OTHER_PROC/sys/kernel/core_pattern"
check sysctl-readable grep -q . /proc/sys/kernel/ostype
check sys-readable ls /sys/kernel
check kcore-hidden test ! -s /proc/kcore
check firmware-hidden sh -c 'test -z "$(ls -A /sys/firmware 2>/dev/null)"'
`
	// A proc mounted elsewhere, as in a chroot or build root on the host.
	e := newEnv(t)
	otherProc := filepath.Join(e.out, "chroot-proc")
	if err := os.Mkdir(otherProc, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("proc", otherProc, "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Unmount(otherProc, unix.MNT_DETACH) })
	spec := e.spec("sh", "-c", script)
	spec.Env = append(spec.Env, "OTHER_PROC="+otherProc)
	code, out := run(t, spec)
	if code != 0 {
		t.Fatalf("exit status %d:\n%s", code, out)
	}
	got := checks(out)
	for _, name := range []string{"probes-found", "kernel-ro", "other-proc-ro", "other-proc-gone", "sysctl-readable", "sys-readable", "kcore-hidden", "firmware-hidden"} {
		if !got[name] {
			t.Errorf("check %s failed or missing; output:\n%s", name, out)
		}
	}
}

// The command's /dev holds the harmless nodes, terminals and shared
// memory, and no disk: root could read the hidden database off one.
func TestDevices(t *testing.T) {
	script := `check() { name=$1; shift; if "$@" >/dev/null 2>&1; then echo "ok $name"; else echo "FAIL $name"; fi; }
check no-block-devices test -z "$(find /dev -type b)"
check listing test "$(ls /dev | tr '\n' ' ')" = "fd full null ptmx pts random shm stderr stdin stdout tty urandom zero "
check null sh -c 'echo x > /dev/null'
check urandom sh -c 'test "$(head -c 16 /dev/urandom | wc -c)" = 16'
check shm sh -c 'echo x > /dev/shm/f && rm /dev/shm/f'
check dev-fd sh -c 'exec 9</dev/null; test -e /dev/fd/9'
check no-new-nodes sh -c '! touch /dev/new'
`
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		script += `check new-pty /usr/bin/python3 -c 'import os, pty; m, s = pty.openpty(); assert os.ttyname(s).startswith("/dev/pts/")'
`
	}
	code, out := run(t, newEnv(t).spec("sh", "-c", script))
	if code != 0 {
		t.Fatalf("exit status %d:\n%s", code, out)
	}
	for name, ok := range checks(out) {
		if !ok {
			t.Errorf("check %s failed; output:\n%s", name, out)
		}
	}
	if !strings.Contains(out, "ok no-block-devices") {
		t.Errorf("checks missing; output:\n%s", out)
	}
}

// With --user the command's working directory is entered as that user: a
// directory the user could not reach is refused, not entered as root.
func TestWorkingDirectoryAsUser(t *testing.T) {
	e := newEnv(t)
	private := filepath.Join(e.dir, "private")
	if err := os.MkdirAll(filepath.Join(private, "pub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(private, 0o700); err != nil {
		t.Fatal(err)
	}
	spec := e.spec("true")
	spec.Dir = filepath.Join(private, "pub")
	spec.User = &sandbox.User{UID: 65534, GID: 65534}
	var out bytes.Buffer
	_, err := sandbox.Run(spec, nil, &out, &out)
	if !sandbox.IsKind(err, sandbox.KindSetup) || !strings.Contains(err.Error(), "working directory") {
		t.Errorf("sandbox.Run from a directory the user cannot reach: %v, want a setup error about the working directory; output:\n%s", err, out.String())
	}
}

// The command inherits standard input, output and error, not the other
// descriptors its caller left open.
func TestDescriptorsNotInherited(t *testing.T) {
	fd, err := unix.Open("/dev/null", unix.O_RDONLY, 0) // no O_CLOEXEC: inheritable
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	code, out := run(t, newEnv(t).spec("sh", "-c", fmt.Sprintf(`ls /proc/$$/fd; test ! -e /proc/$$/fd/%d`, fd)))
	if code != 0 {
		t.Errorf("descriptor %d reached the command; its descriptors:\n%s", fd, out)
	}
}

// A command running as root can send init, its namespace's PID 1, any
// signal: none ends the sandbox (Go's runtime would die of SIGABRT, SIGSEGV
// and others that init does not handle itself).
func TestInitSurvivesSignals(t *testing.T) {
	e := newEnv(t)
	var sigs []string
	for s := syscall.Signal(1); s < 32; s++ {
		switch s {
		case syscall.SIGKILL, syscall.SIGSTOP: // never delivered to init from inside
		case syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT,
			syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH: // forwarded to the command
		default:
			sigs = append(sigs, fmt.Sprint(int(s)))
		}
	}
	script := `for s in ` + strings.Join(sigs, " ") + `; do kill -s $s 1 || exit 1; done; sleep 0.2; exit 5`
	// Without a user namespace: in one, root inside is not init's user
	// and may not signal it at all.
	spec := e.spec("sh", "-c", script)
	spec.IDs = nil
	code, out := run(t, spec)
	if code != 5 {
		t.Fatalf("exit status %d, want the command's 5; output:\n%s", code, out)
	}
}

func TestOrphansEnded(t *testing.T) {
	e := newEnv(t)
	nsFile := filepath.Join(e.out, "ns")
	spec := e.spec("sh", "-c", `sleep 300 & readlink /proc/self/ns/pid > "$NSFILE"; exit 3`)
	spec.Env = append(spec.Env, "NSFILE="+nsFile)
	if code, out := run(t, spec); code != 3 {
		t.Fatalf("exit status %d, want 3:\n%s", code, out)
	}
	waitNamespaceEmpty(t, readNamespace(t, nsFile))
}

// The command has a PID namespace of its own: it sees only the sandbox's
// processes, cannot signal the supervisor (nor the daemon), and orphans
// that exit are reaped at once instead of staying zombies.
func TestPIDNamespace(t *testing.T) {
	e := newEnv(t)
	host, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		t.Fatal(err)
	}
	script := `check() { name=$1; shift; if "$@" >/dev/null 2>&1; then echo "ok $name"; else echo "FAIL $name"; fi; }
check own-namespace test "$(readlink /proc/self/ns/pid)" != "$HOSTNS"
check supervisor-hidden test ! -e "/proc/$SUPERVISOR"
check supervisor-unreachable sh -c '! kill -0 "$SUPERVISOR"'
check few-processes test "$(ls -d /proc/[0-9]* | wc -l)" -lt 8
(sleep 0.05 &)
sleep 0.5
check orphans-reaped sh -c '! cat /proc/[0-9]*/stat | grep -q "^[0-9]* (.*) Z "'
`
	spec := e.spec("sh", "-c", script)
	spec.Env = append(spec.Env, "HOSTNS="+host, fmt.Sprintf("SUPERVISOR=%d", os.Getpid()))
	code, out := run(t, spec)
	if code != 0 {
		t.Fatalf("exit status %d:\n%s", code, out)
	}
	got := checks(out)
	for _, name := range []string{"own-namespace", "supervisor-hidden", "supervisor-unreachable", "few-processes", "orphans-reaped"} {
		if !got[name] {
			t.Errorf("check %s failed or missing; output:\n%s", name, out)
		}
	}
}

func TestErrors(t *testing.T) {
	t.Run("CommandNotFound", func(t *testing.T) {
		e := newEnv(t)
		_, err := sandbox.Run(e.spec("no-such-command-memfs"), nil, os.Stdout, os.Stderr)
		if !sandbox.IsKind(err, sandbox.KindExec) || err.(*sandbox.Error).ExitCode != 127 {
			t.Fatalf("err = %#v, want a KindExec error with exit code 127", err)
		}
	})
	t.Run("DaemonFails", func(t *testing.T) {
		e := newEnv(t)
		spec := e.spec("true")
		spec.Serve = []string{"false"}
		_, err := sandbox.Run(spec, nil, os.Stdout, os.Stderr)
		if !sandbox.IsKind(err, sandbox.KindServe) {
			t.Fatalf("err = %v, want a KindServe error", err)
		}
	})
	t.Run("RootInsideHidden", func(t *testing.T) {
		e := newEnv(t)
		spec := e.spec("true")
		spec.Hide = []string{e.dir}
		_, err := sandbox.Run(spec, nil, os.Stdout, os.Stderr)
		if !sandbox.IsKind(err, sandbox.KindInvalid) {
			t.Fatalf("err = %v, want a KindInvalid error", err)
		}
	})
	t.Run("MountRootBusy", func(t *testing.T) {
		e := newEnv(t)
		if err := sandbox.CheckMountRoot(e.root); err != nil {
			t.Fatalf("free mount root: %v", err)
		}
		if err := unix.Mount("busy", e.root, "tmpfs", 0, "size=4k"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = unix.Unmount(e.root, unix.MNT_DETACH) })
		if err := sandbox.CheckMountRoot(e.root); !sandbox.IsKind(err, sandbox.KindBusy) {
			t.Fatalf("err = %v, want a KindBusy error", err)
		}
	})
}

func TestMakeMountRoot(t *testing.T) {
	t.Run("RemovedAfter", func(t *testing.T) {
		dir := t.TempDir()
		root := filepath.Join(dir, "a", "b", "memory")
		release, err := sandbox.MakeMountRoot(root)
		if err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
			t.Fatalf("mount root not made: %v", err)
		}
		release()
		if _, err := os.Stat(filepath.Join(dir, "a")); !os.IsNotExist(err) {
			t.Errorf("made directories left behind: %v", err)
		}
	})
	// Removing the root under another sandbox would detach its mount.
	t.Run("KeptWhileShared", func(t *testing.T) {
		root := filepath.Join(t.TempDir(), "memory")
		releaseA, err := sandbox.MakeMountRoot(root)
		if err != nil {
			t.Fatal(err)
		}
		releaseB, err := sandbox.MakeMountRoot(root)
		if err != nil {
			t.Fatal(err)
		}
		releaseA()
		if _, err := os.Stat(root); err != nil {
			t.Fatalf("the creator removed the mount root another sandbox holds: %v", err)
		}
		releaseB()
	})
	t.Run("Existing", func(t *testing.T) {
		root := t.TempDir()
		release, err := sandbox.MakeMountRoot(root)
		if err != nil {
			t.Fatal(err)
		}
		release()
		if _, err := os.Stat(root); err != nil {
			t.Errorf("a mount root that existed before was removed: %v", err)
		}
	})
}

func waitFor(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
	}
	t.Fatalf("%s never appeared", path)
}

func readNamespace(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ns := strings.TrimSpace(string(b))
	if host, _ := os.Readlink("/proc/self/ns/pid"); !strings.HasPrefix(ns, "pid:[") || ns == host {
		t.Fatalf("the command's PID namespace is %q, the host's %q: want one of its own", ns, host)
	}
	return ns
}

// waitNamespaceEmpty waits until no process of PID namespace ns runs.
func waitNamespaceEmpty(t *testing.T, ns string) {
	t.Helper()
	var left []string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		left = left[:0]
		procs, _ := filepath.Glob("/proc/[0-9]*")
		for _, p := range procs {
			if link, err := os.Readlink(p + "/ns/pid"); err == nil && link == ns {
				if b, err := os.ReadFile(p + "/stat"); err == nil && !strings.Contains(string(b), ") Z ") {
					left = append(left, filepath.Base(p))
				}
			}
		}
		if len(left) == 0 {
			return
		}
	}
	t.Fatalf("processes %v of the sandbox's PID namespace still run", left)
}
