package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memfs/memfs/guard/guardtest"
)

// A flood of refused creates in a read_only store leaves a bounded log:
// the first refusal in full, then a count every few seconds, which adds up
// to every refusal; the metrics count each one.
func TestRefusalFloodLogIsBounded(t *testing.T) {
	e := newE2EEnv(t)
	store, slug := e.createStore(t, "Flooded")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	mnt := mountDir(t)
	d := e.startMount(t, mnt, "--store", store+":read_only", "--metrics-addr", addr)
	dir := filepath.Join(mnt, slug)

	const n = 3000
	start := time.Now()
	for i := range n {
		f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("f%05d.md", i)), os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			f.Close()
			t.Fatal("a file was created in a read_only store")
		}
		if !errors.Is(err, syscall.EROFS) {
			t.Fatalf("create in a read_only store: %v, want EROFS", err)
		}
	}
	flood := time.Since(start)

	// Every refusal is in the metrics.
	res, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if want := fmt.Sprintf(`memfs_mount_refusals_total{errno="EROFS"} %d`, n); !strings.Contains(string(b), want) {
		t.Errorf("/metrics lacks %s:\n%s", want, grepLines(string(b), "refusals"))
	}

	// The log's lines, once the last count is out, add up to every refusal.
	times := regexp.MustCompile(` times=(\d+) `)
	var lines []string
	total := 0
	deadline := time.Now().Add(15 * time.Second)
	for {
		lines, total = nil, 0
		for _, l := range strings.Split(d.stderr.String(), "\n") {
			if !strings.Contains(l, "refused") {
				continue
			}
			lines = append(lines, l)
			if m := times.FindStringSubmatch(l); m != nil {
				k, _ := strconv.Atoi(m[1])
				total += k
			} else {
				total++
			}
		}
		if total >= n || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if total != n {
		t.Errorf("the log accounts for %d refusals, want %d", total, n)
	}
	// Ten full lines, then at most one count per interval of the flood,
	// and the last count.
	if max := 12 + int(flood/(5*time.Second)); len(lines) > max {
		t.Errorf("%d refusals in %v left %d log lines, want at most %d", n, flood, len(lines), max)
	}
	t.Logf("%d refusals in %v: %d log lines (%d bytes of log in all)", n, flood, len(lines), len(d.stderr.String()))
	if len(lines) > 0 && !strings.Contains(lines[0], "EROFS") {
		t.Errorf("the first refusal is not logged in full: %s", lines[0])
	}
}

// A flood of refused saves (here, a credential the guard refuses) leaves a
// bounded log of the content each one discards, as of the refusals.
func TestDiscardedSaveFloodLogIsBounded(t *testing.T) {
	e := newE2EEnv(t)
	store, slug := e.createStore(t, "Discards")
	mnt := mountDir(t)
	d := e.startMount(t, mnt, "--store", store)
	dir := filepath.Join(mnt, slug)

	const n = 300
	start := time.Now()
	for i := range n {
		err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%04d.md", i)), []byte(guardtest.One("github").Text), 0o644)
		if !errors.Is(err, syscall.EACCES) {
			t.Fatalf("save of a credential: %v, want EACCES", err)
		}
	}
	flood := time.Since(start)
	lines := 0
	for _, l := range strings.Split(d.stderr.String(), "\n") {
		if strings.Contains(l, "unsaved content discarded") {
			lines++
		}
	}
	if max := 12 + int(flood/(5*time.Second)); lines == 0 || lines > max {
		t.Errorf("%d refused saves in %v left %d 'unsaved content discarded' lines, want 1 to %d", n, flood, lines, max)
	}
}
