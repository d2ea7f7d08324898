package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// What an agent can make a store cost through a mount is bounded: mkdirs
// stop at the store's directory limit with ENOSPC, and renames between long
// names are charged like saves until the history quota refuses them with
// EDQUOT; the daemon log says which limit.
func TestMountStoreCostBounded(t *testing.T) {
	e := newE2EEnv(t)
	id := strings.TrimSpace(e.cli(t, "store", "create", "--name", "Costly", "--max-directories", "50", "--max-history-bytes", "200000"))
	if out := e.cli(t, "store", "get", id); !strings.Contains(out, "max directories:") || !strings.Contains(out, "50") {
		t.Errorf("store get does not show the directory limit:\n%s", out)
	}
	mnt := mountDir(t)
	d := e.startMount(t, mnt, "--store", id)
	dir := filepath.Join(mnt, "costly")

	made := 0
	var err error
	for ; made < 1000; made++ {
		if err = os.Mkdir(filepath.Join(dir, fmt.Sprintf("d%04d", made)), 0o755); err != nil {
			break
		}
	}
	if !errors.Is(err, syscall.ENOSPC) || made != 50 {
		t.Errorf("mkdir stopped after %d with %v, want ENOSPC after 50", made, err)
	}

	a, b := filepath.Join(dir, strings.Repeat("a", 250)), filepath.Join(dir, strings.Repeat("b", 250))
	if err := os.WriteFile(a, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	renames := 0
	for from, to := a, b; renames < 5000; renames++ {
		if err = os.Rename(from, to); err != nil {
			break
		}
		from, to = to, from
	}
	if !errors.Is(err, syscall.EDQUOT) {
		t.Errorf("after %d renames: %v, want EDQUOT", renames, err)
	}
	if max := 200000 / (2*251 + 320); renames > max {
		t.Errorf("%d renames between 250-byte names fit a 200000-byte quota, want at most %d", renames, max)
	}
	// The daemon's stderr reaches the test through a pipe: wait for it.
	want := []string{"ENOSPC", "50 directories", "EDQUOT", "quota of 200000 bytes"}
	has := func() bool {
		for _, w := range want {
			if !strings.Contains(d.stderr.String(), w) {
				return false
			}
		}
		return true
	}
	for deadline := time.Now().Add(5 * time.Second); !has() && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	for _, w := range want {
		if !strings.Contains(d.stderr.String(), w) {
			t.Errorf("the daemon log lacks %q", w)
		}
	}
}
