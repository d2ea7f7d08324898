package versions

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Mount leases. A mount's pending files (pending.go) are its own: they
// belong to the mount instance that saved them (a random id, never a
// path, so that mounts in other namespaces or on other hosts at the same
// path never touch each other's) at the epoch of its lease, and only that
// instance shows, publishes or drops them while its lease is live. It
// proves it lives by a lease in the mounts table, renewed every LeaseRenew
// on a connection of its own (RenewMount), so that no queue of saves
// delays it. When a lease lapses (LeaseTTL without a renewal: the daemon
// was killed or stopped, its host died, the database was out of reach),
// whoever uses the database next — any call of this package: the CLI,
// memfs serve, the memory tool, every other mount's watcher — recovers
// that mount's pending files: it claims each by moving it to an epoch of
// its own, conditioned on the one it had, and publishes it in the same
// transaction, attributed to the session that saved it; then it ends the
// mount's session. So a file acknowledged by close() is the store's within
// LeaseTTL plus one sweep (sweepEvery) of its daemon's death.
//
// A lapsed lease is never renewed: the mount that finds its lease lapsed
// takes a new one at a new epoch, and from then on every change it asks
// for on a file of the old epoch fails (IsPendingLost). Its own handle
// recovers those files as anyone would.
//
// Recovery pages through every lapsed file. One it cannot publish (its
// store archived or over its history quota) is marked and tried again only
// every retryUnpublishable, after the others: it never holds them up.
//
// Expiry is on the database's clock: PostgreSQL's, for hosts whose clocks
// differ; on SQLite, one host's (Options.Now).
const (
	// LeaseTTL is how long a lease lasts without a renewal. It outlasts
	// the longest stall of a renewal measured under load (docs/reliability.md)
	// several times over.
	LeaseTTL   = 5 * time.Second
	LeaseRenew = time.Second
	// sweepEvery is how often one handle looks for lapsed leases.
	sweepEvery = 500 * time.Millisecond
	// sweepPage is how many lapsed pending files one query of a sweep reads.
	sweepPage = 256
	// retryUnpublishable is how long a pending file recovery could not
	// publish waits before it is tried again.
	retryUnpublishable = time.Minute
	// sweepWait is how long the call that started a sweep waits for it:
	// a database whose writer lock is held (by a dying process, say) must
	// not hold up a read.
	sweepWait = time.Second
)

// MountLease names one mount instance and the epoch of its lease.
type MountLease struct {
	ID         string // NewMountID
	SessionID  string
	Host       string
	Mountpoint string
	// Epoch is the lease's: it changes when the lease is taken again
	// after a lapse (RenewMount). A mount's pending files are its own at
	// the epoch they were saved in.
	Epoch int64
}

// Owner is who may change the pending files saved under l.
func (l MountLease) Owner() PendingOwner { return PendingOwner{Mount: l.ID, Epoch: l.Epoch} }

// NewMountID is a fresh mount instance id.
func NewMountID() string {
	var b [12]byte
	rand.Read(b[:]) // never fails since Go 1.24
	return "mnt_" + hex.EncodeToString(b[:])
}

// newEpoch is a lease epoch: positive, random, so that an epoch taken after
// a lapse is never one a mount held before. Recovery's claims are negative
// (claimEpoch), so a lease never holds a claimed file.
func newEpoch() int64 {
	var b [8]byte
	rand.Read(b[:])
	return int64(binary.BigEndian.Uint64(b[:])>>2) + 1
}

func claimEpoch() int64 { return -newEpoch() }

// LeaseStats are what a handle counts of leases and recovery.
type LeaseStats struct {
	// Lapses counts the leases of this handle that were found lapsed at
	// their renewal (and taken again).
	Lapses int64
	// Recovered counts the lapsed pending files this handle published.
	Recovered int64
	// Unpublishable counts the times this handle's recovery could not
	// publish a lapsed pending file and marked it.
	Unpublishable int64
	// Backlog is how many lapsed pending files were left after this
	// handle's last sweep: being recovered by others, or unpublishable.
	Backlog int64
	// MaxRenewalGap is the longest time between two successful renewals
	// of a lease of this handle: how close it came to lapsing.
	MaxRenewalGap time.Duration
}

// LeaseStats returns what this handle counted of leases and recovery.
func (db *DB) LeaseStats() LeaseStats {
	l := &db.leases
	return LeaseStats{Lapses: l.lapses.Load(), Recovered: l.recovered.Load(), Unpublishable: l.unpublishable.Load(), Backlog: l.backlog.Load(),
		MaxRenewalGap: time.Duration(l.maxGap.Load())}
}

// leases is what one handle knows of leases: the mounts it holds and at
// which epoch (their files are never recovered by itself while it holds
// them) and when it next looks for lapsed ones.
type leases struct {
	mu      sync.Mutex
	own     map[string]int64
	next    atomic.Int64
	running atomic.Bool
	// ctx is the sweeps' context, cancelled by Close (stop), which waits
	// for the sweep still running.
	ctx    context.Context
	cancel context.CancelFunc
	sweeps sync.WaitGroup

	lapses, recovered, unpublishable, backlog atomic.Int64
	// renewed is when each lease held was last renewed (or taken), and
	// maxGap the longest time between two of its renewals.
	renewed map[string]time.Time
	maxGap  atomic.Int64
}

// renewedNow records a renewal of lease id.
func (l *leases) renewedNow(id string, lapsed bool) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.renewed == nil {
		l.renewed = map[string]time.Time{}
	}
	if last, ok := l.renewed[id]; ok && !lapsed {
		if gap := int64(now.Sub(last)); gap > l.maxGap.Load() {
			l.maxGap.Store(gap)
		}
	}
	l.renewed[id] = now
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

// holds reports whether this handle holds mount id's lease at epoch.
func (l *leases) holds(id string, epoch int64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.own[id]
	return ok && e == epoch
}

func (l *leases) setOwn(id string, epoch int64, own bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.own == nil {
		l.own = map[string]int64{}
	}
	if own {
		l.own[id] = epoch
	} else {
		delete(l.own, id)
		delete(l.renewed, id)
	}
}

func (l *leases) isOwnMount(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.own[id]
	return ok
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

// beginLease is the first step of a transaction that takes a lease: no
// lease is taken on a schema a newer memfs upgraded (refuseNewerSchema),
// and a lease and a migration are ordered, so that either the migration
// sees the lease and refuses to run (refuseLiveMounts), or the lease sees
// the migration. On SQLite every write transaction holds the database's
// write lock; on PostgreSQL a migration's transaction holds
// migrationLock alone, and this takes it shared, before any row lock (a
// migration that alters a table the transaction writes would deadlock
// with it otherwise). It waits for a migration running as long as the
// connection's lock_timeout allows.
func (db *DB) beginLease(r *run) error {
	if err := db.lockMigrations(r, true); err != nil {
		return err
	}
	return db.refuseNewerSchema(r)
}

// putLease writes lease l at epoch, from the database's clock
// (leaseClock) to LeaseTTL after it.
func (db *DB) putLease(r *run, l MountLease, epoch int64) error {
	now, err := db.leaseClock(r)
	if err != nil {
		return err
	}
	_, err = r.exec("INSERT INTO mounts (id, session, host, mountpoint, started_at, expires_at, epoch) VALUES (?, ?, ?, ?, ?, ?, ?)",
		l.ID, l.SessionID, l.Host, l.Mountpoint, now, now+int64(LeaseTTL), epoch)
	return err
}

// StartMount takes a lease for mount instance l.ID at l.Epoch, unless a
// newer memfs has upgraded the schema since this handle opened it: the
// lease and a migration are ordered (beginLease).
func (db *DB) StartMount(ctx context.Context, l MountLease) error {
	db.leases.setOwn(l.ID, l.Epoch, true)
	err := db.write(ctx, "start a mount's lease", func(r *run) error {
		if err := db.beginLease(r); err != nil {
			return err
		}
		return db.putLease(r, l, l.Epoch)
	})
	if err != nil {
		db.leases.setOwn(l.ID, l.Epoch, false)
	} else {
		db.leases.renewedNow(l.ID, true)
	}
	return err
}

// RenewMount extends mount l.ID's lease at l.Epoch, on a connection kept
// for renewals: a renewal never waits behind this handle's other work.
// A lease that lapsed is not renewed: lapsed is true, the mount holds a
// new lease at a new epoch from now on (l.Epoch is set to it), and the
// pending files of its old epoch are others' to recover (its session may
// have been ended meanwhile). No new lease is taken on a schema a newer
// memfs upgraded meanwhile (a conflict): the upgrade went ahead once this
// lease had lapsed, and this build would write the old way.
func (db *DB) RenewMount(ctx context.Context, l *MountLease) (lapsed bool, err error) {
	if db.readOnly {
		return false, db.readOnlyError()
	}
	err = db.retry(ctx, func() error {
		return db.inTx(ctx, db.lp, db.d.beginWrite, true, func(r *run) error {
			now, err := db.leaseClock(r)
			if err != nil {
				return err
			}
			res, err := r.exec("UPDATE mounts SET expires_at = ? WHERE id = ? AND epoch = ? AND expires_at >= ?", now+int64(LeaseTTL), l.ID, l.Epoch, now)
			if err != nil {
				return err
			}
			n, err := res.RowsAffected()
			lapsed = n != 1
			return err
		})
	})
	var epoch int64
	if err == nil && lapsed {
		// A new lease, in a transaction of its own that begins as
		// StartMount's (beginLease). A renewal does not: it never waits
		// for a migration, nor queues behind one.
		epoch = newEpoch()
		err = db.retry(ctx, func() error {
			return db.inTx(ctx, db.lp, db.d.beginWrite, true, func(r *run) error {
				if err := db.beginLease(r); err != nil {
					return err
				}
				if _, err := r.exec("DELETE FROM mounts WHERE id = ?", l.ID); err != nil {
					return err
				}
				return db.putLease(r, *l, epoch)
			})
		})
	}
	if err != nil {
		return false, db.wrap("renew a mount's lease", err)
	}
	db.leases.renewedNow(l.ID, lapsed)
	if lapsed {
		l.Epoch = epoch
		db.leases.setOwn(l.ID, epoch, true)
		db.leases.lapses.Add(1)
		db.leases.next.Store(0) // recover what the old epoch left at the next call
	}
	return lapsed, nil
}

// EndMount gives up mount id's lease: the mount is going away and has
// published what it held. Pending files it could not publish are then
// published by whoever uses the database next.
func (db *DB) EndMount(ctx context.Context, id string) error {
	db.leases.setOwn(id, 0, false)
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

// lapsedPending is a pending file whose owner's lease lapsed.
type lapsedPending struct {
	id          int64
	store, path string
	owner       string
	epoch       int64
}

// lapsedWhere selects the pending files whose owner holds no live lease at
// their epoch (?1: the lease clock), after id ?2.
const lapsedWhere = ` FROM pending p JOIN stores s ON s.seq = p.store
	WHERE p.id > ?2 AND NOT EXISTS (SELECT 1 FROM mounts m WHERE m.id = p.owner AND m.epoch = p.epoch AND m.expires_at >= ?1)`

// sweepLapsed recovers the pending files of leases that lapsed (or of
// mounts that never held one: rows of an older memfs), ends the sessions
// of those mounts and drops their leases. It pages through every lapsed
// file: first those never tried, then those that could not be published
// and are due again, so that no number of unpublishable files holds up
// the others. It reports how many files it published.
func (db *DB) sweepLapsed(ctx context.Context) (int, error) {
	var now int64
	var mounts []string
	err := db.retry(ctx, func() error {
		return db.inTx(ctx, db.rp, "", false, func(r *run) error {
			var err error
			if now, err = db.leaseClock(r); err != nil {
				return err
			}
			mounts, err = r.strings("SELECT id FROM mounts WHERE expires_at < ? ORDER BY expires_at", now)
			return err
		})
	})
	if err != nil {
		return 0, err
	}
	published := 0
	// Stores whose lapsed files cannot be published at all this sweep
	// (archived, over their quota): their other files are marked with
	// the first, in one statement, rather than each tried.
	refused := map[string]bool{}
	passes := []struct {
		where string
		arg   int64
	}{
		{" AND p.failed_at IS NULL", 0},
		{" AND p.failed_at < ?3", now - int64(retryUnpublishable)},
	}
	for _, pass := range passes {
		for after := int64(0); ; {
			page, err := db.lapsedPage(ctx, now, after, pass.where, pass.arg)
			if err != nil {
				return published, err
			}
			for _, f := range page {
				after = f.id
				if db.leases.holds(f.owner, f.epoch) || refused[f.store] {
					continue // its mount renews late: it is still this handle's
				}
				if ctx.Err() != nil {
					return published, ctx.Err()
				}
				ok, storeRefused := db.recoverPending(ctx, f, now)
				if ok {
					published++
				}
				if storeRefused {
					refused[f.store] = true
				}
			}
			if len(page) < sweepPage {
				break
			}
		}
	}
	for _, id := range mounts {
		if db.leases.isOwnMount(id) {
			continue
		}
		if err := db.endLapsed(ctx, id, now); err != nil {
			return published, err
		}
	}
	var left int64
	err = db.inTx(ctx, db.rp, "", false, func(r *run) error {
		return r.scan("SELECT count(*)"+lapsedWhere, []any{now, 0}, &left)
	})
	if err == nil {
		db.leases.backlog.Store(left)
	}
	return published, err
}

// lapsedPage reads the next page of lapsed pending files after id after.
func (db *DB) lapsedPage(ctx context.Context, now, after int64, where string, arg int64) ([]lapsedPending, error) {
	var page []lapsedPending
	err := db.retry(ctx, func() error {
		return db.inTx(ctx, db.rp, "", false, func(r *run) error {
			page = page[:0]
			args := []any{now, after}
			if arg != 0 {
				args = append(args, arg)
			}
			rows, err := r.query("SELECT p.id, s.id, p.path, p.owner, p.epoch"+lapsedWhere+where+" ORDER BY p.id LIMIT "+strconv.Itoa(sweepPage), args...)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var f lapsedPending
				if err := rows.Scan(&f.id, &f.store, &f.path, &f.owner, &f.epoch); err != nil {
					return err
				}
				page = append(page, f)
			}
			return rows.Err()
		})
	})
	return page, err
}

// recoverPending claims lapsed file f and publishes it at its path, in one
// transaction; when that fails for a reason of the file's (its path taken
// by a directory) it is marked, to be tried again after the others, and
// for a reason of the store's (archived, over its quota) every lapsed file
// of the store is. It reports whether f was published, and whether the
// store refused it.
func (db *DB) recoverPending(ctx context.Context, f lapsedPending, now int64) (published, storeRefused bool) {
	err := db.write(ctx, "recover a pending file", func(r *run) error {
		s, err := loadStoreLite(r, f.store, true)
		if err != nil {
			return err
		}
		claim, err := claimLapsed(r, s, f.id, f.owner, f.epoch)
		if err != nil {
			return err
		}
		_, _, err = publishRow(r, s, f.id, f.path, f.owner, claim)
		return err
	})
	code := ErrorCode(err)
	switch {
	case err == nil:
		db.leases.recovered.Add(1)
		return true, false
	case IsPendingLost(err), code == CodeUnavailable, code == CodeInternal:
		return false, false // taken meanwhile, or left to the next sweep
	}
	whole := code == CodeReadOnly || code == CodeOverQuota || code == CodeNotFound
	var marked int64
	_ = db.write(ctx, "mark an unpublishable pending file", func(r *run) error {
		var res sql.Result
		var err2 error
		if whole {
			res, err2 = r.exec(`UPDATE pending SET failed_at = ?1, failure = ?2 WHERE store = (SELECT seq FROM stores WHERE id = ?3)
				AND (failed_at IS NULL OR failed_at < ?1)
				AND NOT EXISTS (SELECT 1 FROM mounts m WHERE m.id = pending.owner AND m.epoch = pending.epoch AND m.expires_at >= ?1)`, now, err.Error(), f.store)
		} else {
			res, err2 = r.exec("UPDATE pending SET failed_at = ?, failure = ? WHERE id = ? AND owner = ? AND epoch = ?", now, err.Error(), f.id, f.owner, f.epoch)
		}
		if err2 == nil {
			marked, err2 = res.RowsAffected()
		}
		return err2
	})
	db.leases.unpublishable.Add(marked)
	return false, whole
}

// claimLapsed moves pending file id from owner's epoch, whose lease must
// have lapsed, to a claim of the caller's: nobody else can act on it from
// then on. It returns the claim's epoch; a file taken meanwhile is lost.
func claimLapsed(r *run, s *storeRow, id int64, owner string, epoch int64) (int64, error) {
	now, err := r.db.leaseClock(r)
	if err != nil {
		return 0, err
	}
	claim := claimEpoch()
	res, err := r.exec(`UPDATE pending SET epoch = ?1 WHERE id = ?2 AND store = ?3 AND owner = ?4 AND epoch = ?5
		AND NOT EXISTS (SELECT 1 FROM mounts m WHERE m.id = ?4 AND m.epoch = ?5 AND m.expires_at >= ?6)`, claim, id, s.seq, owner, epoch, now)
	if err != nil {
		return 0, err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		if err != nil {
			return 0, err
		}
		return 0, lostPending(id, s)
	}
	return claim, nil
}

// endLapsed ends the session of a mount whose lease lapsed at now, unless
// another mount of it is alive, and drops the lease: its pending files are
// lapsed as well without it.
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
		_, err := r.exec("DELETE FROM mounts WHERE id = ? AND expires_at < ?", id, now)
		return err
	})
}
