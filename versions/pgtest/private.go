package pgtest

import (
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"
)

// Private is a PostgreSQL server of one test's own, which the test may stop
// and start again (a database restart under a running mount): initdb into a
// new directory, listening on a Unix socket there and on no TCP port.
type Private struct {
	Dir string // the socket directory; the cluster is Dir/data
	URL string // postgres://postgres@/postgres?host=Dir
	bin string
}

// NewPrivate starts a private server, stopped and removed when the test
// ends. Like Database it skips the test unless MEMFS_TEST_POSTGRES is set
// (the suite's PostgreSQL part runs then), and it skips when this machine
// has no server binaries to start one with. As root the server runs as
// the postgres user: initdb refuses root.
func NewPrivate(t testing.TB) *Private {
	t.Helper()
	if Server() == "" {
		t.Skipf("no PostgreSQL: set %s to run this test (it starts a private server of its own; scripts/pg start prints a URL)", Env)
	}
	bin := os.Getenv("PG_BINDIR")
	if bin == "" {
		matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_ctl")
		if len(matches) > 0 {
			bin = filepath.Dir(matches[len(matches)-1])
		}
	}
	if _, err := os.Stat(filepath.Join(bin, "initdb")); bin == "" || err != nil {
		t.Skip("no PostgreSQL server binaries to start a private server (apt-get install postgresql, or set PG_BINDIR)")
	}
	// Not t.TempDir(): the postgres user must reach it.
	dir, err := os.MkdirTemp("", "memfs-pg-")
	if err != nil {
		t.Fatal(err)
	}
	p := &Private{Dir: dir, URL: "postgres://postgres@/postgres?host=" + dir, bin: bin}
	t.Cleanup(func() {
		if _, err := os.Stat(filepath.Join(dir, "data", "postmaster.pid")); err == nil {
			p.ctl("-m", "immediate", "-w", "stop")
		}
		os.RemoveAll(dir)
	})
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Skipf("running as root, a private PostgreSQL server needs the postgres user (apt-get install postgresql creates it): %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := p.cmd("initdb", "-D", filepath.Join(dir, "data"), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C.UTF-8").CombinedOutput(); err != nil {
		t.Fatalf("initdb for a private PostgreSQL server: %v\n%s", err, out)
	}
	p.Start(t)
	return p
}

// Start starts the server (again) and waits until it accepts connections.
func (p *Private) Start(t testing.TB) {
	t.Helper()
	// fsync=off: a stop -m immediate is a crash of the server, not of the
	// machine, so what a commit wrote to the kernel survives it anyway.
	if out, err := p.ctl("-l", filepath.Join(p.Dir, "server.log"), "-w", "-o",
		"-c listen_addresses= -c unix_socket_directories="+p.Dir+" -c fsync=off", "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(p.Dir, "server.log"))
		t.Fatalf("start the private PostgreSQL server: %v\n%s\n%s", err, out, log)
	}
}

// Stop stops the server with pg_ctl's mode: "immediate" is a crash (no
// shutdown checkpoint, recovery at the next start), "fast" a clean stop.
func (p *Private) Stop(t testing.TB, mode string) {
	t.Helper()
	if out, err := p.ctl("-m", mode, "-w", "stop"); err != nil {
		t.Fatalf("pg_ctl stop -m %s: %v\n%s", mode, err, out)
	}
}

func (p *Private) ctl(args ...string) ([]byte, error) {
	return p.cmd("pg_ctl", append([]string{"-D", filepath.Join(p.Dir, "data")}, args...)...).CombinedOutput()
}

// cmd runs a server binary, as the postgres user when this is root.
func (p *Private) cmd(name string, args ...string) *exec.Cmd {
	path := filepath.Join(p.bin, name)
	if os.Geteuid() == 0 {
		return exec.Command("runuser", append([]string{"-u", "postgres", "--", path}, args...)...)
	}
	return exec.Command(path, args...)
}
