package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/memfs/memfs/versions"
)

// serveMain is the "serve" helper mode: a daemon in its own process serving
// either a memfs session (--db, --session) or a go-fuse loopback (--loopback)
// on --mountpoint. It prints "ready" once mounted and unmounts on SIGTERM.
func serveMain(args []string, stdout io.Writer) error {
	fl := flag.NewFlagSet("serve", flag.ContinueOnError)
	dbPath := fl.String("db", "", "memfs database")
	session := fl.String("session", "", "session whose stores to mount")
	full := fl.Bool("full", false, "durability full")
	loopback := fl.String("loopback", "", "serve a loopback of this directory instead of memfs")
	mountpoint := fl.String("mountpoint", "", "where to mount")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *mountpoint == "" || (*loopback == "") == (*session == "") {
		return fmt.Errorf("need --mountpoint and either --loopback DIR or --db PATH --session ID")
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	var unmount func() error
	if *loopback != "" {
		srv, err := mountLoopback(*loopback, *mountpoint, true)
		if err != nil {
			return err
		}
		unmount = srv.Unmount
	} else {
		db, err := versions.Open(*dbPath, versions.Options{Durability: durability(*full)})
		if err != nil {
			return fmt.Errorf("open %s: %w", *dbPath, err)
		}
		defer db.Close()
		sess, err := db.GetSession(context.Background(), *session)
		if err != nil {
			return fmt.Errorf("session %s: %w", *session, err)
		}
		if unmount, err = mountMemfs(*mountpoint, db, sess); err != nil {
			return err
		}
	}
	fmt.Fprintln(stdout, "ready")
	<-sig
	return unmount()
}

func durability(full bool) versions.Durability {
	if full {
		return versions.DurabilityFull
	}
	return versions.DurabilityNormal
}

// daemon is a "serve" helper process.
type daemon struct {
	cmd *exec.Cmd
}

// startDaemon starts a serve helper with args and waits until it has
// mounted. The helper dies with the bench (Pdeathsig), so a killed bench
// leaves no daemon behind.
func startDaemon(ctx context.Context, args ...string) (*daemon, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find the bench binary to re-run: %w", err)
	}
	cmd := exec.Command(self, append([]string{"serve"}, args...)...)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the daemon: %w", err)
	}
	d := &daemon{cmd: cmd}
	ready := make(chan error, 1)
	go func() {
		line, err := bufio.NewReader(out).ReadString('\n')
		if err == nil && strings.TrimSpace(line) != "ready" {
			err = fmt.Errorf("daemon said %q instead of ready", line)
		}
		ready <- err
	}()
	select {
	case err = <-ready:
	case <-time.After(30 * time.Second):
		err = fmt.Errorf("daemon not mounted after 30s")
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		d.stop()
		return nil, fmt.Errorf("daemon %v: %w", args, err)
	}
	return d, nil
}

func (d *daemon) pid() int { return d.cmd.Process.Pid }

// stop asks the daemon to unmount and waits for it; a daemon that does not
// exit within 10s is killed.
func (d *daemon) stop() error {
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- d.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("daemon %d: %w", d.pid(), err)
		}
		return nil
	case <-time.After(10 * time.Second):
		_ = d.cmd.Process.Kill()
		<-done
		return fmt.Errorf("daemon %d did not unmount within 10s of SIGTERM and was killed", d.pid())
	}
}
