package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestMountMetrics(t *testing.T) {
	e := newE2EEnv(t)
	store, slug := e.createStore(t, "Metered")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	mnt := mountDir(t)
	e.startMount(t, mnt, "--store", store, "--metrics-addr", addr)
	dir := filepath.Join(mnt, slug)
	sh(t, dir, "echo one > a.md && echo two > b.md")
	if _, err := shErr(dir, "ln -s a.md link.md"); err == nil {
		t.Fatal("a symlink was made")
	}
	start := time.Now()
	e.cli(t, "memory", "create", store, "--path", "/from-cli.md", "--content", "x")
	if _, ok := waitFor(func() bool { _, err := os.Stat(filepath.Join(dir, "from-cli.md")); return err == nil }, start, 2*time.Second); !ok {
		t.Fatal("the CLI's memory did not show")
	}
	var text string
	ok := false
	for range 50 {
		res, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		text = string(b)
		if strings.Contains(text, "memfs_mount_feed_lag_seconds_count 1") {
			ok = true
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, want := range []string{"memfs_mount_saves_total 2", `memfs_mount_refusals_total{errno="EPERM"} 1`} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if !ok {
		t.Errorf("/metrics has no feed lag for the CLI's change:\n%s", grepLines(text, "memfs_mount"))
	}
	// The two saves at least were commits, and took time in the engine.
	for name, least := range map[string]float64{"memfs_engine_commits_total": 2, "memfs_engine_write_seconds_total": 1e-9,
		"memfs_engine_transaction_seconds_total": 1e-9, "memfs_engine_commit_seconds_total": 1e-9} {
		var v float64
		_, after, _ := strings.Cut(text, "\n"+name+" ")
		if _, err := fmt.Sscanf(after, "%g", &v); err != nil || v < least {
			t.Errorf("/metrics: %s %q, want at least %g", name, after[:min(len(after), 20)], least)
		}
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
