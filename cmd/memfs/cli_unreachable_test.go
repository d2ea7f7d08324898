package main

import (
	"net"
	"strings"
	"testing"
)

// A PostgreSQL server that cannot be reached is one line naming its host
// and port, never the URL's password, and its own exit code.
func TestCLIDatabaseUnreachable(t *testing.T) {
	// A port nothing listens on: bound, then closed.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	for _, dsn := range []string{
		"postgres://memfs:s3cret@" + addr + "/memfs",
		"host=127.0.0.1 port=" + addr[strings.LastIndexByte(addr, ':')+1:] + " user=memfs password=s3cret dbname=memfs",
	} {
		e := &cliEnv{db: dsn}
		for _, args := range [][]string{{"store", "list"}, {"store", "create", "--name", "x"}} {
			_, stderr, code := e.exec(t, "", args...)
			if code != exitUnreachable {
				t.Errorf("%q with %s: exit %d, want %d\n%s", args, dsn, code, exitUnreachable, stderr)
			}
			if !strings.Contains(stderr, "cannot reach the database at "+addr+"/memfs") || strings.Contains(stderr, "s3cret") ||
				strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("%q with a server down says:\n%s", args, stderr)
			}
		}
	}
}
