package main

// A second attacker's review of `memfs run`: IPC, host kernel views, id
// ranges, what SIGKILL leaves, the seccomp allowlist and the database's
// aliases, each replayed through the built binary as root inside and as
// --user 65534.

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/sandbox"
	"github.com/memfs/memfs/versions"
)

const python3 = "/usr/bin/python3"

func needPython(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(python3); err != nil {
		t.Skip("no /usr/bin/python3 to make system calls with")
	}
}

// sysvPy makes System V calls through ctypes: argv[1] is what to do.
const sysvPy = `
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
op, arg = sys.argv[1], int(sys.argv[2])
if op == "shmget":    # a segment of key arg exists here
    sys.exit(0 if libc.shmget(arg, 0, 0) >= 0 else 1)
if op == "shmat":     # segment id arg attaches and reads the host secret
    p = libc.shmat(arg, None, 0)
    sys.exit(0 if p not in (None, ctypes.c_void_p(-1).value) and ctypes.string_at(p, 11) == b"host secret" else 1)
if op == "make":      # a segment, a queue and a semaphore set of key arg
    ok = libc.shmget(arg, 4096, 0o1600) >= 0 and libc.msgget(arg, 0o1600) >= 0 and libc.semget(arg, 1, 0o1600) >= 0
    sys.exit(0 if ok else 1)
`

// The command shared the host's IPC namespace: as --user 65534 it read and
// overwrote a host System V segment, what it made outlived the run, and a
// later run with the same ids read it. Now each run has an IPC namespace of
// its own.
func TestRunReviewIPCNamespace(t *testing.T) {
	needPython(t)
	for _, u := range runUsers {
		t.Run(u.name, func(t *testing.T) {
			e := newRunEnv(t)
			e.stores(t)
			hostKey := 0x4d450000 + rand.IntN(0xffff)
			id, err := unix.SysvShmGet(hostKey, 4096, unix.IPC_CREAT|unix.IPC_EXCL|0o666)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _, _ = unix.SysvShmCtl(id, unix.IPC_RMID, nil) })
			mem, err := unix.SysvShmAttach(id, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			copy(mem, "host secret")
			_ = unix.SysvShmDetach(mem)
			// The host's POSIX message queues, through an mqueue mount.
			mq := filepath.Join(hostDir(t), "mq")
			if err := os.Mkdir(mq, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mount("mqueue", mq, "mqueue", 0, ""); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = syscall.Unmount(mq, syscall.MNT_DETACH) })
			queue := filepath.Join(mq, fmt.Sprintf("memfs-test-%d", hostKey))
			qf, err := os.OpenFile(queue, os.O_CREATE|os.O_RDWR, 0o666)
			if err != nil {
				t.Fatal(err)
			}
			qf.Close()
			t.Cleanup(func() { os.Remove(queue) })
			innerKey := hostKey + 0x10000
			py := fmt.Sprintf("%s -c '%s'", python3, sysvPy)
			script := fmt.Sprintf(`
echo "ipcns $(readlink /proc/self/ns/ipc)"
fails host-shmget %[1]s shmget %[2]d
fails host-shmat %[1]s shmat %[3]d
fails host-ipcs sh -c 'ipcs -m | grep -qi %[4]x'
fails host-mqueue test -e %[5]q
check make-own %[1]s make %[6]d
check see-own %[1]s shmget %[6]d
`, py, hostKey, id, hostKey, queue, innerKey)
			checks, out := e.attack(t, u.args, nil, script)
			wantChecks(t, checks, out, "host-shmget", "host-shmat", "host-ipcs", "host-mqueue", "make-own", "see-own")
			host, err := os.Readlink("/proc/self/ns/ipc")
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out, "ipcns ipc:[") || strings.Contains(out, "ipcns "+host+"\n") {
				t.Errorf("the command's IPC namespace is the host's (%s):\n%s", host, out)
			}
			// What the command made went with its namespace.
			if sid, err := unix.SysvShmGet(innerKey, 0, 0); err == nil {
				_, _ = unix.SysvShmCtl(sid, unix.IPC_RMID, nil)
				t.Errorf("the command's System V segment outlived the run")
			}
			if qid, _, errno := unix.Syscall(unix.SYS_MSGGET, uintptr(innerKey), 0, 0); errno == 0 {
				_, _, _ = unix.Syscall(unix.SYS_MSGCTL, qid, unix.IPC_RMID, 0)
				t.Errorf("the command's message queue outlived the run")
			}
			if sid, _, errno := unix.Syscall(unix.SYS_SEMGET, uintptr(innerKey), 0, 0); errno == 0 {
				_, _, _ = unix.Syscall6(unix.SYS_SEMCTL, sid, 0, unix.IPC_RMID, 0, 0, 0)
				t.Errorf("the command's semaphore set outlived the run")
			}
			var seg [16]byte
			if mem, err := unix.SysvShmAttach(id, 0, 0); err == nil {
				copy(seg[:], mem)
				_ = unix.SysvShmDetach(mem)
			}
			if !strings.HasPrefix(string(seg[:]), "host secret") {
				t.Errorf("the host's segment was changed: %q", seg)
			}
		})
	}
}

// A procfs the host had mounted at /mnt/p showed every host process and its
// command line inside, memfs's own included. Every procfs, sysfs and mqueue
// of the host's but /proc (covered by the command's) and /sys is detached.
func TestRunReviewHostProcfs(t *testing.T) {
	for _, u := range runUsers {
		t.Run(u.name, func(t *testing.T) {
			e := newRunEnv(t)
			e.stores(t)
			host := hostDir(t)
			p, s := filepath.Join(host, "p"), filepath.Join(host, "s")
			for dir, fs := range map[string]string{p: "proc", s: "sysfs"} {
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := syscall.Mount(fs, dir, fs, 0, ""); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
			}
			script := fmt.Sprintf(`
fails host-proc test -e %[1]q/1/cmdline
fails host-proc-listed sh -c 'ls -A %[1]q | grep -q .'
fails host-memfs sh -c 'cat %[1]q/[0-9]*/cmdline | tr "\0" " " | grep -q -- "--ready[-]fd"'
fails host-sys sh -c 'ls -A %[2]q | grep -q .'
check own-proc sh -c 'test "$(ls -d /proc/[0-9]* | wc -l)" -lt 20'
check own-sys test -d /sys/kernel
check pid-self test -r /proc/self/status
`, p, s)
			checks, out := e.attack(t, u.args, nil, script)
			wantChecks(t, checks, out, "host-proc", "host-proc-listed", "host-memfs", "host-sys", "own-proc", "own-sys", "pid-self")
		})
	}
}

// agentPy is what an agent's Python does: threads, a subprocess, a process
// pool, an HTTP server and client on 127.0.0.1, files, select and mmap.
const agentPy = `
import http.server, json, mmap, multiprocessing, os, socket, subprocess, sys, tempfile, threading, urllib.request
srv = http.server.HTTPServer(("127.0.0.1", 0), type("H", (http.server.BaseHTTPRequestHandler,), {
    "do_GET": lambda self: (self.send_response(200), self.end_headers(), self.wfile.write(b"pong")),
    "log_message": lambda self, *a: None}))
threading.Thread(target=srv.serve_forever, daemon=True).start()
port = srv.server_address[1]
open(os.environ["OUT"] + "/port", "w").write(str(port))
assert urllib.request.urlopen("http://127.0.0.1:%d/" % port).read() == b"pong"
assert subprocess.run(["sh", "-c", "echo hi | tr a-z A-Z"], capture_output=True).stdout == b"HI\n"
with multiprocessing.Pool(2) as p:
    assert p.map(abs, [-1, -2]) == [1, 2]
with tempfile.NamedTemporaryFile() as f:
    f.write(b"x" * 4096); f.flush()
    with mmap.mmap(f.fileno(), 4096) as m:
        assert m[:1] == b"x"
json.dumps({"ok": True})
print("python-ok")
`

// agentNode is the same for Node: files, a child process, an HTTP server
// and client on 127.0.0.1, a worker thread.
const agentNode = `
const http = require("http"), fs = require("fs"), cp = require("child_process"), { Worker } = require("worker_threads");
fs.writeFileSync("/tmp/node.txt", "n"); if (fs.readFileSync("/tmp/node.txt", "utf8") !== "n") process.exit(1);
if (cp.execSync("echo hi | tr a-z A-Z").toString() !== "HI\n") process.exit(2);
const w = new Worker("require('worker_threads').parentPort.postMessage(7)", { eval: true });
w.on("message", (m) => {
  if (m !== 7) process.exit(3);
  const s = http.createServer((q, r) => r.end("pong")).listen(0, "127.0.0.1", () => {
    http.get({ host: "127.0.0.1", port: s.address().port }, (r) => {
      let b = ""; r.on("data", (d) => b += d); r.on("end", () => { console.log(b === "pong" ? "node-ok" : "node-bad"); s.close(); w.terminate(); });
    });
  });
});
`

// hostHasInt80 reports whether this kernel serves i386 system calls
// (int 0x80) from a 64-bit process: one without them (no IA32 emulation)
// kills the caller with SIGSEGV.
func hostHasInt80(t *testing.T) bool {
	t.Helper()
	src := probePy[strings.Index(probePy, "# The same socket through i386"):]
	err := exec.Command(python3, "-c", "import ctypes, socket\nlibc = ctypes.CDLL(None, use_errno=True)\n"+src).Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ProcessState.Sys().(syscall.WaitStatus).Signal() == syscall.SIGSEGV {
		return false
	}
	return true
}

// probePy makes the calls the filter must refuse: an AF_VSOCK socket, a
// call the profile does not list (get_mempolicy, which needs CAP_SYS_NICE
// there), one newer than the profile knows, and an AF_VSOCK socket through
// i386's socketcall.
const probePy = `
import ctypes, errno, socket
libc = ctypes.CDLL(None, use_errno=True)
try:
    socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM); print("vsock allowed")
except OSError as e:
    print("vsock " + errno.errorcode.get(e.errno, str(e.errno)))
for name, nr in (("unlisted", 239), ("newer", 1000)):
    ctypes.set_errno(0)
    r = libc.syscall(nr, 0, 0, 0, 0, 0)
    print(name, r, errno.errorcode.get(ctypes.get_errno(), ctypes.get_errno()))
# The same socket through i386 socketcall (int 0x80), its domain in memory:
# socketcall(SYS_SOCKET, {AF_VSOCK, SOCK_STREAM, 0}), from code below 4 GiB.
import struct
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
p = libc.mmap(None, 4096, 7, 0x22 | 0x40, -1, 0)
ctypes.memmove(p + 256, struct.pack("<III", socket.AF_VSOCK, 1, 0), 12)
code = b"\x53\xb8\x66\x00\x00\x00\xbb\x01\x00\x00\x00\xb9" + struct.pack("<I", p + 256) + b"\xcd\x80\x48\x63\xc0\x5b\xc3"
ctypes.memmove(p, code, len(code))
print("vsock-int80", ctypes.CFUNCTYPE(ctypes.c_long)(p)())
`

// The seccomp filter was a denylist, and calls it did not name were
// allowed: socket(AF_VSOCK) succeeded. It is Docker's default profile, an
// allowlist; what an agent typically runs still works.
func TestRunReviewSeccompAllowlist(t *testing.T) {
	needPython(t)
	if runtime.GOARCH != "amd64" {
		t.Skip("the probe's system call numbers are x86-64's")
	}
	for _, u := range runUsers {
		t.Run(u.name, func(t *testing.T) {
			e := newRunEnv(t)
			e.stores(t)
			probe, wants := probePy, []string{"vsock EPERM\n", "unlisted -1 EPERM\n", "newer -1 ENOSYS\n", "vsock-int80 -1\n"}
			if !hostHasInt80(t) {
				// A kernel without i386 system calls kills a process that
				// makes one, sandbox or not: there is no such path to close.
				probe, wants = probe[:strings.Index(probe, "# The same socket through i386")], wants[:3]
			}
			for name, src := range map[string]string{"agent.py": agentPy, "agent.js": agentNode, "probe.py": probe} {
				if err := os.WriteFile(filepath.Join(e.out, name), []byte(src), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			node := "check node-skipped true"
			if _, err := os.Stat("/usr/bin/node"); err == nil {
				node = `check node sh -c '/usr/bin/node "$OUT/agent.js" | grep -qx node-ok'`
			}
			script := fmt.Sprintf(`
check python sh -c '%[1]s "$OUT/agent.py" | grep -qx python-ok'
%[2]s
check git sh -c 'cd /tmp && git init -q repo && cd repo && echo a > a && git add a && git -c user.name=a -c user.email=a@b commit -qm a && git log --oneline | grep -q a && git status --short | wc -l | grep -qx 0'
check curl sh -c '%[1]s -m http.server --bind 127.0.0.1 18765 --directory /tmp >/dev/null 2>&1 & p=$!; for i in $(seq 50); do curl -sf http://127.0.0.1:18765/ >/dev/null && break; sleep 0.1; done; curl -sf http://127.0.0.1:18765/ | grep -q repo; r=$?; kill $p; exit $r'
check pipeline sh -c 'seq 1000 | sort -rn | head -3 | tr "\n" " " | grep -qx "1000 999 998 " && find /usr/bin -maxdepth 1 -name "s*" | wc -l | grep -qv "^0$" && printf "a\nb\n" | awk "{print toupper(\$0)}" | sed s/A/x/ | grep -qx x'
check tar sh -c 'cd /tmp && tar czf t.tgz repo && tar tzf t.tgz | grep -q repo/a'
check store-write sh -c 'echo note > "$ROOT/agent-notes/n.md" && cat "$ROOT/agent-notes/n.md" | grep -qx note'
%[1]s "$OUT/probe.py"
`, python3, node)
			checks, out := e.attack(t, u.args, nil, script)
			wantChecks(t, checks, out, "python", "git", "curl", "pipeline", "tar", "store-write")
			if _, err := os.Stat("/usr/bin/node"); err == nil {
				wantChecks(t, checks, out, "node")
			}
			for _, want := range wants {
				if !strings.Contains(out, want) {
					t.Errorf("the probe did not print %q:\n%s", want, out)
				}
			}
		})
	}
}

// The database's directory, bind-mounted elsewhere on the host by the
// operator, was listable inside through that alias. The run now refuses to
// start while another mount shows it, whether of the directory or of a
// parent.
func TestRunReviewDatabaseAlias(t *testing.T) {
	for _, u := range runUsers {
		t.Run(u.name, func(t *testing.T) {
			e := newRunEnv(t)
			host := hostDir(t)
			e.db = filepath.Join(host, "data", "db", "memfs.db")
			if err := os.MkdirAll(filepath.Dir(e.db), 0o755); err != nil {
				t.Fatal(err)
			}
			e.stores(t)
			for _, c := range []struct{ name, source string }{
				{"directory", filepath.Dir(e.db)},
				{"parent", filepath.Dir(filepath.Dir(e.db))},
			} {
				alias := filepath.Join(host, "alias-"+c.name)
				if err := os.Mkdir(alias, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := syscall.Mount(c.source, alias, "", syscall.MS_BIND, ""); err != nil {
					t.Fatal(err)
				}
				args := append([]string{"run", "--store", "Agent Notes", "--mount-root", e.root}, u.args...)
				out, errs, code := e.memfs(t, append(args, "--", "sh", "-c", "ls -R "+alias)...)
				_ = syscall.Unmount(alias, syscall.MNT_DETACH)
				if strings.Contains(out, "memfs.db") {
					t.Errorf("%s alias: the command listed the database through %s:\n%s", c.name, alias, out)
				}
				if code != exitInvalid || !strings.Contains(errs, "also reachable at "+alias) {
					t.Errorf("%s alias: memfs run exited %d, want %d and a refusal naming %s:\n%s", c.name, code, exitInvalid, alias, errs)
				}
			}
			// Without the alias it runs.
			args := append([]string{"run", "--store", "Agent Notes", "--mount-root", e.root}, u.args...)
			if _, errs, code := e.memfs(t, append(args, "--", "true")...); code != 0 {
				t.Errorf("memfs run without an alias: exit %d\n%s", code, errs)
			}
		})
	}
}

// A 0644 database stayed 0644 with no warning. memfs run warns about the
// file while others may read it; a directory others may only read is no
// warning once the file is private (TestNewcomer3RunPrivateTmpNoFalseWarning).
func TestRunReviewDatabaseReadableWarning(t *testing.T) {
	e := newRunEnv(t)
	e.stores(t)
	dir := filepath.Dir(e.db)
	for p, mode := range map[string]os.FileMode{dir: 0o755, e.db: 0o644} {
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	run := func() string {
		_, errs, code := e.memfs(t, "run", "--store", "Agent Notes", "--mount-root", e.root, "--", "true")
		if code != 0 {
			t.Fatalf("memfs run: exit %d\n%s", code, errs)
		}
		return errs
	}
	errs := run()
	for _, want := range []string{"the database file is readable by every user", "path=" + e.db + " mode=0644"} {
		if !strings.Contains(errs, want) {
			t.Errorf("no warning %q:\n%s", want, errs)
		}
	}
	for p, mode := range map[string]os.FileMode{dir: 0o700, e.db: 0o600} {
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	if errs := run(); strings.Contains(errs, "readable by every user") {
		t.Errorf("a warning about a private database:\n%s", errs)
	}
}

// --uid-base could overlap a live run's range, and --uid-base 1 --user 999
// read a uid-1000 0600 host file. An overlapping base is refused while the
// other run lives; a base below 65536 needs --allow-host-ids, and is
// logged.
func TestRunReviewIDRanges(t *testing.T) {
	for _, u := range runUsers {
		t.Run(u.name, func(t *testing.T) {
			e := newRunEnv(t)
			e.stores(t)
			base := 0x60000000 + rand.IntN(0x1000)*sandbox.IDRangeSize
			started, goOn := filepath.Join(e.out, "started"), filepath.Join(e.out, "go")
			args := append([]string{"run", "--store", "Agent Notes", "--mount-root", e.root, "--rw", e.out, "--uid-base", strconv.Itoa(base)}, u.args...)
			a := e.command(append(args, "--", "sh", "-c", fmt.Sprintf("touch %q; while [ ! -e %q ]; do sleep 0.05; done", started, goOn))...)
			var aerr bytes.Buffer
			a.Stderr = &aerr
			if err := a.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = os.WriteFile(goOn, nil, 0o644); _ = a.Wait() })
			waitForFile(t, started, &aerr)
			root2 := filepath.Join(e.dir, "memory2")
			other := func(b int, extra ...string) (string, int) {
				args := append([]string{"run", "--store", "Reference", "--mount-root", root2, "--uid-base", strconv.Itoa(b)}, u.args...)
				_, errs, code := e.memfs(t, append(append(args, extra...), "--", "true")...)
				return errs, code
			}
			for _, b := range []int{base, base + 100, base - 100} {
				if errs, code := other(b); code != exitConflict || !strings.Contains(errs, "overlap those of a live memfs run") {
					t.Errorf("--uid-base %d beside a live run at %d: exit %d, want %d and a refusal:\n%s", b, base, code, exitConflict, errs)
				}
			}
			if errs, code := other(-1); code != exitUsage || !strings.Contains(errs, "--uid-base -1 is negative") {
				t.Errorf("--uid-base -1: exit %d, want %d and a refusal naming it:\n%s", code, exitUsage, errs)
			}
			if errs, code := other(base + sandbox.IDRangeSize); code != 0 {
				t.Errorf("--uid-base %d, right after a live run's range: exit %d\n%s", base+sandbox.IDRangeSize, code, errs)
			}
			if err := os.WriteFile(goOn, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := a.Wait(); err != nil {
				t.Fatalf("the first run: %v\n%s", err, aerr.String())
			}
			if errs, code := other(base + 100); code != 0 {
				t.Errorf("--uid-base %d once the run at %d ended: exit %d\n%s", base+100, base, code, errs)
			}

			// Host ids.
			secret := filepath.Join(hostDir(t), "secret")
			if err := os.WriteFile(secret, []byte("uid 1000's secret\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(secret, 1000, 1000); err != nil {
				t.Fatal(err)
			}
			hostArgs := []string{"run", "--store", "Agent Notes", "--mount-root", e.root, "--uid-base", "1", "--user", "999"}
			out, errs, code := e.memfs(t, append(hostArgs, "--", "cat", secret)...)
			if code != exitInvalid || strings.Contains(out, "secret") || !strings.Contains(errs, "--allow-host-ids") {
				t.Errorf("--uid-base 1 --user 999: exit %d, want %d and a refusal naming --allow-host-ids\nstdout:\n%s\nstderr:\n%s", code, exitInvalid, out, errs)
			}
			out, errs, code = e.memfs(t, append(append(hostArgs, "--allow-host-ids"), "--", "cat", secret)...)
			if code != 0 || !strings.Contains(out, "secret") || !strings.Contains(errs, "--allow-host-ids: the command's ids are host ids") {
				t.Errorf("--uid-base 1 --user 999 --allow-host-ids: exit %d, want the file read and a warning\nstdout:\n%s\nstderr:\n%s", code, out, errs)
			}
		})
	}
}

// stagePid is the pid of the namespace stage memfs run (supervisor) started.
func stagePid(t *testing.T, supervisor int) int {
	t.Helper()
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(supervisor) && strings.Contains(string(cmdline), "__memfs_sandbox_namespace") {
			return pid
		}
	}
	t.Fatalf("no namespace stage under memfs run %d", supervisor)
	return 0
}

// runCgroup is where the cgroup of the namespace stage pid would be.
func runCgroup(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	var st unix.Statfs_t
	v2 := unix.Statfs("/sys/fs/cgroup", &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC
	for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok && v2 {
			return filepath.Join("/sys/fs/cgroup", p, fmt.Sprintf("memfs-run-%d", pid))
		}
		if f := strings.SplitN(line, ":", 3); len(f) == 3 && f[1] == "pids" && !v2 {
			return filepath.Join("/sys/fs/cgroup/pids", f[2], fmt.Sprintf("memfs-run-%d", pid))
		}
	}
	t.Skip("no cgroup pids controller here")
	return ""
}

// Killing the namespace stage left the mount root it made (/mnt/memory)
// and the run's pids cgroup. Now the supervisor removes them once the stage
// is gone; and when both are killed at once, the next run does.
func TestRunReviewKilledStage(t *testing.T) {
	for _, u := range runUsers {
		t.Run(u.name, func(t *testing.T) {
			e := newRunEnv(t)
			e.stores(t)
			start := func(root string) (*exec.Cmd, *bytes.Buffer, string) {
				idFile := filepath.Join(e.out, "session")
				os.Remove(idFile)
				args := append([]string{"run", "--store", "Agent Notes", "--mount-root", root, "--rw", e.out}, u.args...)
				cmd := e.command(append(args, "--", "sh", "-c", fmt.Sprintf(`echo "$MEMFS_SESSION_ID" > %q.tmp; mv %q.tmp %q; exec sleep 300`, idFile, idFile, idFile))...)
				var errb bytes.Buffer
				cmd.Stderr = &errb
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
				waitForFile(t, idFile, &errb)
				b, _ := os.ReadFile(idFile)
				return cmd, &errb, strings.TrimSpace(string(b))
			}
			made := filepath.Join(e.dir, "made")
			root := filepath.Join(made, "deep", "memory")

			// The stage alone.
			sup, errb, id := start(root)
			stage := stagePid(t, sup.Process.Pid)
			cg := runCgroup(t, stage)
			if _, err := os.Stat(cg); err != nil {
				t.Fatalf("the run has no cgroup at %s: %v", cg, err)
			}
			if err := syscall.Kill(stage, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- sup.Wait() }()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Fatalf("memfs run still running 30s after its namespace stage was killed:\n%s", errb.String())
			}
			if _, err := os.Stat(made); !os.IsNotExist(err) {
				t.Errorf("the mount root's directory %s outlived the killed stage (%v)", made, err)
			}
			if _, err := os.Stat(cg); !os.IsNotExist(err) {
				t.Errorf("the run's cgroup %s outlived the killed stage (%v)", cg, err)
			}
			var sess versions.Session
			e.json(t, &sess, "session", "get", id)
			if sess.EndedAt == nil {
				t.Errorf("session %s still open after its namespace stage was killed", id)
			}

			// The supervisor and the stage at once: the next run cleans up.
			sup, errb, _ = start(root)
			stage = stagePid(t, sup.Process.Pid)
			cg = runCgroup(t, stage)
			_ = syscall.Kill(sup.Process.Pid, syscall.SIGKILL)
			_ = syscall.Kill(stage, syscall.SIGKILL)
			_ = sup.Wait()
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
				if syscall.Kill(stage, 0) == syscall.ESRCH || time.Now().After(deadline) {
					break
				}
			}
			time.Sleep(500 * time.Millisecond) // the command's processes dying with their namespace
			args := append([]string{"run", "--store", "Reference", "--mount-root", e.root}, u.args...)
			if _, errs, code := e.memfs(t, append(args, "--", "true")...); code != 0 {
				t.Fatalf("the next run: exit %d\n%s", code, errs)
			}
			if _, err := os.Stat(made); !os.IsNotExist(err) {
				t.Errorf("the next run left the killed run's %s (%v)\n%s", made, err, errb.String())
			}
			if _, err := os.Stat(cg); !os.IsNotExist(err) {
				t.Errorf("the next run left the killed run's cgroup %s (%v)", cg, err)
			}
		})
	}
}

// openSessions lists the sessions not ended.
func (e *runEnv) openSessions(t *testing.T) []string {
	t.Helper()
	var page versions.Page[versions.Session]
	e.json(t, &page, "session", "list", "--limit", "1000")
	var open []string
	for _, s := range page.Data {
		if s.EndedAt == nil {
			open = append(open, s.ID)
		}
	}
	return open
}

// Killing memfs run 5-80 ms after it started left 4 of 25 sessions open,
// and killing every process of a run left its session open. The run holds a
// lease on its session from the transaction that creates it; once it has
// lapsed, the next use of the database ends the session.
func TestRunReviewKilledEarly(t *testing.T) {
	e := newRunEnv(t)
	e.stores(t)
	const trials = 25
	started := 0
	for i := range trials {
		delay := 5*time.Millisecond + time.Duration(i)*75*time.Millisecond/(trials-1)
		cmd := e.command("run", "--store", "Agent Notes", "--mount-root", e.root, "--", "sleep", "300")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(delay)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		started++
	}
	// Every process of a run, the daemon included, once it serves.
	idFile := filepath.Join(e.out, "session")
	cmd := e.command("run", "--store", "Agent Notes", "--mount-root", e.root, "--rw", e.out, "--", "sh", "-c",
		fmt.Sprintf(`echo "$MEMFS_SESSION_ID" > %q.tmp; mv %q.tmp %q; exec sleep 300`, idFile, idFile, idFile))
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForFile(t, idFile, &errb)
	killTree(cmd.Process.Pid)
	_ = cmd.Wait()
	var open []string
	for deadline := time.Now().Add(3*versions.LeaseTTL + 5*time.Second); ; time.Sleep(200 * time.Millisecond) {
		if open = e.openSessions(t); len(open) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(open) > 0 {
		t.Errorf("%d of %d killed runs left their session open: %v", len(open), started+1, open)
	}
}

// killTree sends SIGKILL to pid and every process below it at once, the
// command in its namespaces included.
func killTree(pid int) {
	kids := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			continue
		}
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if ppid, err := strconv.Atoi(f[1]); err == nil {
			kids[ppid] = append(kids[ppid], p)
		}
	}
	var all []int
	var walk func(int)
	walk = func(p int) {
		all = append(all, p)
		for _, k := range kids[p] {
			walk(k)
		}
	}
	walk(pid)
	for _, p := range all {
		_ = syscall.Kill(p, syscall.SIGSTOP)
	}
	for _, p := range all {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
}
