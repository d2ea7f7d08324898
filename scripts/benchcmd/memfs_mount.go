package main

import (
	"github.com/memfs/memfs/fusefs"
	"github.com/memfs/memfs/versions"
)

// mountMemfs mounts sess's stores on mountpoint in this process, with the
// options `memfs mount` uses.
func mountMemfs(mountpoint string, db *versions.DB, sess *versions.Session) (func() error, error) {
	srv, err := fusefs.Mount(mountpoint, db, sess, fusefs.Options{})
	if err != nil {
		return nil, err
	}
	return srv.Unmount, nil
}
