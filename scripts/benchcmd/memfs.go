package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, to create the memfs-pg database

	"github.com/memfs/memfs/versions"
	"github.com/memfs/memfs/versions/pgtest"
)

// benchStoreLimit is the memory limit of the bench's stores: the atomic-save
// phase briefly holds a temporary file beside each of the workload's files.
const benchStoreLimit = 100000

// benchHistoryQuota lifts the history quota of the bench's stores: a full
// run saves more than the default quota's worth of versions into one store
// (the phases' rounds, then the writers'), and a refused save is not what
// the bench measures.
const benchHistoryQuota = -1

// openSession opens (creating) the database at path with one store per name,
// attached read-write to a new session.
func openSession(ctx context.Context, path string, full bool, names ...string) (*versions.DB, *versions.Session, error) {
	db, err := versions.Open(path, versions.Options{Durability: durability(full)})
	if err != nil {
		return nil, nil, fmt.Errorf("open the database %s: %w", versions.RedactDSN(path), err)
	}
	var attach []versions.AttachmentParams
	for _, n := range names {
		st, err := db.CreateStore(ctx, versions.StoreParams{Name: n, MaxMemories: benchStoreLimit, MaxHistoryBytes: benchHistoryQuota})
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
	return memfsTargetAt(ctx, filepath.Join(work, name+".db"), work, name, full)
}

// memfsPostgresTarget is memfsTarget on a new database of a PostgreSQL
// server, dropped when the target stops.
func memfsPostgresTarget(ctx context.Context, server, work string) (*target, error) {
	admin, err := sql.Open("pgx", server)
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("memfs_bench_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9)
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		admin.Close()
		return nil, fmt.Errorf("create a database on the --db server %s: %w", versions.RedactDSN(server), err)
	}
	drop := func() error {
		defer admin.Close()
		_, err := admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
		return err
	}
	dsn := pgtest.WithDatabase(server, name)
	t, err := memfsTargetAt(ctx, dsn, work, "memfs-pg", false)
	if err != nil {
		return nil, errors.Join(err, drop())
	}
	bare, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, errors.Join(err, t.stop(), drop())
	}
	bare.SetMaxIdleConns(0) // no backend held open between measurements
	t.bareCommits = func(ctx context.Context) (bareCommitRun, error) { return timeBareCommits(ctx, bare) }
	stop := t.stop
	t.stop = func() error { return errors.Join(stop(), bare.Close(), drop()) }
	return t, nil
}

// bareCommits is how many rows timeBareCommits commits.
const bareCommits = 1000

// bareCommitRun is one timing of bare commits, and the server's fsync
// setting, without which a commit costs the server far less.
type bareCommitRun struct {
	perSec float64
	fsync  string
}

// timeBareCommits inserts rows of a file's size one at a time, each
// committed alone, from one client, into a table of its own: the least a
// save can cost the server, measured in the round of the saves. The rows
// are text like the workload's, so the server compresses them as it does
// a version's content.
func timeBareCommits(ctx context.Context, db *sql.DB) (bareCommitRun, error) {
	var run bareCommitRun
	c, err := db.Conn(ctx)
	if err != nil {
		return run, err
	}
	defer c.Close()
	if err := c.QueryRowContext(ctx, "SHOW fsync").Scan(&run.fsync); err != nil {
		return run, fmt.Errorf("read the server's fsync setting: %w", err)
	}
	if _, err := c.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS bench_bare_commits (id BIGSERIAL PRIMARY KEY, body BYTEA NOT NULL)"); err != nil {
		return run, fmt.Errorf("make the bare commits' table: %w", err)
	}
	body := makeContent(0, 0)
	start := time.Now()
	for range bareCommits {
		if _, err := c.ExecContext(ctx, "INSERT INTO bench_bare_commits (body) VALUES ($1)", body); err != nil {
			return run, fmt.Errorf("a bare commit: %w", err)
		}
	}
	run.perSec = bareCommits / time.Since(start).Seconds()
	return run, nil
}

// memfsTargetAt mounts a fresh store of the database dsn names.
func memfsTargetAt(ctx context.Context, dsn, work, name string, full bool) (*target, error) {
	db, sess, err := openSession(ctx, dsn, full, "bench "+name)
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
	storeID := sess.Resources[0].StoreID
	return &target{
		name: name,
		dir:  filepath.Join(mnt, sess.Resources[0].Slug),
		stop: func() error { return errors.Join(unmount(), db.Close()) },
		versionCount: func(ctx context.Context) (int, error) {
			n := 0
			o := versions.VersionListOptions{Limit: 1000}
			for {
				page, err := db.ListVersions(ctx, storeID, o)
				if err != nil {
					return 0, fmt.Errorf("count the store's versions: %w", err)
				}
				n += len(page.Data)
				if page.NextPage == nil {
					return n, nil
				}
				o.Page = *page.NextPage
			}
		},
	}, nil
}
