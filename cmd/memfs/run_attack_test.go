package main

// The attacks an adversarial review of `memfs run` found, each replayed
// through the built binary, as root inside and as --user 65534: every test
// here failed before the sandbox had a user namespace, a read-only host
// view, its own devpts, keyring and /tmp, limits and a clean environment.

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// runUsers are the two identities every attack is tried as.
var runUsers = []struct {
	name string
	args []string
}{{"Root", nil}, {"User", []string{"--user", "65534:65534"}}}

// attack runs script in the sandbox with the stores of e.stores and extra
// memfs run flags, and returns its checks; it fails the test unless the
// run exits 0.
func (e *runEnv) attack(t *testing.T, user []string, extra []string, script string) (map[string]bool, string) {
	t.Helper()
	args := append([]string{"run", "--store", "Agent Notes", "--store", "Reference:read_only", "--mount-root", e.root,
		"--pass-env", "ROOT", "--env", "DBFILE=" + e.db, "--env", "OUT=" + e.out, "--rw", e.out}, user...)
	args = append(append(args, extra...), "--", "sh", "-c", attackPrelude+script)
	out, errs, code := e.memfs(t, args...)
	if code != 0 {
		t.Fatalf("memfs run exited %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	return runChecks(out), out + "\nstderr:\n" + errs
}

const attackPrelude = `
check() { name=$1; shift; if "$@" >/dev/null 2>&1; then echo "ok $name"; else echo "FAIL $name"; fi; }
fails() { name=$1; shift; if "$@" >/dev/null 2>&1; then echo "FAIL $name"; else echo "ok $name"; fi; }
`

func wantChecks(t *testing.T, got map[string]bool, out string, names ...string) {
	t.Helper()
	for _, n := range names {
		if !got[n] {
			t.Errorf("check %s failed or missing", n)
		}
	}
	if t.Failed() {
		t.Logf("output:\n%s", out)
	}
}

// Root inside wrote /usr/sbin/request-key, a root-owned host file, and had
// the kernel run it with every capability by calling request_key(2). The
// test never writes the real helper: it probes it with access(2), and
// writes a root-owned stand-in it made beside /etc's and the database's.
func TestRunAttackHostFiles(t *testing.T) {
	for _, u := range runUsers {
		t.Run(u.name, func(t *testing.T) {
			e := newRunEnv(t)
			e.stores(t)
			helper := filepath.Join(e.dir, "sbin", "request-key")
			if err := os.MkdirAll(filepath.Dir(helper), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(helper, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			etcProbe := fmt.Sprintf("/etc/memfs-attack-%d", os.Getpid())
			t.Cleanup(func() { os.Remove(etcProbe) })
			script := `
fails write-helper sh -c 'echo "#!/bin/sh" > "$HELPER"'
fails helper-writable test -w /usr/sbin/request-key
fails modprobe-writable test -w /sbin/modprobe
fails write-etc touch "$ETC_PROBE"
fails rename-db-parent mv "$(dirname "$DBFILE")" "$(dirname "$DBFILE").moved"
fails plant-db-dir mkdir "$(dirname "$(dirname "$DBFILE")")/planted"
check home-writable sh -c 'echo x > "$HOME/x" && test "$(cat "$HOME/x")" = x'
check tmp-writable sh -c 'echo x > /tmp/x && rm /tmp/x'
check rw-writable sh -c 'echo x > "$OUT/x" && rm "$OUT/x"'
`
			got, out := e.attack(t, u.args, []string{"--env", "HELPER=" + helper, "--env", "ETC_PROBE=" + etcProbe}, script)
			wantChecks(t, got, out, "write-helper", "helper-writable", "modprobe-writable", "write-etc",
				"rename-db-parent", "plant-db-dir", "home-writable", "tmp-writable", "rw-writable")
			if b, _ := os.ReadFile(helper); string(b) != "#!/bin/sh\nexit 0\n" {
				t.Errorf("the stand-in helper changed on the host: %q", b)
			}
			if _, err := os.Stat(etcProbe); err == nil {
				t.Errorf("the command created %s on the host", etcProbe)
			}
		})
	}
}

// The seccomp filter refuses the kernel's keyrings, bpf, perf, userfaultfd,
// io_uring and new user namespaces, and the command's session keyring is
// not the caller's: a secret memfs's caller keeps there stays there.
func TestRunAttackKernelInterfaces(t *testing.T) {
	python := "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		t.Skip("no /usr/bin/python3 to make system calls with")
	}
	if out, _ := exec.Command("uname", "-m").Output(); strings.TrimSpace(string(out)) != "x86_64" {
		t.Skip("the probe's system call numbers are x86-64's")
	}
	for _, u := range runUsers {
		t.Run(u.name, func(t *testing.T) {
			e := newRunEnv(t)
			e.stores(t)
			script := python + ` -c '
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
p = ctypes.c_char_p
calls = {
    "keyctl": (250, 0, -3, 0), "add_key": (248, p(b"user"), p(b"memfs-probe"), p(b"x"), 1, -3),
    "request_key": (249, p(b"user"), p(b"memfs-probe-none"), None, -3), "bpf": (321, 0xffff, None, 0),
    "perf_event_open": (298, None, 0, -1, -1, 0), "userfaultfd": (323, 0), "unshare_user": (272, 0x10000000),
    "io_uring_setup": (425, 1, None), "clone_newuser": (56, 0x10000000 | 17, None, None, None, None),
}
bad = []
for name, (nr, *args) in calls.items():
    ctypes.set_errno(0)
    r = libc.syscall(nr, *args)
    if r == 0 and name == "clone_newuser":
        libc._exit(0)
    e = ctypes.get_errno()
    if r != -1 or e != errno.EPERM:
        bad.append("%s=%d/%s" % (name, r, errno.errorcode.get(e, e)))
print("allowed: " + (" ".join(bad) or "none"))
# The caller put a secret in its session keyring: the command must not
# find it there (keyctl is refused anyway; its keyring is a new one).
ctypes.set_errno(0)
k = libc.syscall(250, 10, -3, p(b"user"), p(b"memfs-attack-secret"), 0)
print("secret-found" if k > 0 else "secret-not-found")
'
`
			// The caller: a key in its session keyring, one in root's user
			// keyring, both expiring on their own, then memfs.
			wrapper := `import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
for ring in (-3, -4):
    k = libc.syscall(248, ctypes.c_char_p(b"user"), ctypes.c_char_p(b"memfs-attack-secret"), ctypes.c_char_p(b"s3cret"), 6, ring)
    if k < 0:
        sys.exit("add_key: %d" % ctypes.get_errno())
    libc.syscall(250, 15, k, 60)
os.execv(sys.argv[1], sys.argv[1:])
`
			args := append([]string{"-c", wrapper, memfsBin, "run", "--store", "Agent Notes", "--mount-root", e.root}, u.args...)
			cmd := exec.Command(python, append(args, "--", "sh", "-c", script)...)
			cmd.Env = append(os.Environ(), "MEMFS_DB="+e.db)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("memfs run: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
			}
			out := stdout.String()
			if !strings.Contains(out, "allowed: none\n") {
				t.Errorf("system calls the filter should refuse were allowed:\n%s\nstderr:\n%s", out, stderr.String())
			}
			if !strings.Contains(out, "secret-not-found") {
				t.Errorf("the command found the caller's keyring secret:\n%s", out)
			}
		})
	}
}

// The sandbox's /dev/pts was the host's: root opened another session's
// terminal. Now the command has a devpts of its own, where it can still
// make terminals, and no other.
func TestRunAttackTerminals(t *testing.T) {
	for _, u := range runUsers {
		t.Run(u.name, func(t *testing.T) {
			e := newRunEnv(t)
			e.stores(t)
			master, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(master)
			if err := unix.IoctlSetPointerInt(master, unix.TIOCSPTLCK, 0); err != nil {
				t.Fatal(err)
			}
			n, err := unix.IoctlGetUint32(master, unix.TIOCGPTN)
			if err != nil {
				t.Fatal(err)
			}
			victim := fmt.Sprintf("/dev/pts/%d", n)
			// Another session's terminal, as a user logged in would have it.
			if err := os.Chmod(victim, 0o666); err != nil {
				t.Fatal(err)
			}
			script := `
fails open-victim sh -c 'echo injected > "$VICTIM"'
fails victim-listed test -e "$VICTIM"
check own-ptmx test -c /dev/pts/ptmx
check ptmx-link test "$(readlink /dev/ptmx)" = pts/ptmx
`
			if _, err := os.Stat("/usr/bin/python3"); err == nil {
				script += `check new-pty /usr/bin/python3 -c 'import os, pty; m, s = pty.openpty(); os.write(s, b"x"); assert os.read(m, 1) == b"x"'
`
			}
			got, out := e.attack(t, u.args, []string{"--env", "VICTIM=" + victim}, script)
			wantChecks(t, got, out, "open-victim", "victim-listed", "own-ptmx", "ptmx-link")
			b := make([]byte, 64)
			if n, _ := unix.Read(master, b); n > 0 {
				t.Errorf("the command wrote %q to another terminal", b[:n])
			}
		})
	}
}

// Each run left /tmp/memfs-run-N/memory-prompt.md, readable by all, in the
// shared /tmp: another session read it, root replaced it, and a run killed
// with SIGKILL left it and the mount root it made. Now the prompt is in
// the run's own mount namespace only, 0400 and the command's, and a killed
// run leaves nothing.
func TestRunAttackPrompts(t *testing.T) {
	for _, u := range runUsers {
		t.Run(u.name, func(t *testing.T) {
			e := newRunEnv(t)
			e.stores(t)
			e.ok(t, "store", "create", "--name", "Victim", "--description", "victim-secret-description")
			before, _ := filepath.Glob("/tmp/memfs-run-*")
			// The victim: a session that runs until told to stop.
			stop := filepath.Join(e.out, "stop")
			victim := e.command("run", "--store", "Victim", "--mount-root", filepath.Join(e.dir, "victim-root"), "--rw", e.out,
				"--env", "STOP="+stop, "--", "sh", "-c", `grep -q victim-secret-description "$MEMFS_PROMPT_FILE" && touch "$STOP.ready"; while [ ! -e "$STOP" ]; do sleep 0.05; done`)
			var verr bytes.Buffer
			victim.Stderr = &verr
			if err := victim.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() {
				_ = os.WriteFile(stop, nil, 0o644)
				_ = victim.Wait()
			}()
			waitForFile(t, stop+".ready", &verr)
			script := `
check prompt-mode test "$(stat -c %a "$MEMFS_PROMPT_FILE")" = 400
check prompt-owner test "$(stat -c %u "$MEMFS_PROMPT_FILE")" = "$(id -u)"
check prompt-readable grep -q agent-notes "$MEMFS_PROMPT_FILE"
fails prompt-writable sh -c 'echo x >> "$MEMFS_PROMPT_FILE"'
fails prompt-replaceable sh -c 'rm -f "$MEMFS_PROMPT_FILE" || mv "$(dirname "$MEMFS_PROMPT_FILE")" /tmp/moved'
fails other-prompt sh -c 'grep -rqs victim-secret-description /tmp/memfs-run-* /tmp/memfs /run/memfs /var/tmp "$(dirname "$ROOT")"'
`
			got, out := e.attack(t, u.args, nil, script)
			wantChecks(t, got, out, "prompt-mode", "prompt-owner", "prompt-readable", "prompt-writable", "prompt-replaceable", "other-prompt")
			after, _ := filepath.Glob("/tmp/memfs-run-*")
			if len(after) > len(before) {
				t.Errorf("runs left prompt directories in the host's /tmp: %v", after)
			}
		})
	}
	t.Run("Killed", func(t *testing.T) {
		e := newRunEnv(t)
		e.stores(t)
		root := filepath.Join(e.dir, "made", "memory")
		started := filepath.Join(e.out, "started")
		cmd := e.command("run", "--store", "Agent Notes", "--mount-root", root, "--rw", e.out, "--env", "STARTED="+started,
			"--", "sh", "-c", `touch "$STARTED"; exec sleep 300`)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitForFile(t, started, &errb)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if _, err := os.Stat(filepath.Join(e.dir, "made")); os.IsNotExist(err) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the mount root %s a killed run made is still there 20s on; stderr:\n%s", root, errb.String())
			}
		}
	})
}

// The database's directory was hidden by the path given, and its parent
// was an ordinary writable directory: root renamed it and planted a forged
// database. With the database behind a symlink, only the symlink's
// directory was hidden.
func TestRunAttackDatabaseSwap(t *testing.T) {
	for _, u := range runUsers {
		t.Run(u.name, func(t *testing.T) {
			e := newRunEnv(t)
			real := filepath.Join(e.dir, "real", "memfs.db")
			if err := os.MkdirAll(filepath.Dir(real), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Dir(e.db), 0o755); err != nil {
				t.Fatal(err)
			}
			link := e.db
			e.db = real
			e.stores(t) // creates the real database
			if err := os.Symlink(real, link); err != nil {
				t.Fatal(err)
			}
			script := `
fails read-real sh -c 'head -c 15 "$REAL" | grep -qa SQLite'
fails read-link sh -c 'head -c 15 "$LINK" | grep -qa SQLite'
check real-dir-empty sh -c 'test -z "$(ls -A "$(dirname "$REAL")" 2>/dev/null)"'
fails rename-real-dir mv "$(dirname "$REAL")" "$(dirname "$REAL").old"
fails plant-forged sh -c 'mkdir -p "$(dirname "$REAL").new" && echo forged > "$(dirname "$REAL").new/memfs.db"'
`
			args := append([]string{"run", "--db", link, "--store", "Agent Notes", "--mount-root", e.root,
				"--env", "REAL=" + real, "--env", "LINK=" + link}, u.args...)
			out, errs, code := e.memfs(t, append(args, "--", "sh", "-c", attackPrelude+script)...)
			if code != 0 {
				t.Fatalf("memfs run exited %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
			}
			wantChecks(t, runChecks(out), out, "read-real", "read-link", "real-dir-empty", "rename-real-dir", "plant-forged")
			if _, err := os.Stat(filepath.Dir(real) + ".new"); err == nil {
				t.Errorf("the command planted a directory beside the database's")
			}
		})
	}
}

// Host file systems were not nodev: a device node outside /dev opened, and
// /sys/fs/cgroup's tmpfs took new files.
func TestRunAttackDevicesAndCgroups(t *testing.T) {
	for _, u := range runUsers {
		t.Run(u.name, func(t *testing.T) {
			e := newRunEnv(t)
			e.stores(t)
			node := filepath.Join(e.out, "zero")
			if err := unix.Mknod(node, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 5))); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(node, 0o666); err != nil {
				t.Fatal(err)
			}
			probe := fmt.Sprintf("/sys/fs/cgroup/memfs-attack-%d", os.Getpid())
			t.Cleanup(func() { os.Remove(probe) })
			script := `
fails open-node sh -c 'head -c 1 "$NODE" | wc -c | grep -q 1'
fails cgroup-tmpfs touch "$PROBE"
`
			got, out := e.attack(t, u.args, []string{"--env", "NODE=" + node, "--env", "PROBE=" + probe}, script)
			wantChecks(t, got, out, "open-node", "cgroup-tmpfs")
		})
	}
}

// The command started 4,000 processes; now --pids bounds them (1024 by
// default).
func TestRunAttackProcesses(t *testing.T) {
	for _, u := range runUsers {
		t.Run(u.name, func(t *testing.T) {
			e := newRunEnv(t)
			e.stores(t)
			// A fork refused ends a subshell, not the script; what it
			// started is then killed with everything else in the sandbox.
			// Builtins only once the limit is reached.
			script := `(for i in $(seq 100); do sleep 5 & done) 2>/dev/null
set -- /proc/[0-9]*; alive=$#; echo "alive $alive"; kill -9 -1 2>/dev/null
check bounded test "$alive" -le 40`
			got, out := e.attack(t, u.args, []string{"--pids", "32"}, script)
			wantChecks(t, got, out, "bounded")
		})
	}
}

// --log followed a symlink planted in a world-writable directory, and
// logged a path the agent chose as it was: a line that ran a command when
// the file was sourced.
func TestRunAttackLog(t *testing.T) {
	e := newRunEnv(t)
	e.stores(t)
	target := filepath.Join(e.dir, "profile")
	if err := os.WriteFile(target, []byte("# root's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	logDir := filepath.Join(e.dir, "logs")
	if err := os.Mkdir(logDir, 0o700); err != nil {
		t.Fatal(err)
	}
	planted := filepath.Join(logDir, "daemon.log")
	if err := os.Symlink(target, planted); err != nil {
		t.Fatal(err)
	}
	public := filepath.Join(e.dir, "public")
	if err := os.Mkdir(public, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(public, 0o1777); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, log string }{{"Symlink", planted}, {"WorldWritableDir", filepath.Join(public, "daemon.log")}} {
		t.Run(tc.name, func(t *testing.T) {
			_, errs, code := e.memfs(t, "run", "--store", "Reference", "--mount-root", e.root, "--log", tc.log, "--", "true")
			if code != exitInvalid || !strings.Contains(errs, "--log") {
				t.Errorf("exit %d, stderr:\n%s\nwant %d naming --log", code, errs, exitInvalid)
			}
		})
	}
	if b, _ := os.ReadFile(target); string(b) != "# root's\n" {
		t.Errorf("memfs appended to the symlink's target: %q", b)
	}
	for _, u := range runUsers {
		t.Run(u.name, func(t *testing.T) {
			logFile := filepath.Join(logDir, "run-"+u.name+".log")
			pwned := filepath.Join(e.out, "pwned")
			// A refused write into the read-only store: the daemon logs
			// its path.
			script := `echo x > "$ROOT/reference/\$(touch pwned)
time=0 level=ERROR msg=forged \$(touch pwned).md"; echo done`
			out, errs, code := e.memfs(t, append(append([]string{"run", "--store", "Reference:read_only", "--mount-root", e.root,
				"--pass-env", "ROOT", "--log", logFile}, u.args...), "--", "sh", "-c", script)...)
			if code != 0 || !strings.Contains(out, "done") {
				t.Fatalf("memfs run exited %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
			}
			fi, err := os.Stat(logFile)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("the log file's mode is %v, want 0600", fi.Mode().Perm())
			}
			b, _ := os.ReadFile(logFile)
			for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
				if !strings.HasPrefix(line, "time=") || strings.HasPrefix(line, "time=0 ") || strings.Contains(line, "$(") {
					t.Errorf("a log line carries what the agent wrote unescaped: %q", line)
				}
			}
			// Its $ escaped: fully (\x24\x28), or, in a value holding a
			// space, which the handler quotes, $ alone.
			if !strings.Contains(string(b), `x24\\x28touch pwned`) && !strings.Contains(string(b), `\\x24(touch pwned)`) {
				t.Errorf("the refused path is not in the log, escaped:\n%s", b)
			}
			sh := exec.Command("sh", "-c", `. "$1"`, "sh", logFile)
			sh.Dir = e.out
			_ = sh.Run()
			if _, err := os.Stat(pwned); err == nil {
				t.Errorf("sourcing the log ran the agent's command")
			}
		})
	}
}

// A host process of the same uid entered the command's mounts through
// /proc/PID/root and wrote to its stores in the session's name. The
// command's uid is now the session's own host uid.
func TestRunAttackReverse(t *testing.T) {
	for _, u := range runUsers {
		t.Run(u.name, func(t *testing.T) {
			e := newRunEnv(t)
			e.stores(t)
			started, stop := filepath.Join(e.out, "started"), filepath.Join(e.out, "stop")
			args := append([]string{"run", "--store", "Agent Notes", "--mount-root", e.root, "--rw", e.out,
				"--env", "STARTED=" + started, "--env", "STOP=" + stop}, u.args...)
			cmd := e.command(append(args, "--", "sh", "-c", `touch "$STARTED"; while [ ! -e "$STOP" ]; do sleep 0.05; done; echo `+commandMark)...)
			var errb bytes.Buffer
			cmd.Stderr = &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() {
				_ = os.WriteFile(stop, nil, 0o644)
				_ = cmd.Wait()
			}()
			waitForFile(t, started, &errb)
			pid := commandPid(t)
			// nobody on the host, as --user 65534 is inside.
			probe := fmt.Sprintf(`ls /proc/%d/root%s/agent-notes && echo planted > /proc/%d/root%s/agent-notes/planted.md`, pid, e.root, pid, e.root)
			enter := exec.Command("setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", "sh", "-c", probe)
			if out, err := enter.CombinedOutput(); err == nil {
				t.Errorf("a host process of uid 65534 entered the command's mounts:\n%s", out)
			}
			var status string
			if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
				for _, l := range strings.Split(string(b), "\n") {
					if strings.HasPrefix(l, "Uid:") {
						status = l
					}
				}
			}
			if f := strings.Fields(status); len(f) < 2 || f[1] == "0" || f[1] == "65534" {
				t.Errorf("the command runs as host %q: want its session's own uid", status)
			}
		})
	}
}

const commandMark = "memfs-attack-reverse"

// commandPid finds the host pid of the sandboxed shell waiting for stop.
func commandPid(t *testing.T) int {
	t.Helper()
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, []byte(commandMark)) && bytes.HasPrefix(b, []byte("sh\x00")) {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			return pid
		}
	}
	t.Fatal("the sandboxed command's process is not in /proc")
	return 0
}

// The caller's whole environment reached the command (HOME=/root under
// --user), and modes the command set on the terminal stayed after it.
func TestRunAttackEnvironment(t *testing.T) {
	for _, u := range runUsers {
		t.Run(u.name, func(t *testing.T) {
			e := newRunEnv(t)
			e.stores(t)
			script := `
check no-secret test -z "$CALLER_SECRET"
check no-db test -z "$MEMFS_DB"
check home sh -c 'test "$HOME" = /tmp/home && touch "$HOME/.profile"'
check passed test "$PASSED" = yes
check set test "$SET" = value
check few-vars test "$(env | wc -l)" -le 12
`
			cmd := e.command(append(append([]string{"run", "--store", "Agent Notes", "--mount-root", e.root,
				"--pass-env", "PASSED", "--env", "SET=value"}, u.args...), "--", "sh", "-c", attackPrelude+script)...)
			cmd.Env = append(cmd.Env, "CALLER_SECRET=hunter2", "PASSED=yes")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("memfs run: %v\n%s\n%s", err, stdout.String(), stderr.String())
			}
			wantChecks(t, runChecks(stdout.String()), stdout.String(), "no-secret", "no-db", "home", "passed", "set", "few-vars")
		})
	}
	t.Run("TerminalModes", func(t *testing.T) {
		e := newRunEnv(t)
		e.stores(t)
		master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer master.Close()
		if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
			t.Fatal(err)
		}
		n, _ := unix.IoctlGetUint32(int(master.Fd()), unix.TIOCGPTN)
		slave, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer slave.Close()
		go func() { _, _ = bytes.NewBuffer(nil).ReadFrom(master) }()
		before, err := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
		if err != nil {
			t.Fatal(err)
		}
		cmd := e.command("run", "--store", "Agent Notes", "--mount-root", e.root, "--", "stty", "raw", "-echo")
		cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
		if err := cmd.Run(); err != nil {
			t.Fatalf("memfs run: %v", err)
		}
		after, err := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
		if err != nil {
			t.Fatal(err)
		}
		if after.Lflag != before.Lflag || after.Iflag != before.Iflag || after.Oflag != before.Oflag {
			t.Errorf("terminal modes not restored: lflag %#x → %#x, iflag %#x → %#x", before.Lflag, after.Lflag, before.Iflag, after.Iflag)
		}
	})
}

func waitForFile(t *testing.T, path string, stderr *bytes.Buffer) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared; stderr:\n%s", path, stderr.String())
		}
	}
}
