package versions

import (
	"sync/atomic"
	"time"
)

// Writes is how many write transactions this handle committed: a test
// counts the commits an operation costs.
func (db *DB) Writes() int64 { return db.writes.Load() }

// WriteTimes is where this handle's writes spent their time since it
// opened, summed over them: what a save costs inside the engine, by layer.
type WriteTimes struct {
	// Call is from a write's call to its return: waiting for the writer
	// connection or a group's commit, the engine's Go, and Transaction.
	Call time.Duration
	// Transaction is from BEGIN to the end of COMMIT on the connection
	// (a one-statement write's statement, which commits itself).
	Transaction time.Duration
	// Commit is COMMIT alone.
	Commit time.Duration
}

// WriteTimes returns the times summed so far.
func (db *DB) WriteTimes() WriteTimes {
	return WriteTimes{
		Call:        time.Duration(db.times.call.Load()),
		Transaction: time.Duration(db.times.tx.Load()),
		Commit:      time.Duration(db.times.commit.Load()),
	}
}

type writeTimes struct{ call, tx, commit atomic.Int64 }

// since adds the time since start to t.
func since(t *atomic.Int64, start time.Time) { t.Add(int64(time.Since(start))) }
