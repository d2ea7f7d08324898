package sandbox_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/sandbox"
)

// The test binary plays every part: the sandbox's own stages, a stand-in
// for the FUSE daemon and a supervisor to send signals to.
func TestMain(m *testing.M) {
	if code, ok := sandbox.RunStage(os.Args); ok {
		os.Exit(code)
	}
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "fake-serve":
			os.Exit(fakeServe(os.Args[2], os.Args[3]))
		case "supervise":
			os.Exit(supervise())
		}
	}
	if os.Geteuid() != 0 {
		fmt.Println("sandbox tests need root (mount namespaces, tmpfs mounts): skipping")
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// fakeServe stands in for `memfs mount`: a read-only root holding a
// writable "rw" and a read-only "ro" directory, on a tmpfs instead of FUSE.
// On SIGTERM it unmounts and records that it did in stopped.
func fakeServe(root, stopped string) int {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM)
	steps := []func() error{
		func() error { return unix.Mount("fake-memfs", root, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size=1m") },
		func() error { return os.Mkdir(filepath.Join(root, "rw"), 0o777) },
		func() error { return os.Chmod(filepath.Join(root, "rw"), 0o777) },
		func() error { return os.Mkdir(filepath.Join(root, "ro"), 0o755) },
		func() error { return os.WriteFile(filepath.Join(root, "ro", "ref.md"), []byte("reference\n"), 0o644) },
		func() error { return bind(filepath.Join(root, "rw"), false) },
		func() error { return bind(filepath.Join(root, "ro"), true) },
		func() error {
			return unix.Mount("", root, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, "")
		},
	}
	for i, step := range steps {
		if err := step(); err != nil {
			fmt.Fprintf(os.Stderr, "fake-serve step %d: %v\n", i, err)
			return 1
		}
	}
	ready := os.NewFile(3, "ready")
	fmt.Fprint(ready, "ready\n")
	ready.Close()
	<-sigs
	if err := unix.Unmount(root, unix.MNT_DETACH); err != nil {
		fmt.Fprintf(os.Stderr, "fake-serve unmount: %v\n", err)
		return 1
	}
	if err := os.WriteFile(stopped, []byte("stopped\n"), 0o644); err != nil {
		return 1
	}
	return 0
}

func bind(dir string, readOnly bool) error {
	if err := unix.Mount(dir, dir, "", unix.MS_BIND, ""); err != nil || !readOnly {
		return err
	}
	return unix.Mount("", dir, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, "")
}

// supervise runs the Spec in $SANDBOX_TEST_SPEC in this process, which a
// test can then signal, and exits with Run's status (99 for an error).
func supervise() int {
	var spec sandbox.Spec
	if err := json.Unmarshal([]byte(os.Getenv("SANDBOX_TEST_SPEC")), &spec); err != nil {
		fmt.Fprintln(os.Stderr, "supervise:", err)
		return 99
	}
	code, err := sandbox.Run(&spec, os.Stdin, os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "supervise:", err)
		return 99
	}
	return code
}

// env is a sandbox layout under a test's temporary directory.
type env struct {
	dir, root, db, stopped string
	out                    string // granted to the command: where it leaves what tests read
	ids                    *sandbox.IDMap
}

func newEnv(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	// t.TempDir's parents are private to the test user; the sandboxed
	// user of some tests must reach what lies below.
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e := &env{
		dir:     dir,
		root:    filepath.Join(dir, "memory"),
		db:      filepath.Join(dir, "db"),
		stopped: filepath.Join(dir, "stopped"),
		out:     filepath.Join(dir, "out"),
	}
	ids, release, err := sandbox.AllocateIDs(-1, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	e.ids = ids
	for _, d := range []string{e.root, e.db, e.out} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(e.out, 0o777); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(e.db, "memfs.db"), "secret database\n")
	t.Cleanup(func() { assertNoMountUnder(t, dir) })
	return e
}

func (e *env) spec(cmd ...string) *sandbox.Spec {
	self, _ := os.Executable()
	return &sandbox.Spec{
		MountRoot: e.root,
		Serve:     []string{self, "fake-serve", e.root, e.stopped},
		Hide:      []string{e.db},
		Prompt:    "# Memory\nstores at " + e.root + "\n",
		IDs:       e.ids,
		RW:        []string{e.out},
		Cmd:       cmd,
		Env:       append(os.Environ(), "MEMFS_PROMPT_FILE="+sandbox.PromptFile, "ROOT="+e.root, "DB="+e.db),
	}
}

// run runs spec in this process and returns Cmd's status and output.
func run(t *testing.T, spec *sandbox.Spec) (int, string) {
	t.Helper()
	var out bytes.Buffer
	code, err := sandbox.Run(spec, nil, &out, &out)
	if err != nil {
		t.Fatalf("sandbox.Run: %v\noutput:\n%s", err, out.String())
	}
	return code, out.String()
}

func mustWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// assertNoMountUnder fails if the host's mount table still holds a mount
// below dir, and detaches it so that one failure does not leak.
func assertNoMountUnder(t *testing.T, dir string) {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 1 && strings.HasPrefix(f[1], dir) {
			t.Errorf("mount left on the host: %s", line)
			_ = unix.Unmount(f[1], unix.MNT_DETACH)
		}
	}
}

// checks parses the "ok NAME" / "FAIL NAME" lines a sandboxed script prints.
func checks(out string) map[string]bool {
	m := map[string]bool{}
	for line := range strings.SplitSeq(out, "\n") {
		if name, ok := strings.CutPrefix(line, "ok "); ok {
			m[name] = true
		} else if name, ok := strings.CutPrefix(line, "FAIL "); ok {
			m[name] = false
		}
	}
	return m
}

func supervisorCmd(t *testing.T, spec *sandbox.Spec) *exec.Cmd {
	t.Helper()
	b, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	self, _ := os.Executable()
	cmd := exec.Command(self, "supervise")
	cmd.Env = append(os.Environ(), "SANDBOX_TEST_SPEC="+string(b))
	return cmd
}

// openPTY opens a pseudo-terminal pair; neither end becomes this process's
// controlling terminal.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { master.Close() })
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetUint32(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("pty number: %v", err)
	}
	slave, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	return master, slave
}

// terminalOutput collects what is written to a pty's slave end.
type terminalOutput struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func readTerminal(master *os.File) *terminalOutput {
	o := &terminalOutput{}
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := master.Read(b)
			o.mu.Lock()
			o.buf.Write(b[:n])
			o.mu.Unlock()
			if err != nil {
				return // EIO once every slave end is closed
			}
		}
	}()
	return o
}

func (o *terminalOutput) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

func (o *terminalOutput) waitFor(t *testing.T, s string) {
	t.Helper()
	o.waitUntil(t, fmt.Sprintf("the terminal shows %q", s), func() bool { return strings.Contains(o.String(), s) })
}

func (o *terminalOutput) waitUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if ok() {
			return
		}
	}
	ps, _ := exec.Command("ps", "-eo", "pid,ppid,pgid,sid,tpgid,stat,wchan:24,args").CombinedOutput()
	t.Fatalf("waited 20s for this in vain: %s; the terminal shows:\n%s\nthe processes:\n%s", what, o.String(), ps)
}
