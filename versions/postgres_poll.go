package versions

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// Under a storm of commits the listener stops listening and reads the
// feed instead. PostgreSQL signals every backend listening in the
// database at each commit that notifies, whichever its channel: with N
// daemons, each save costs the server N signals and wakes N backends to
// read the notification queue, which costs it more than a save's own
// statements once commits come by the thousand. When the stores it
// follows bring a storm of notifications, the listener listens to
// nothing, so that no commit signals it, and every tick reads what
// committed to those stores in one statement. It hears their versions as
// if their notifications had brought them (heardLocked): the followers
// wake as before, and read nothing more. Once the storm is over it listens
// again, and every follower reads once for what committed in between.
var feedPolling = struct {
	// enter: notifications heard within window that make it poll;
	// tick: the time between reads; leave: polls bringing fewer changes
	// than this within quiet make it listen again.
	enter  int
	window time.Duration
	tick   time.Duration
	leave  int
	quiet  time.Duration
}{enter: 40, window: 100 * time.Millisecond, tick: 20 * time.Millisecond, leave: 100, quiet: time.Second}

// stormBackoff lengthens the quiet that ends a poll when storms come
// back soon after one ended, so that bursts do not make the listener
// switch back and forth: each switch costs a statement per store's
// channel and a read by every follower.
type stormBackoff struct {
	left  time.Time
	quiet time.Duration
}

// next returns the quiet that ends the poll starting now: twice the last
// one's (up to eight times feedPolling.quiet) when the last ended less
// than five of its quiets ago.
func (b *stormBackoff) next() time.Duration {
	q := feedPolling.quiet
	if !b.left.IsZero() && time.Since(b.left) < 5*b.quiet {
		q = min(2*b.quiet, 8*feedPolling.quiet)
	}
	b.quiet = q
	return q
}

// ended records that a poll ended now.
func (b *stormBackoff) ended() { b.left = time.Now() }

// errBusy ends a wait for a notification when they come fast enough to
// poll for instead.
var errBusy = errors.New("notifications come too fast: poll")

// busyMeter counts the notifications heard within a window.
type busyMeter struct {
	start time.Time
	n     int
}

// heard counts one notification at now, and tells whether the window
// holds enough to poll.
func (b *busyMeter) heard(now time.Time) bool {
	if now.Sub(b.start) > feedPolling.window {
		b.start, b.n = now, 0
	}
	b.n++
	return b.n >= feedPolling.enter
}

// pollable: every store followed has a channel of its own, which a poll
// can stand in for.
func (l *listener) pollable() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return !l.unchanneled
}

// setPolling records whether the listener polls (DB.FeedPolling in the
// tests).
func (l *listener) setPolling(on bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.polling = on
}

// polled is a store the feed's polls read: the seqs of its versions
// after the last read and before the next store's (both 0: a store not
// found, whose versions are not read), and the last of its changes read.
type polled struct {
	after, hi, c int64
}

// pollFeed stops listening and reads the followed stores' new versions
// every tick, until the polls of the last quiet bring fewer than
// feedPolling.leave changes, a store without a channel is followed, or
// ctx ends (nil), or a read fails.
func (p *pgState) pollFeed(ctx context.Context, conn *pgx.Conn, quiet time.Duration) error {
	if _, err := conn.Exec(ctx, "UNLISTEN *"); err != nil {
		return err
	}
	// Notifications received before that are stale once the polls start
	// after them: dropped, not heard late.
	done, cancel := context.WithCancel(ctx)
	cancel()
	for {
		if _, err := conn.WaitForNotification(done); err != nil {
			break
		}
	}
	l := &p.listener
	l.setPolling(true)
	defer l.setPolling(false)
	l.relisten() // every store is added to the polls, as to a new connection
	stores := map[string]*polled{}
	tick := time.NewTicker(feedPolling.tick)
	defer tick.Stop()
	since, brought := time.Now(), 0
	for l.pollable() {
		if len(stores) > 0 {
			n, err := p.pollOnce(ctx, conn, stores)
			if err != nil {
				return err
			}
			brought += n
		}
		// Stores followed since, and those whose changes were not all
		// versions, (re)added from their positions now.
		if ids := l.toListen(func() {}); len(ids) > 0 {
			if err := p.addPolled(ctx, conn, stores, ids); err != nil {
				return err
			}
		}
		if time.Since(since) >= quiet {
			if brought < feedPolling.leave {
				return nil
			}
			since, brought = time.Now(), 0
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
	return nil
}

// addPolled adds the stores ids to the polls, from their last versions
// and changes now, and then counts an event naming them, as a channel
// newly listened to does: their followers read what came before.
func (p *pgState) addPolled(ctx context.Context, conn *pgx.Conn, stores map[string]*polled, ids []string) error {
	for _, id := range ids {
		stores[id] = &polled{} // until found
	}
	rows, err := conn.Query(ctx, `SELECT i.id, coalesce((SELECT max(v.seq) FROM versions v
			WHERE v.seq > s.seq << 40 AND v.seq < (s.seq + 1) << 40), s.seq << 40, 0), coalesce((s.seq + 1) << 40, 0),
		coalesce((SELECT max(c.seq) FROM changes c WHERE c.store = i.id), 0)
		FROM unnest($1::text[]) AS i(id) LEFT JOIN stores s ON s.id = i.id`, ids)
	if err != nil {
		return err
	}
	for rows.Next() {
		var id string
		var s polled
		if err := rows.Scan(&id, &s.after, &s.hi, &s.c); err != nil {
			rows.Close()
			return err
		}
		stores[id] = &s
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	p.listener.listening(ids)
	return nil
}

// pollQuery reads what committed to the polled stores ($1: their ids)
// since the last poll: the versions after $2 and before $3, each store's
// in the order of their commits, and the changes of its row or
// directories after $4, which come with no operation (the first is
// enough: the store's followers read them). One text for any number of
// stores, whose generic plan the listener's connection keeps (listen).
var pollQuery = `SELECT p.id, v.seq, v.operation, v.path, v.prev_path, v.memory_id, v.id, v.sha, v.size,
		CAST(v.origin AS TEXT), v.created_at
	FROM unnest($1::text[], $2::bigint[], $3::bigint[]) AS p(id, after, hi),
	LATERAL (SELECT seq, operation, path, prev_path, memory_id, id, sha, size, origin, created_at FROM versions
		WHERE seq > p.after AND seq < p.hi AND path IS NOT NULL ORDER BY seq LIMIT ` + strconv.Itoa(heardMax) + `) v
	UNION ALL
	SELECT p.id, c.seq, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
	FROM unnest($1::text[], $4::bigint[]) AS p(id, after),
	LATERAL (SELECT seq FROM changes WHERE store = p.id AND seq > p.after ORDER BY seq LIMIT 1) c`

// pollOnce reads what committed to the polled stores since the last poll
// (pollQuery) and hears it. A store whose changes are not all versions
// (a directory made or removed, the store's row changed, deleted or
// imported again) is not heard: it is to be added to the polls again
// (addPolled, with a new row number if it has one), whose event makes its
// followers read, in the order of the commits. It returns how many
// changes it read.
func (p *pgState) pollOnce(ctx context.Context, conn *pgx.Conn, stores map[string]*polled) (int, error) {
	ids := make([]string, 0, len(stores))
	after := make([]int64, 0, len(stores))
	hi := make([]int64, 0, len(stores))
	c := make([]int64, 0, len(stores))
	for id, s := range stores {
		ids, after, hi, c = append(ids, id), append(after, s.after), append(hi, s.hi), append(c, s.c)
	}
	rows, err := conn.Query(ctx, pollQuery, ids, after, hi, c)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var got []Change
	moved := map[string]bool{} // stores with changes that are not versions
	counts := map[string]int{}
	for rows.Next() {
		var store string
		var seq int64
		var cols changeCols
		if err := rows.Scan(append([]any{&store, &seq}, cols.dest()...)...); err != nil {
			return 0, err
		}
		if !cols.op.Valid {
			moved[store] = true
			continue
		}
		stores[store].after = max(stores[store].after, seq)
		counts[store]++
		got = append(got, cols.version(store, seq))
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	l := &p.listener
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range got {
		if !moved[c.StoreID] {
			by, _ := strconv.ParseInt(c.Origin, 10, 64) // 0: none
			l.heardLocked(c.StoreID, by, &c)
		}
	}
	var full []string // as many as a log holds: there may be more, read
	for id, n := range counts {
		if n == heardMax && !moved[id] {
			full = append(full, id)
		}
	}
	if len(full) > 0 {
		l.count(full, 0)
		l.missed(full)
	}
	for id := range moved {
		delete(stores, id)
		l.follow[id] = false
	}
	return len(got) + len(moved), nil
}

// relistenAfterPoll listens to feedChannel again after pollFeed; the next
// listenOnce listens to the stores' channels, with an event naming them:
// their followers read what committed meanwhile. Followers of a store
// without a channel of its own, which no store's event wakes, are woken
// by one naming none.
func (p *pgState) relistenAfterPoll(ctx context.Context, conn *pgx.Conn) error {
	p.listener.relisten()
	if _, err := conn.Exec(ctx, "LISTEN "+feedChannel); err != nil {
		return err
	}
	if !p.listener.pollable() {
		p.listener.sharedEvent(nil, 0)
	}
	return nil
}
