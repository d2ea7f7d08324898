package versions

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"sync"
	"sync/atomic"
	"time"
)

// Mount leases. A mount's pending files (pending.go) are its own: they
// belong to the mount instance that saved them (a random id, never a
// path, so that mounts in other namespaces or on other hosts at the same
// path never touch each other's), and only that instance shows, publishes
// or drops them while it lives. It proves it lives by a lease in the
// mounts table, renewed every LeaseRenew. When a lease lapses (LeaseTTL
// without a renewal: the daemon was killed, its host died), whoever uses
// the database next — any call of this package: the CLI, memfs serve, the
// memory tool, every other mount's watcher — publishes that mount's
// pending files, attributed to the session that saved them, and ends its
// session. So a file acknowledged by close() is the store's within about
// LeaseTTL of its daemon's death, whatever comes back or not.
//
// Expiry is on the database's clock: PostgreSQL's, for hosts whose clocks
// differ; on SQLite, one host's (Options.Now).
const (
	LeaseTTL   = 2 * time.Second
	LeaseRenew = 500 * time.Millisecond
	// sweepEvery is how often one handle looks for lapsed leases.
	sweepEvery = 500 * time.Millisecond
	// sweepBatch bounds the pending files one sweep publishes.
	sweepBatch = 256
	// sweepWait is how long the call that started a sweep waits for it:
	// a database whose writer lock is held (by a dying process, say) must
	// not hold up a read.
	sweepWait = time.Second
)

// MountLease names one mount instance.
type MountLease struct {
	ID         string // NewMountID
	SessionID  string
	Host       string
	Mountpoint string
}

// NewMountID is a fresh mount instance id.
func NewMountID() string {
	var b [12]byte
	rand.Read(b[:]) // never fails since Go 1.24
	return "mnt_" + hex.EncodeToString(b[:])
}

// leases is what one handle knows of leases: the mounts it holds (never
// swept by itself, so that a mount that could not renew during an outage
// does not publish its own files) and when it next looks for lapsed ones.
type leases struct {
	mu      sync.Mutex
	own     map[string]bool
	next    atomic.Int64
	running atomic.Bool
	// ctx is the sweeps' context, cancelled by Close (stop), which waits
	// for the sweep still running.
	ctx    context.Context
	cancel context.CancelFunc
	sweeps sync.WaitGroup
}

func (l *leases) start() { l.ctx, l.cancel = context.WithCancel(context.Background()) }

// stop cancels the sweeps and waits for one still running, at most
// sweepWait: false when it is still stuck (SQLite's wait for another
// process's write lock does not end with its context), and then its
// connection is left to close with the process.
func (l *leases) stop() bool {
	if l.cancel == nil {
		return true
	}
	l.cancel()
	done := make(chan struct{})
	go func() {
		l.sweeps.Wait()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-time.After(sweepWait):
		return false
	}
}

func (l *leases) isOwn(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.own[id]
}

func (l *leases) setOwn(id string, own bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.own == nil {
		l.own = map[string]bool{}
	}
	if own {
		l.own[id] = true
	} else {
		delete(l.own, id)
	}
}

// leaseClock is the time leases are compared with, in nanoseconds.
func (db *DB) leaseClock(r *run) (int64, error) {
	if db.d.name != "postgres" {
		return r.db.nowNanos(), nil
	}
	var now int64
	err := r.scan("SELECT (extract(epoch from clock_timestamp()) * 1000000000)::bigint", nil, &now)
	return now, err
}

// StartMount takes a lease for mount instance l.ID.
func (db *DB) StartMount(ctx context.Context, l MountLease) error {
	db.leases.setOwn(l.ID, true)
	err := db.write(ctx, "start a mount's lease", func(r *run) error {
		now, err := db.leaseClock(r)
		if err != nil {
			return err
		}
		_, err = r.exec("INSERT INTO mounts (id, session, host, mountpoint, started_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)",
			l.ID, l.SessionID, l.Host, l.Mountpoint, now, now+int64(LeaseTTL))
		return err
	})
	if err != nil {
		db.leases.setOwn(l.ID, false)
	}
	return err
}

// RenewMount extends mount l.ID's lease. lapsed is true when the lease had
// lapsed and others took it over (its pending files were published, its
// session ended): the mount holds a new lease from now on.
func (db *DB) RenewMount(ctx context.Context, l MountLease) (lapsed bool, err error) {
	err = db.write(ctx, "renew a mount's lease", func(r *run) error {
		lapsed = false
		now, err := db.leaseClock(r)
		if err != nil {
			return err
		}
		res, err := r.exec("UPDATE mounts SET expires_at = ? WHERE id = ?", now+int64(LeaseTTL), l.ID)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			return err
		}
		lapsed = true
		_, err = r.exec("INSERT INTO mounts (id, session, host, mountpoint, started_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)",
			l.ID, l.SessionID, l.Host, l.Mountpoint, now, now+int64(LeaseTTL))
		return err
	})
	return lapsed, err
}

// EndMount gives up mount id's lease: the mount is going away and has
// published what it held. Pending files it could not publish are then
// published by whoever uses the database next.
func (db *DB) EndMount(ctx context.Context, id string) error {
	db.leases.setOwn(id, false)
	db.leases.next.Store(0) // look for what it left at the next call
	return db.write(ctx, "end a mount's lease", func(r *run) error {
		_, err := r.exec("DELETE FROM mounts WHERE id = ?", id)
		return err
	})
}

// LiveMount reports whether mount id holds a lease that has not lapsed.
func (db *DB) LiveMount(ctx context.Context, id string) (bool, error) {
	var n int
	err := db.one(ctx, "read a mount's lease", func(r *run) error {
		now, err := db.leaseClock(r)
		if err != nil {
			return err
		}
		return r.scan("SELECT count(*) FROM mounts WHERE id = ? AND expires_at >= ?", []any{id, now}, &n)
	})
	return n > 0, err
}

// maybeSweep runs sweepLapsed when it is due. The handle's first sweep is
// waited for (at most sweepWait) before the call that triggered it, so
// that the CLI's one command sees what a dead mount left; later ones run
// beside the calls of a long-lived handle (a mount's requests), which
// learn of what they publish through the feed. A sweep already running on
// this handle is not waited for; errors are left to the next sweep.
func (db *DB) maybeSweep(ctx context.Context) {
	if db.readOnly {
		return // it writes; a read-only database is left as it is
	}
	l := &db.leases
	now := time.Now().UnixNano()
	if l.ctx == nil || now < l.next.Load() || !l.running.CompareAndSwap(false, true) {
		return
	}
	first := l.next.Swap(now+int64(sweepEvery)) == 0
	done := make(chan struct{})
	l.sweeps.Add(1)
	go func() {
		defer l.sweeps.Done()
		defer l.running.Store(false)
		defer close(done)
		db.sweepLapsed(l.ctx)
	}()
	if !first {
		return
	}
	select {
	case <-done:
	case <-ctx.Done():
	case <-time.After(sweepWait):
	}
}

// lapsedPending is a pending file whose mount's lease lapsed.
type lapsedPending struct {
	id          int64
	store, path string
	owner       string
	ownedHere   bool
}

// sweepLapsed publishes the pending files of mounts whose lease lapsed
// (or whose mount never held one: rows of an older memfs), ends the
// sessions of those mounts and drops their leases. It reports how many
// files it published.
func (db *DB) sweepLapsed(ctx context.Context) (int, error) {
	var files []lapsedPending
	var mounts []string
	var now int64
	err := db.retry(ctx, func() error {
		return db.inTx(ctx, db.rp, "", false, func(r *run) error {
			files, mounts = files[:0], mounts[:0]
			var err error
			if now, err = db.leaseClock(r); err != nil {
				return err
			}
			var lapsed, orphans bool
			if err := r.scan(`SELECT EXISTS (SELECT 1 FROM mounts WHERE expires_at < ?),
				EXISTS (SELECT 1 FROM pending p WHERE NOT EXISTS (SELECT 1 FROM mounts m WHERE m.id = p.owner AND m.expires_at >= ?))`,
				[]any{now, now}, &lapsed, &orphans); err != nil {
				return err
			}
			if orphans {
				rows, err := r.query(`SELECT p.id, s.id, p.path, p.owner FROM pending p JOIN stores s ON s.seq = p.store
					WHERE NOT EXISTS (SELECT 1 FROM mounts m WHERE m.id = p.owner AND m.expires_at >= ?) ORDER BY p.id LIMIT ?`, now, sweepBatch)
				if err != nil {
					return err
				}
				defer rows.Close()
				for rows.Next() {
					var f lapsedPending
					if err := rows.Scan(&f.id, &f.store, &f.path, &f.owner); err != nil {
						return err
					}
					files = append(files, f)
				}
				if err := rows.Err(); err != nil {
					return err
				}
			}
			if lapsed {
				mounts, err = r.strings("SELECT id FROM mounts WHERE expires_at < ? ORDER BY expires_at LIMIT ?", now, sweepBatch)
				return err
			}
			return nil
		})
	})
	if err != nil {
		return 0, err
	}
	published := 0
	for _, f := range files {
		if db.leases.isOwn(f.owner) {
			continue
		}
		// Errors leave the row to the next sweep; one published or dropped
		// meanwhile by its mount (a lease renewed late) is NotFound.
		if _, _, err := db.PublishPending(ctx, f.store, f.id, f.path); err == nil {
			published++
		}
	}
	for _, id := range mounts {
		if db.leases.isOwn(id) {
			continue
		}
		if err := db.endLapsed(ctx, id, now); err != nil {
			return published, err
		}
	}
	return published, nil
}

// endLapsed ends the session of a mount whose lease lapsed at now, unless
// another mount of it is alive, and drops the lease once the mount has no
// pending file left.
func (db *DB) endLapsed(ctx context.Context, id string, now int64) error {
	return db.write(ctx, "end a lapsed mount", func(r *run) error {
		var session string
		if err := r.scan("SELECT session FROM mounts WHERE id = ? AND expires_at < ?", []any{id, now}, &session); err != nil {
			if err == sql.ErrNoRows {
				return nil // renewed or ended meanwhile
			}
			return err
		}
		if _, err := r.exec(`UPDATE sessions SET ended_at = ? WHERE id = ? AND ended_at IS NULL
			AND NOT EXISTS (SELECT 1 FROM mounts m WHERE m.session = ? AND m.id <> ? AND m.expires_at >= ?)`,
			r.db.nowNanos(), session, session, id, now); err != nil {
			return err
		}
		_, err := r.exec("DELETE FROM mounts WHERE id = ? AND NOT EXISTS (SELECT 1 FROM pending p WHERE p.owner = ?)", id, id)
		return err
	})
}
