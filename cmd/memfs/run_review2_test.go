package main

// A second attacker's review of `memfs run`: IPC, host kernel views, id
// ranges, what SIGKILL leaves, the seccomp allowlist and the database's
// aliases, each replayed through the built binary as root inside and as
// --user 65534.

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
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
