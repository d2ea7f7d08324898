package mirror

import (
	"context"
	"time"

	"github.com/memfs/memfs/versions"
)

// Follow calls poll each time the change feed of one of the stores that
// follow returns may have moved, until ctx ends, with which of them did
// (nil: any may have); follow is asked again before each wait. The engine
// says when (versions.DB.WaitFeed: a poll of SQLite every interval,
// slower when idle; PostgreSQL's notifications, which name the stores and
// the origin of the commit, so that a mirror's own saves need not wake
// it); poll reads on from each store's own position, so a missed wake-up
// or a reconnection loses nothing. A poll or wait that fails is
// told to failed (first: the first of a run of failures) and tried again
// after interval; each one that works, to worked (recovered: after
// failures).
func Follow(ctx context.Context, db *versions.DB, interval time.Duration, follow func() []versions.Followed, poll func(ctx context.Context, moved []bool) error, failed func(err error, first bool), worked func(recovered bool)) {
	var mark versions.FeedMark
	failing := false
	for {
		next, moved, err := db.WaitFeed(ctx, mark, interval, follow()...)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			err = poll(ctx, moved)
		}
		if err != nil {
			failed(err, !failing)
			failing = true
			select {
			case <-ctx.Done():
				return
			case <-time.After(interval):
			}
			continue
		}
		worked(failing)
		failing = false
		mark = next
	}
}
