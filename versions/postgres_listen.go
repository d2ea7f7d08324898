package versions

import (
	"cmp"
	"context"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// feedChannel is the channel of the notifications that name no store, or
// a store whose id is too long for a channel of its own (storeChannel);
// every listener hears it. A transaction that changed the feed notifies
// before its COMMIT; PostgreSQL delivers the notification to the
// channel's listeners once the transaction commits, and never if it
// aborts.
const feedChannel = "memfs"

// listenSafety bounds how long WaitFeed waits on PostgreSQL without a
// notification: the feed is read anyway, in case one was lost.
const listenSafety = 5 * time.Second

// storeChannel is the channel of a store's commits, which only the
// sessions following it listen to (PostgreSQL signals every listener of
// the database at a commit, but sends a notification only to those of
// its channel); false for an id too long for a channel's 63 bytes or not
// plain. The functions of one round trip decide so too (memfs_notify,
// migration 0030).
func storeChannel(id string) (string, bool) {
	ch := feedChannel + ":" + id
	return ch, len(ch) <= 63 && plainID(id)
}

// feedNotify is the NOTIFY of a commit to the change feeds of stores: one
// to each store's channel, so that a listener following others hears
// nothing; one naming no store on feedChannel when a store is not known or
// its id does not fit (every follower then reads). by is the origin of
// every write the commit holds (0: not one origin), the payload, so that
// a follower need not read back what it wrote itself. Unlike those of the
// functions of one round trip (storeNotified), it does not say what was
// written: a follower reads it.
func feedNotify(stores []string, by int64) string {
	var calls []string
	unnamed := len(stores) == 0
	for _, id := range stores {
		ch, ok := storeChannel(id)
		if !ok {
			unnamed = true
			continue
		}
		calls = append(calls, "pg_notify('"+ch+"', '"+strconv.FormatInt(by, 10)+"')")
	}
	if unnamed {
		calls = append(calls, "pg_notify('"+feedChannel+"', '')")
	}
	return "SELECT " + strings.Join(calls, ", ")
}

// originMark comes before the origin at the end of a payload on
// feedChannel, after the store's id (notified).
const originMark = ",@"

// plainID: a store id that is neither empty nor holds a character a
// channel's SQL literal would need to escape (ids are memstore_ and a
// ULID, but an imported store keeps the id it had).
func plainID(id string) bool {
	return id != "" && !strings.ContainsFunc(id, func(r rune) bool {
		return !(r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	})
}

// listener is the one LISTEN connection of a DB, opened by the first
// WaitFeed and reconnected with backoff whenever it drops. It listens to
// feedChannel and to the channel of each store a wait has followed (for
// the DB's life: a mount follows the same stores throughout), except
// while it polls instead (pollFeed). Each notification, each
// (re)connection (commits may have been missed while it was down) and
// each store's channel newly listened to counts one event and wakes the
// waiters.
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
	// follow is the stores whose channels are to be listened to, true
	// once they are on the current connection; interrupt ends the
	// connection's wait for a notification, for one added meanwhile.
	follow    map[string]bool
	interrupt context.CancelFunc
	// unchanneled: a store without a channel of its own was followed,
	// whose commits only the shared channel tells of; the listener then
	// never stops listening for a poll (pollFeed). polling: it polls.
	unchanneled, polling bool
}

// heard is what the events naming one store said: the last one, the
// origin of its commit (0: not known), and the last one whose commit had
// another origin or none known. A follower whose own origin is by need
// not read the changes of the events after other: they are its own.
//
// log is the changes the store's notifications brought, in the order of
// their commits, since gen last moved: at a notification that did not say
// what it changed (any on feedChannel), a gap in the versions' seqs, the
// channel newly listened to or the connection back (ChangesHeard).
type heard struct {
	last, by, other int64
	gen             int64
	log             []Change
}

// heardMax bounds a store's log: a follower further behind reads.
const heardMax = 256

// storeNotified is what a notification on a store's channel says: the
// origin of its commit (0: not known) and, from the functions of one
// round trip (memfs_notify, migration 0030), the version it wrote.
func storeNotified(storeID, payload string) (int64, *Change) {
	f := strings.Split(payload, "\n")
	by, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil || by < 0 {
		by = 0
	}
	if len(f) != 9 {
		return by, nil
	}
	seq, err1 := strconv.ParseInt(f[1], 10, 64)
	size, err2 := strconv.Atoi(f[5])
	at, err3 := strconv.ParseInt(f[6], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return by, nil
	}
	return by, &Change{Seq: seq, StoreID: storeID, Op: versionChange(Operation(f[2]), f[8]), Path: f[7], PrevPath: f[8],
		MemoryID: f[3], VersionID: versionID(seq, at), SHA256: f[4], Size: size, Origin: f[0], At: fromNanos(at)}
}

// sharedEvent counts a notification on feedChannel naming stores (none:
// any, as after a reconnection), committed by origin by (0: not known).
// It never says what changed: their logs start anew.
func (l *listener) sharedEvent(stores []string, by int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.count(stores, by)
	l.missed(stores)
}

// missed starts the logs of stores ids (nil: of every store) anew: what
// changed them may not all have been heard. With l.mu held, after count
// named them.
func (l *listener) missed(ids []string) {
	if ids == nil {
		for _, h := range l.named {
			h.gen, h.log = h.gen+1, nil
		}
	}
	for _, id := range ids {
		h := l.named[id]
		h.gen, h.log = h.gen+1, nil
	}
}

// storeEvent counts a notification on the channel of store id, which
// brought change c (nil: it did not say).
func (l *listener) storeEvent(id string, by int64, c *Change) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.heardLocked(id, by, c)
}

// heardLocked is storeEvent with l.mu held.
func (l *listener) heardLocked(id string, by int64, c *Change) {
	l.count([]string{id}, by)
	h := l.named[id]
	if c == nil || len(h.log) > 0 && c.Seq != h.log[len(h.log)-1].Seq+1 {
		l.missed([]string{id})
	}
	if c != nil {
		if len(h.log) == heardMax {
			h.log = h.log[1:]
		}
		h.log = append(h.log, *c)
	}
}

// heardSince returns the changes to store id after position after that its
// notifications brought, when they are all of them as far as they go and
// there are some (ok: a wait that ends with none heard, at its 5 s bound
// or for a notification that named no store, reads); gen is the store's
// generation, for a position read from the database.
func (l *listener) heardSince(id string, after FeedPos) (changes []Change, pos FeedPos, gen int64, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	h := l.named[id]
	if h == nil {
		return nil, after, 0, false
	}
	i, _ := slices.BinarySearchFunc(h.log, after.v+1, func(c Change, seq int64) int { return cmp.Compare(c.Seq, seq) })
	if after.g == 0 || after.g != h.gen || i == len(h.log) || h.log[i].Seq != after.v+1 {
		return nil, after, h.gen, false
	}
	changes = slices.Clone(h.log[i:])
	pos = after
	pos.v = changes[len(changes)-1].Seq
	return changes, pos, h.gen, true
}

func (p *pgState) wait(ctx context.Context, db *DB, mark FeedMark, follow []Followed) (FeedMark, []bool, error) {
	l := &p.listener
	l.once.Do(func() {
		l.mu.Lock()
		l.wake = make(chan struct{})
		l.named = map[string]*heard{}
		l.follow = map[string]bool{}
		l.mu.Unlock()
		db.background.Add(1)
		go p.listen(db)
	})
	l.want(follow)
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
// commits; nil, true when any may have moved (an event named no store).
func (l *listener) movedSince(since int64, follow []Followed) ([]bool, bool) {
	if l.n == since {
		return nil, false
	}
	if l.unnamed > since {
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

// want adds the stores of follow that have channels to those to listen
// to, and tells the listening connection when there are new ones.
func (l *listener) want(follow []Followed) {
	l.mu.Lock()
	defer l.mu.Unlock()
	added := false
	for _, f := range follow {
		if _, ok := storeChannel(f.Store); !ok {
			l.unchanneled = true
			continue
		}
		if _, ok := l.follow[f.Store]; !ok {
			l.follow[f.Store], added = false, true
		}
	}
	if added && l.interrupt != nil {
		l.interrupt()
	}
}

// toListen returns the stores whose channels the connection does not
// listen to yet; when there are none, stores added from now on call
// interrupt.
func (l *listener) toListen(interrupt context.CancelFunc) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var ids []string
	for id, on := range l.follow {
		if !on {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		l.interrupt = interrupt
	}
	return ids
}

// relisten records that a new connection listens to no store's channel
// yet.
func (l *listener) relisten() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for id := range l.follow {
		l.follow[id] = false
	}
}

// listening records that the connection listens to the channels of ids,
// and counts an event naming them: their waits and logs may have missed
// commits until now.
func (l *listener) listening(ids []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, id := range ids {
		l.follow[id] = true
	}
	l.count(ids, 0)
	l.missed(ids)
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

// count counts an event naming stores (none: any), committed by origin
// by (0: not known), and wakes the waits. With l.mu held.
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
		config := p.config.Copy()
		// The polls' one statement (pollQuery) keeps its generic plan: a
		// plan made for the arrays given costs less than one made for
		// any, so the server would otherwise plan it at every poll.
		config.RuntimeParams["plan_cache_mode"] = "force_generic_plan"
		conn, err := pgx.ConnectConfig(ctx, config)
		if err == nil {
			p.listener.relisten()
			if _, err = conn.Exec(ctx, "LISTEN "+feedChannel); err == nil {
				if down {
					slog.Info("change feed notifications are back", "db", db.where)
				}
				down, backoff = false, 50*time.Millisecond
				p.listener.sharedEvent(nil, 0) // commits may have gone unheard
				var busy busyMeter
				var storms stormBackoff
				for err == nil {
					err = p.listenOnce(ctx, conn, &busy)
					if err == errBusy {
						if err = p.pollFeed(ctx, conn, storms.next()); err == nil {
							storms.ended()
							err = p.relistenAfterPoll(ctx, conn)
							busy = busyMeter{}
						}
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

// listenOnce listens to the channels of stores newly followed, then
// waits for one notification, or until a store is added. It returns
// errBusy once busy says notifications come too fast to listen to.
func (p *pgState) listenOnce(ctx context.Context, conn *pgx.Conn, busy *busyMeter) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for ids := p.listener.toListen(cancel); len(ids) > 0; ids = p.listener.toListen(cancel) {
		listen := make([]string, len(ids))
		for i, id := range ids {
			ch, _ := storeChannel(id)
			listen[i] = "LISTEN " + pgx.Identifier{ch}.Sanitize()
		}
		if _, err := conn.Exec(ctx, strings.Join(listen, "; ")); err != nil { // one round trip
			return err
		}
		p.listener.listening(ids)
	}
	n, err := conn.WaitForNotification(wctx)
	if err != nil && ctx.Err() == nil && wctx.Err() != nil {
		return nil // a store was added: the connection is still good
	}
	if err != nil {
		return err
	}
	if id, ok := strings.CutPrefix(n.Channel, feedChannel+":"); ok {
		by, c := storeNotified(id, n.Payload)
		p.listener.storeEvent(id, by, c)
		// Only the followed stores' commits count: polls read nothing
		// else.
		if busy.heard(time.Now()) && p.listener.pollable() {
			return errBusy
		}
	} else {
		p.listener.sharedEvent(notified(n.Payload))
	}
	return nil
}
