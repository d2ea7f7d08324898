package main

import (
	"fmt"

	"github.com/memfs/memfs/versions"
)

// mountMemfs mounts sess's stores on mountpoint in this process.
func mountMemfs(mountpoint string, db *versions.DB, sess *versions.Session) (func() error, error) {
	return nil, fmt.Errorf("the memfs mount (package fusefs) has not landed yet: run with --targets tmpfs,loopback --only phases")
}
