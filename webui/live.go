package webui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/memfs/memfs/versions"
)

// liveCheck is how often a live page's stream looks again at its sign-in
// (ended, expired, key revoked) and at the feed when nothing woke it.
const liveCheck = 5 * time.Second

// liveEvent is what a live page is told of one change of its store.
type liveEvent struct {
	Op        string `json:"op"`
	Path      string `json:"path"`
	PrevPath  string `json:"prev_path,omitempty"`
	VersionID string `json:"version_id,omitempty"`
}

// events streams a store's change feed as server-sent events: one "change"
// event per change, and "signedout" before the stream ends because the
// sign-in did. ui.js reloads the page's live part on a change.
func (u *UI) events(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	me, err := u.authenticate(ctx, r)
	if err != nil || me == nil {
		http.Error(w, "not signed in: sign in at /ui/signin", http.StatusUnauthorized)
		return
	}
	storeID := r.PathValue("store")
	if !me.key.Reaches(storeID) {
		http.Error(w, "no such store", http.StatusNotFound)
		return
	}
	pos, err := u.db.FeedHead(ctx, storeID)
	if err != nil {
		status := http.StatusInternalServerError
		if versions.ErrorCode(err) == versions.CodeNotFound {
			status = http.StatusNotFound
		}
		http.Error(w, http.StatusText(status), status)
		return
	}
	// The stream outlives the server's write timeout, which is for
	// ordinary answers.
	rc := http.NewResponseController(w)
	rc.SetWriteDeadline(time.Time{})
	rc.SetReadDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, ": following the change feed\n\n")
	if rc.Flush() != nil {
		return
	}
	var mark versions.FeedMark
	for {
		wctx, cancel := context.WithTimeout(ctx, liveCheck)
		next, _, err := u.db.WaitFeed(wctx, mark, u.o.PollInterval, versions.Followed{Store: storeID})
		cancel()
		switch {
		case ctx.Err() != nil:
			return
		case err != nil && !errors.Is(err, context.DeadlineExceeded):
			u.o.Logger.Warn("web UI live page: reading the change feed failed", "store", storeID, "err", err)
			return
		case err == nil:
			mark = next
		}
		if me, err := u.signedIn(ctx, r, false); err != nil || me == nil || !me.key.Reaches(storeID) {
			fmt.Fprint(w, "event: signedout\ndata: {}\n\n")
			rc.Flush()
			return
		}
		changes, np, err := u.db.Changes(ctx, storeID, pos)
		if err != nil {
			u.o.Logger.Warn("web UI live page: reading the change feed failed", "store", storeID, "err", err)
			return
		}
		pos = np
		for _, c := range changes {
			b, _ := json.Marshal(liveEvent{Op: string(c.Op), Path: c.Path, PrevPath: c.PrevPath, VersionID: c.VersionID})
			fmt.Fprintf(w, "event: change\ndata: %s\n\n", b)
		}
		if len(changes) == 0 {
			fmt.Fprint(w, ": still here\n\n")
		}
		if rc.Flush() != nil {
			return
		}
	}
}
