package versions

import (
	"context"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// feedChannel is the channel of the NOTIFY a transaction that changed the
// feed sends before its COMMIT; PostgreSQL delivers it to every listener
// of the database once the transaction commits, and never if it aborts.
const feedChannel = "memfs"

// listenSafety bounds how long WaitFeed waits on PostgreSQL without a
// notification: the feed is read anyway, in case one was lost.
const listenSafety = 5 * time.Second

// feedNotify is the NOTIFY of a commit to the change feeds of stores: its
// payload names them, so that a listener following others reads nothing;
// it is empty when one is not known (a listener then reads every store it
// follows). by is the origin of every write the commit holds (0: not one
// origin): the payload ends with it, as ",@" and its number, so that a
// follower need not read back what it wrote itself.
func feedNotify(stores []string, by int64) string {
	payload := strings.Join(stores, ",")
	if by != 0 {
		payload += originMark + strconv.FormatInt(by, 10)
	}
	if len(payload) > maxPayload || slices.ContainsFunc(stores, func(id string) bool { return !plainID(id) }) {
		payload = ""
	}
	return "SELECT pg_notify('" + feedChannel + "', '" + payload + "')"
}

// originMark comes before the origin at a payload's end; the functions of
// one round trip send their store's id and their caller's origin so too.
const originMark = ",@"

// plainID: a store id that is neither empty nor holds a character the
// payload's SQL literal or its list would need to escape (ids are
// memstore_ and a ULID, but an imported store keeps the id it had).
func plainID(id string) bool {
	return id != "" && !strings.ContainsFunc(id, func(r rune) bool {
		return !(r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	})
}

// maxPayload keeps a notification within PostgreSQL's 8,000 bytes.
const maxPayload = 7000

// listener is the one LISTEN connection of a DB, opened by the first
// WaitFeed and reconnected with backoff whenever it drops. Each
// notification, and each (re)connection (commits may have been missed
// while it was down), counts one event and wakes the waiters.
type listener struct {
	once sync.Once
	mu   sync.Mutex
	n    int64
	wake chan struct{} // closed and replaced at each event
	// named is, per store id, what the events that named it said;
	// unnamed is the last event that named no store: a notification
	// with no payload, or a (re)connection.
	named   map[string]*heard
	unnamed int64
}

// heard is what the events naming one store said: the last one, the
// origin of its commit (0: not known), and the last one whose commit had
// another origin or none known. A follower whose own origin is by need
// not read the changes of the events after other: they are its own.
type heard struct {
	last, by, other int64
}

func (p *pgState) wait(ctx context.Context, db *DB, mark FeedMark, follow []Followed) (FeedMark, []bool, error) {
	l := &p.listener
	l.once.Do(func() {
		l.mu.Lock()
		l.wake = make(chan struct{})
		l.named = map[string]*heard{}
		l.mu.Unlock()
		db.background.Add(1)
		go p.listen(db)
	})
	t := time.NewTimer(listenSafety)
	defer t.Stop()
	for {
		l.mu.Lock()
		next, wake := FeedMark{n: l.n}, l.wake
		moved, any := l.movedSince(mark.n, follow)
		l.mu.Unlock()
		if any {
			return next, moved, nil
		}
		mark = next // what came named other stores, or was the follower's own
		select {
		case <-ctx.Done():
			return mark, nil, ctx.Err()
		case <-t.C:
			return mark, nil, nil
		case <-wake:
		}
	}
}

// movedSince tells which of the followed stores the events after event
// since named, leaving out those that were only the follower's own
// commits; nil, true when any may have moved (an event named no store, or
// no stores are followed and one came).
func (l *listener) movedSince(since int64, follow []Followed) ([]bool, bool) {
	if l.n == since {
		return nil, false
	}
	if l.unnamed > since || len(follow) == 0 {
		return nil, true
	}
	moved := make([]bool, len(follow))
	any := false
	for i, f := range follow {
		h := l.named[f.Store]
		if h == nil || h.last <= since {
			continue
		}
		if h.by == 0 || h.by != f.Own.num || h.other > since {
			moved[i], any = true, true
		}
	}
	return moved, any
}

// notified is the stores a payload names and the origin of the commit
// that sent it (0: not known). The functions of one round trip send one
// store's id, which an imported store may have made of anything, so what
// comes before the origin names one store as a whole too.
func notified(payload string) ([]string, int64) {
	var by int64
	if i := strings.LastIndex(payload, originMark); i >= 0 {
		if n, err := strconv.ParseInt(payload[i+len(originMark):], 10, 64); err == nil && n > 0 {
			payload, by = payload[:i], n
		}
	}
	if payload == "" {
		return nil, 0
	}
	if !strings.Contains(payload, ",") {
		return []string{payload}, by
	}
	return append(strings.Split(payload, ","), payload), by
}

// event counts a notification naming stores (none: unnamed), committed by
// origin by (0: not known).
func (l *listener) event(stores []string, by int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.count(stores, by)
}

// count is event with l.mu held.
func (l *listener) count(stores []string, by int64) {
	l.n++
	if len(stores) == 0 {
		l.unnamed = l.n
	}
	for _, id := range stores {
		h := l.named[id]
		if h == nil {
			h = &heard{}
			l.named[id] = h
		}
		if by == 0 || by != h.by {
			h.other, h.by = h.last, by
		}
		h.last = l.n
	}
	close(l.wake)
	l.wake = make(chan struct{})
}

// wakeAll counts an event that names no store, once the listener runs:
// every wait returns, as after a reconnection.
func (l *listener) wakeAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.wake != nil {
		l.count(nil, 0)
	}
}

// listen holds the LISTEN connection until the DB closes.
func (p *pgState) listen(db *DB) {
	defer db.background.Done()
	ctx := p.ctx
	backoff := 50 * time.Millisecond
	down := false
	for ctx.Err() == nil {
		conn, err := pgx.ConnectConfig(ctx, p.config.Copy())
		if err == nil {
			if _, err = conn.Exec(ctx, "LISTEN "+feedChannel); err == nil {
				if down {
					slog.Info("change feed notifications are back", "db", db.where)
				}
				down, backoff = false, 50*time.Millisecond
				p.listener.event(nil, 0)
				for err == nil {
					var n *pgconn.Notification
					if n, err = conn.WaitForNotification(ctx); err == nil {
						p.listener.event(notified(n.Payload))
					}
				}
			}
			conn.Close(context.Background())
		}
		if ctx.Err() != nil {
			return
		}
		if !down {
			slog.Warn("lost the change feed's notifications; mounts see others' saves again once it reconnects", "db", db.where, "err", redactErr(err, ""))
			down = true
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}
