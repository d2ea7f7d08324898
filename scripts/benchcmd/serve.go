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
// on --mountpoint. It writes "ready" to file descriptor 3 once mounted, as
// `memfs mount --ready-fd 3` does, and unmounts on SIGTERM.
func serveMain(args []string, _ io.Writer) error {
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
	ready := os.NewFile(3, "ready")
	if _, err := fmt.Fprintln(ready, "ready"); err != nil {
		unmount()
		return fmt.Errorf("tell the bench the mount is ready on fd 3: %w", err)
	}
	ready.Close()
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
// mounted.
func startDaemon(ctx context.Context, args ...string) (*daemon, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find the bench binary to re-run: %w", err)
	}
	return startReady(ctx, exec.Command(self, append([]string{"serve"}, args...)...))
}

// startMemfsMount starts `memfs mount` of a session, the real daemon, and
// waits until it serves requests (--ready-fd).
func startMemfsMount(ctx context.Context, bin, dbPath, session, mountpoint string) (*daemon, error) {
	return startReady(ctx, exec.Command(bin, "--db", dbPath, "mount", "--session", session, "--ready-fd", "3", mountpoint))
}

// startMemfsDaemon serves a session from its own process: the memfs binary
// when there is one, else the bench's serve helper. It returns the daemon
// and what it is.
func startMemfsDaemon(ctx context.Context, cfg *config, dbPath, session, mountpoint string) (*daemon, string, error) {
	if cfg.memfsBin != "" {
		d, err := startMemfsMount(ctx, cfg.memfsBin, dbPath, session, mountpoint)
		return d, "memfs mount", err
	}
	d, err := startDaemon(ctx, "--db", dbPath, "--session", session, "--mountpoint", mountpoint)
	return d, "bench serve helper (fusefs.Mount)", err
}

// startReady starts cmd with a pipe on fd 3 and waits for "ready" on it.
// The process dies with the bench (Pdeathsig), so a killed bench leaves no
// daemon behind.
func startReady(ctx context.Context, cmd *exec.Cmd) (*daemon, error) {
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.ExtraFiles = []*os.File{pw}
	err = cmd.Start()
	pw.Close()
	if err != nil {
		pr.Close()
		return nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	d := &daemon{cmd: cmd}
	ready := make(chan error, 1)
	go func() {
		defer pr.Close()
		line, err := bufio.NewReader(pr).ReadString('\n')
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
		return nil, fmt.Errorf("daemon %v: %w", cmd.Args, err)
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
