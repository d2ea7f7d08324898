package versions

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// feedChannel is the channel of the NOTIFY a transaction that changed the
// feed sends before its COMMIT; PostgreSQL delivers it to every listener
// of the database once the transaction commits, and never if it aborts.
const feedChannel = "memfs"

// listenSafety bounds how long WaitFeed waits on PostgreSQL without a
// notification: the feed is read anyway, in case one was lost.
const listenSafety = 5 * time.Second

// listener is the one LISTEN connection of a DB, opened by the first
// WaitFeed and reconnected with backoff whenever it drops. Each
// notification, and each (re)connection (commits may have been missed
// while it was down), counts one event and wakes the waiters.
type listener struct {
	once sync.Once
	mu   sync.Mutex
	n    int64
	wake chan struct{} // closed and replaced at each event
}

func (p *pgState) wait(ctx context.Context, db *DB, mark FeedMark) (FeedMark, error) {
	l := &p.listener
	l.once.Do(func() {
		l.mu.Lock()
		l.wake = make(chan struct{})
		l.mu.Unlock()
		db.background.Add(1)
		go p.listen(db)
	})
	l.mu.Lock()
	n, wake := l.n, l.wake
	l.mu.Unlock()
	if n != mark.n {
		return FeedMark{n: n}, nil
	}
	t := time.NewTimer(listenSafety)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return mark, ctx.Err()
	case <-t.C:
		return mark, nil
	case <-wake:
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return FeedMark{n: l.n}, nil
}

func (l *listener) event() {
	l.mu.Lock()
	l.n++
	close(l.wake)
	l.wake = make(chan struct{})
	l.mu.Unlock()
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
				p.listener.event()
				for err == nil {
					_, err = conn.WaitForNotification(ctx)
					if err == nil {
						p.listener.event()
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
