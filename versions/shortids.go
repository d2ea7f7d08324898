package versions

import (
	"context"
	"database/sql"
	"strings"
)

// ShortVersionIDs returns, for each of ids, the shortest end of its ULID
// (at least min characters, and 8) that no other version of the store ends in,
// as git lengthens an abbreviated hash until it names one object. What it
// returns is what VersionsEndingIn finds alone.
//
// The store's own encoded ids (versionID) end in their row's place in the
// store, so they never share their last 8 characters with each other; a
// clash can only involve an id the store keeps in its row (imported, or
// saved before ids encoded rows), which are read once here.
func (db *DB) ShortVersionIDs(ctx context.Context, storeID string, ids []string, min int) (map[string]string, error) {
	out := make(map[string]string, len(ids))
	const bucket = 8 // the end that encodes a row's place in its store
	min = max(min, bucket)
	err := db.read(ctx, "shorten version ids", func(r *run) error {
		seq, err := db.storeSeq(r, storeID)
		if err != nil {
			return err
		}
		lo, hi := versionRange(seq)
		stored, err := r.strings("SELECT id FROM versions WHERE id IS NOT NULL AND seq > ? AND seq < ?", lo, hi)
		if err != nil {
			return err
		}
		byTail := make(map[string][]string, len(stored))
		isStored := make(map[string]bool, len(stored))
		for _, s := range stored {
			u := strings.ToUpper(s)
			isStored[u] = true
			if len(u) >= bucket {
				byTail[u[len(u)-bucket:]] = append(byTail[u[len(u)-bucket:]], u)
			}
		}
		for _, id := range ids {
			u := strings.ToUpper(id)
			body := strings.TrimPrefix(u, strings.ToUpper(prefixVersion))
			if len(body) <= min {
				out[id] = body
				continue
			}
			var rivals []string
			for _, s := range byTail[u[len(u)-bucket:]] {
				if s != u {
					rivals = append(rivals, s)
				}
			}
			// An id that is not one of this store's encoded ids may end
			// as one of them does.
			if s, _, ok := versionSeq(id); isStored[u] || !ok || s <= lo || s >= hi {
				for _, cand := range seqsEndingIn(body[len(body)-bucket:], lo, hi) {
					var created int64
					err := r.scan("SELECT created_at FROM versions WHERE seq = ? AND id IS NULL", []any{cand}, &created)
					if err == sql.ErrNoRows {
						continue
					}
					if err != nil {
						return err
					}
					if other := versionID(cand, created); other != u {
						rivals = append(rivals, other)
					}
				}
			}
			n := min
			for n < len(body) && sharesEnd(rivals, body[len(body)-n:]) {
				n++
			}
			out[id] = body[len(body)-n:]
		}
		return nil
	})
	return out, err
}

func sharesEnd(ids []string, suffix string) bool {
	for _, s := range ids {
		if strings.HasSuffix(s, suffix) {
			return true
		}
	}
	return false
}
