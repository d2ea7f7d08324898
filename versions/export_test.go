package versions

import (
	"context"
	"math"
	"testing"
	"time"
)

// BulkSave writes saves in one transaction, creating the memory at a path the
// first time and updating it afterwards: benchmark fixtures of 100,000
// versions in seconds. The benchmarks themselves use the public API.
func (db *DB) BulkSave(ctx context.Context, storeID string, n int, save func(i int) (path, content string), by Actor) error {
	return db.write(ctx, "bulk save", func(r *run) error {
		s, err := loadWritable(r, storeID)
		if err != nil {
			return err
		}
		for i := range n {
			path, content := save(i)
			m, err := memoryAt(r, s.seq, s.ID, path)
			if err != nil {
				return err
			}
			if m == nil {
				if err := checkFree(r, s, path, ""); err != nil {
					return err
				}
				if _, err := insertMemory(r, s, path, content, by); err != nil {
					return err
				}
				continue
			}
			if _, err := applyUpdate(r, s, m, MemoryUpdate{Content: &content}, sha256Hex(content), by); err != nil {
				return err
			}
		}
		return nil
	})
}

// HoldSweeps stops db from sweeping lapsed leases from now on, once the
// sweep running (if any) ends, so that a test counts only its own
// statements (Statements).
func (db *DB) HoldSweeps() {
	db.leases.next.Store(math.MaxInt64)
	db.leases.sweeps.Wait()
}

// FeedPolls sets when a listener polls the feed instead of listening (its
// fields as feedPolling's), until the test ends; call it before the
// listener starts, that is before any WaitFeed on PostgreSQL.
func FeedPolls(t testing.TB, enter int, window, tick time.Duration, leave int, quiet time.Duration) {
	was := feedPolling
	feedPolling.enter, feedPolling.window, feedPolling.tick, feedPolling.leave, feedPolling.quiet = enter, window, tick, leave, quiet
	t.Cleanup(func() { feedPolling = was })
}

// FeedPolling tells whether the listener polls the feed now.
func (db *DB) FeedPolling() bool {
	db.pg.listener.mu.Lock()
	defer db.pg.listener.mu.Unlock()
	return db.pg.listener.polling
}
