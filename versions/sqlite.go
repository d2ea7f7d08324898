package versions

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"syscall"

	"github.com/mattn/go-sqlite3"
)

var sqliteDialect = &dialect{
	name:       "sqlite",
	beginWrite: "BEGIN IMMEDIATE",
	beginRead:  "BEGIN",
	blob:       func(s string) any { return s },
	transient:  sqliteBusy,
	broken:     func(error) bool { return false },
	unsent:     func(error) bool { return false },
	wrap:       sqliteWrap,
	// One writer connection: a commit shared is one the others skip.
	groupCommit: true,
}

// openSQLite opens the SQLite file at path: one writer connection, whose
// transactions begin IMMEDIATE (so a write never fails half-way on a lock
// upgrade), and a pool of readers, all in WAL mode.
func (db *DB) openSQLite(path string, opts Options) error {
	db.d = sqliteDialect
	abs, err := filepath.Abs(path)
	if err != nil {
		return errorf(CodeInvalid, "database path %s: %v", path, err)
	}
	db.path, db.where = abs, abs
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return errorf(CodeInvalid, "cannot create the database directory %s: %v: check its permissions or choose another path with --db or MEMFS_DB", filepath.Dir(abs), err)
	}
	// Memories may be private: create the file readable by its owner only
	// (SQLite gives the -wal and -shm files the same mode).
	if f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
		f.Close()
	} else if !errors.Is(err, fs.ErrExist) {
		return errorf(CodeInvalid, "cannot create the database %s: %v: check the directory's permissions or choose another path with --db or MEMFS_DB", abs, err)
	}
	timeout := opts.BusyTimeout
	syncMode := "NORMAL"
	if opts.Durability == DurabilityFull {
		syncMode = "FULL"
	}
	base := (&url.URL{Scheme: "file", Path: abs}).String()
	// SQLite's default page cache, 2 MiB per connection: a daemon's six
	// connections fill theirs as it serves reads, and they are most of its
	// memory outside Go's heap; the files' pages are in the OS's cache
	// anyway.
	params := fmt.Sprintf("_journal_mode=WAL&_busy_timeout=%d&_foreign_keys=on&_synchronous=%s",
		timeout.Milliseconds(), syncMode)
	writeLock := "&_txlock=immediate"
	if ro := readOnlyParams(abs); ro != "" {
		db.readOnly, writeLock = true, "&_txlock=deferred"
		params = fmt.Sprintf("_busy_timeout=%d&_foreign_keys=on", timeout.Milliseconds()) + ro
	}
	if db.w, err = sql.Open(sqliteDriver, base+"?"+params+writeLock); err != nil {
		return fmt.Errorf("open database %s: %w", abs, err)
	}
	db.w.SetMaxOpenConns(1)
	db.w.SetMaxIdleConns(1)
	db.w.SetConnMaxLifetime(0)
	if db.r, err = sql.Open(sqliteDriver, base+"?"+params+"&_txlock=deferred"); err != nil {
		return fmt.Errorf("open database %s: %w", abs, err)
	}
	n := max(4, runtime.NumCPU())
	db.r.SetMaxOpenConns(n)
	db.r.SetMaxIdleConns(n)
	db.wp, db.rp = newConnPool(db.w, 1, db.d.broken), newConnPool(db.r, n, db.d.broken)
	db.wp.init = writerInit
	if db.lw, err = sql.Open(sqliteDriver, base+"?"+params+writeLock); err != nil {
		return fmt.Errorf("open database %s: %w", abs, err)
	}
	db.lw.SetMaxOpenConns(1)
	db.lw.SetMaxIdleConns(1)
	db.lp = newConnPool(db.lw, 1, db.d.broken)
	db.lp.init = writerInit

	if db.readOnly {
		return db.checkReadOnlySchema()
	}
	if err := db.setupSQLite(syncMode, int(timeout.Milliseconds())); err != nil {
		return err
	}
	db.startCheckpointer()
	return nil
}

// setupSQLite checks that the DSN's settings took effect and migrates.
func (db *DB) setupSQLite(syncMode string, timeoutMS int) error {
	ctx := context.Background()
	var mode string
	var fk, syn, busy int
	err := db.retry(ctx, func() error {
		return db.inTx(ctx, db.wp, "", true, func(r *run) error {
			if err := r.c.c.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
				return err
			}
			if err := r.c.c.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk); err != nil {
				return err
			}
			if err := r.c.c.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&busy); err != nil {
				return err
			}
			return r.c.c.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&syn)
		})
	})
	if err != nil {
		return fmt.Errorf("open database %s: %w (is it a SQLite file memfs can write?)", db.path, err)
	}
	if mode != "wal" {
		return fmt.Errorf("open database %s: journal_mode is %q, not wal: the file system may not support WAL (shared memory); put the database on a local disk", db.path, mode)
	}
	wantSyn := map[string]int{"NORMAL": 1, "FULL": 2}[syncMode]
	if fk != 1 || syn != wantSyn || busy != timeoutMS {
		return fmt.Errorf("open database %s: settings did not take effect (foreign_keys=%d, synchronous=%d, busy_timeout=%d)", db.path, fk, syn, busy)
	}
	return db.migrate(ctx)
}

func sqliteWrap(db *DB, what string, err error) error {
	if sqliteBusy(err) {
		return &Error{Code: CodeInternal, Message: fmt.Sprintf("%s: the database stayed locked by another process: retry in a moment (%v)", what, err)}
	}
	var se sqlite3.Error
	if errors.As(err, &se) && se.Code == sqlite3.ErrFull {
		// Wraps ENOSPC so that a mount reports it as a full disk would.
		return fmt.Errorf("%s: the disk holding the database is full: free some space, then retry (%w: %w)", what, syscall.ENOSPC, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

func sqliteBusy(err error) bool {
	var se sqlite3.Error
	if errors.As(err, &se) {
		return se.Code == sqlite3.ErrBusy || se.Code == sqlite3.ErrLocked
	}
	return false
}
