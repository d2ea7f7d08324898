package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// memfsBin is the memfs binary built once for the tests that drive it the way
// a user would.
var memfsBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "memfs-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	memfsBin = filepath.Join(dir, "memfs")
	build := exec.Command("go", "build", "-o", memfsBin, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building memfs:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
