package versions

import (
	"context"
	"database/sql/driver"
	"fmt"
	"log/slog"
	"time"
)

// A save must not wait for a checkpoint. SQLite's automatic checkpoint runs
// inside the commit that crosses 1,000 WAL pages, copying them into the
// database and fsyncing both files; every few dozen saves one of them paid
// for it, which doubled the average save. Instead the writer connection has
// wal_autocheckpoint=0 and this goroutine runs PASSIVE checkpoints beside
// the writers (they never block each other). Durability is unchanged: a
// commit is in the WAL when it returns either way, and with
// DurabilityNormal the WAL is fsynced at checkpoints either way.
//
// SQLite writes the WAL from its beginning again only after a RESTART
// checkpoint, or a complete one that no reader or writer overlaps, which a
// stream of saves never allows: the WAL grew by 30 MB a second under a
// save storm, and opening the database after a crash reads all of it
// (150 ms for 60 MB) and the file kept that size. So once a pass leaves the WAL over walRestartFrames,
// a RESTART checkpoint follows on the writer connection (between two
// saves, with little left to copy), waiting at most restartWait for
// readers; if they do not finish, the next pass tries again.

// checkpointEvery is how often the background checkpoint runs.
const checkpointEvery = 500 * time.Millisecond

// walRestartFrames is the WAL length, in pages, past which the WAL is
// restarted (16 MiB of 4 KiB pages; reading that after a crash takes about
// 40 ms). Restarting sooner cost saves more than it saved.
const walRestartFrames = 4096

// restartWait bounds how long a restart holds up saves waiting for readers.
const restartWait = 10 * time.Millisecond

// writerInit is run on every new writer connection.
const writerInit = "PRAGMA wal_autocheckpoint=0"

func (db *DB) startCheckpointer() {
	ctx, cancel := context.WithCancel(context.Background())
	db.stopBackground = cancel
	db.background.Add(1)
	go func() {
		defer db.background.Done()
		t := time.NewTicker(checkpointEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			var busy, frames, done int
			err := db.inTx(ctx, db.rp, "", false, func(r *run) error {
				return r.c.c.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &done)
			})
			if err == nil && frames > walRestartFrames {
				err = db.inTx(ctx, db.wp, "", true, func(r *run) error { return db.restartWAL(ctx, r) })
			}
			if err != nil && ctx.Err() == nil && !sqliteBusy(err) {
				slog.Warn("background WAL checkpoint failed; the next one retries", "db", db.path, "err", err)
			}
		}
	}()
}

// restartWAL runs a RESTART checkpoint on the writer connection r with a
// short busy timeout, then puts the connection's own back.
func (db *DB) restartWAL(ctx context.Context, r *run) error {
	c := r.c.c
	if _, err := c.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout=%d", restartWait.Milliseconds())); err != nil {
		return err
	}
	var busy, frames, done int
	err := c.QueryRowContext(ctx, "PRAGMA wal_checkpoint(RESTART)").Scan(&busy, &frames, &done)
	if _, rerr := c.ExecContext(context.Background(), fmt.Sprintf("PRAGMA busy_timeout=%d", db.busyTimeout.Milliseconds())); rerr != nil {
		// A writer that would give up after 10 ms must not serve saves:
		// ErrBadConn makes the pool replace the connection.
		return fmt.Errorf("restore the busy timeout after a WAL restart: %w (%w)", rerr, driver.ErrBadConn)
	}
	return err
}
