// Package lease keeps a mount's lease (versions/leases.go): its own
// goroutine renews it on the database handle's connection kept for
// renewals, so neither the requests the mount serves nor a queue of saves
// delays it.
package lease

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memfs/memfs/versions"
)

// The mount's lease (versions/leases.go). Its pending files are its own
// while it renews the lease: a goroutine of its own renews it on the
// database handle's connection kept for renewals, so neither the requests
// the mount serves nor a queue of saves delays it. A lease found lapsed
// (the daemon was stopped, or cut off from the database, for longer than
// versions.LeaseTTL) is not renewed: the mount takes a new lease at a new
// epoch and says so in its log. The files it held before are recovered by
// others from then on; it publishes and drops none of them, and their
// nodes show what the store has at their path (internal/mirror).

// Keeper renews one mount's lease and knows its epoch now.
type Keeper struct {
	DB    *versions.DB
	Lease versions.MountLease
	Log   *slog.Logger
	epoch atomic.Int64

	mu         sync.Mutex // one renewal at a time: the ticker's, or a request's (Renew)
	failing    bool       // guarded by mu: the last renewal failed
	superseded bool       // guarded by mu: a newer memfs upgraded the database, said once
}

// Owner names the mount's pending files: its instance, never its path
// (mounts in other namespaces or on other hosts may share that), at the
// epoch of its lease now.
func (k *Keeper) Owner() versions.PendingOwner {
	return versions.PendingOwner{Mount: k.Lease.ID, Epoch: k.epoch.Load()}
}

// Run renews the lease until ctx ends. A renewal the database did not
// take is tried again at the next tick.
func (k *Keeper) Run(ctx context.Context) {
	t := time.NewTicker(versions.LeaseRenew)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		k.Renew(ctx)
	}
}

// Renew renews the lease now, or takes a new one if it lapsed, and
// returns the owner of the mount's pending files from then on. A request
// that found the lease lapsed calls it, so that a resumed mount saves at
// once rather than at the ticker's next renewal.
func (k *Keeper) Renew(ctx context.Context) (versions.PendingOwner, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	l := k.Lease
	l.Epoch = k.epoch.Load()
	lapsed, err := k.DB.RenewMount(ctx, &l)
	switch {
	case err != nil && ctx.Err() == nil && versions.ErrorCode(err) == versions.CodeConflict:
		if !k.superseded {
			k.Log.Error("the mount's lease had lapsed, and a newer memfs upgraded the database meanwhile: this mount holds no lease, so others publish the temporary files it saves, and it would write the old way; stop it and mount again with the newer memfs", "err", err)
		}
		k.failing, k.superseded = true, true
	case err != nil && ctx.Err() == nil:
		if !k.failing {
			k.Log.Warn("renewing the mount's lease failed; retrying (after "+versions.LeaseTTL.String()+" without a renewal others take this mount for dead and publish its temporary files)", "err", err)
		}
		k.failing = true
	case lapsed:
		k.epoch.Store(l.Epoch)
		k.Log.Warn("the mount's lease had lapsed: others publish the temporary files it held and may have ended its session; it publishes and drops none of them, and holds a new lease now",
			"lease", l.ID, "epoch", l.Epoch)
		k.failing = false
	case err == nil:
		k.failing = false
	}
	return k.Owner(), err
}
