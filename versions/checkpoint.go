package versions

import (
	"context"
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

// checkpointEvery is how often the background checkpoint runs.
const checkpointEvery = 500 * time.Millisecond

// writerInit is run on every new writer connection.
const writerInit = "PRAGMA wal_autocheckpoint=0"

func (db *DB) startCheckpointer() {
	ctx, cancel := context.WithCancel(context.Background())
	db.stopCheckpoints = cancel
	db.checkpoints.Add(1)
	go func() {
		defer db.checkpoints.Done()
		t := time.NewTicker(checkpointEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			err := db.inTx(ctx, db.rp, "", func(r *run) error {
				_, err := r.c.c.ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)")
				return err
			})
			if err != nil && ctx.Err() == nil && !isBusy(err) {
				slog.Warn("background WAL checkpoint failed; the next one retries", "db", db.path, "err", err)
			}
		}
	}()
}
