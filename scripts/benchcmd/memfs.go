package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/memfs/memfs/versions"
)

// benchStoreLimit is the memory limit of the bench's stores: the atomic-save
// phase briefly holds a temporary file beside each of the workload's files.
const benchStoreLimit = 100000

// openSession opens (creating) the database at path with one store per name,
// attached read-write to a new session.
func openSession(ctx context.Context, path string, full bool, names ...string) (*versions.DB, *versions.Session, error) {
	db, err := versions.Open(path, versions.Options{Durability: durability(full)})
	if err != nil {
		return nil, nil, fmt.Errorf("open the database %s: %w", path, err)
	}
	var attach []versions.AttachmentParams
	for _, n := range names {
		st, err := db.CreateStore(ctx, versions.StoreParams{Name: n, MaxMemories: benchStoreLimit})
		if err != nil {
			db.Close()
			return nil, nil, fmt.Errorf("create store %q: %w", n, err)
		}
		attach = append(attach, versions.AttachmentParams{StoreID: st.ID, Access: versions.ReadWrite})
	}
	sess, err := db.CreateSession(ctx, attach)
	if err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("create a session: %w", err)
	}
	return db, sess, nil
}

// memfsTarget mounts a fresh store of a fresh database in this process.
func memfsTarget(ctx context.Context, work, name string, full bool) (*target, error) {
	db, sess, err := openSession(ctx, filepath.Join(work, name+".db"), full, "bench "+name)
	if err != nil {
		return nil, err
	}
	mnt := filepath.Join(work, name+"-mnt")
	if err := os.MkdirAll(mnt, 0o755); err != nil {
		db.Close()
		return nil, fmt.Errorf("make %s: %w", mnt, err)
	}
	unmount, err := mountMemfs(mnt, db, sess)
	if err != nil {
		db.Close()
		return nil, err
	}
	return &target{
		name: name,
		dir:  filepath.Join(mnt, sess.Resources[0].Slug),
		stop: func() error { return errors.Join(unmount(), db.Close()) },
	}, nil
}
