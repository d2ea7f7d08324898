package versions

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/memfs/memfs/fulltext"
)

// SearchOptions narrow a search. The zero value searches the current
// memories of the stores for the 20 best matches.
type SearchOptions struct {
	// PathPrefix: "" or a prefix starting and ending with "/" (whole
	// segments, as a listing's).
	PathPrefix string
	// Limit: how many results, 1 to MaxSearchLimit; 0 means 20.
	Limit int
	// History: match every version that holds content, not only the
	// current ones; results are newest first.
	History bool
	// MaxLines bounds the matching lines shown per result (0: 5).
	MaxLines int
}

// MaxSearchLimit is the most results one search returns.
const MaxSearchLimit = 1000

// SearchResult is one memory (or, with History, one version) a query
// matched, with the lines of its content that hold a term of the query.
type SearchResult struct {
	StoreID   string          `json:"memory_store_id"`
	MemoryID  string          `json:"memory_id"`
	Path      string          `json:"path"`
	Score     float64         `json:"score"`
	VersionID string          `json:"memory_version_id"`
	Lines     []fulltext.Line `json:"lines"`
	// With History: what the version was and who wrote it when, and
	// whether it is its memory's current version.
	Operation Operation `json:"operation,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	CreatedBy *Actor    `json:"created_by"`
	Head      bool      `json:"head"`

	seq int64
}

// MarshalJSON adds the object's type tag.
func (s SearchResult) MarshalJSON() ([]byte, error) {
	type plain SearchResult
	return json.Marshal(struct {
		Type string `json:"type"`
		plain
	}{"search_result", plain(s)})
}

// Column weights of the ranking: a word in a memory's path says more about
// what it is than the same word in its content.
var searchWeights = []float64{3, 1}

// searchVisible is the one place that says which versions a history
// search may show: none that was redacted (the index drops those, this
// guards a stale read), and none the credential guard flagged and nobody
// has redacted yet, as the history views hide them. v is the versions
// row's alias.
//
// Versions the credential guard flags are withheld from history results
// in Go (fillResults), since the guard is Go code, not SQL.
func searchVisible(v string) string {
	return v + ".redacted_at IS NULL"
}

// Search finds the memories of the stores (or with o.History their
// versions) that hold every word and phrase of query and none of its
// excluded ones (grammar: fulltext.Parse), best first: ranked by BM25 on
// SQLite, by ts_rank on PostgreSQL, over path and content.
func (db *DB) Search(ctx context.Context, storeIDs []string, query string, o SearchOptions) ([]SearchResult, error) {
	q, err := fulltext.Parse(query)
	if err != nil {
		return nil, &Error{Code: CodeInvalid, Message: err.Error()}
	}
	if o.PathPrefix != "" && (!strings.HasPrefix(o.PathPrefix, "/") || !strings.HasSuffix(o.PathPrefix, "/")) {
		return nil, errorf(CodeInvalid, "path prefix %q must start and end with /, e.g. /notes/", o.PathPrefix)
	}
	switch {
	case o.Limit == 0:
		o.Limit = 20
	case o.Limit < 0 || o.Limit > MaxSearchLimit:
		return nil, errorf(CodeInvalid, "limit %d is out of range: give 1 to %d", o.Limit, MaxSearchLimit)
	}
	if o.MaxLines <= 0 {
		o.MaxLines = 5
	}
	if len(storeIDs) == 0 {
		return nil, errorf(CodeInvalid, "no store to search: name at least one")
	}
	if err := db.searchCatchUp(ctx, storeIDs); err != nil {
		return nil, err
	}
	out := []SearchResult{}
	err = db.read(ctx, "search", func(r *run) error {
		out = out[:0]
		for _, id := range storeIDs {
			seq, err := db.storeSeq(r, id)
			if err != nil {
				return err
			}
			var found []SearchResult
			if db.d.name == "postgres" {
				found, err = searchPostgres(r, id, seq, q, o)
			} else {
				found, err = searchSQLite(r, id, seq, q, o)
			}
			if err != nil {
				return searchError(err)
			}
			out = append(out, found...)
		}
		sortResults(out, o.History)
		if len(out) > o.Limit {
			out = out[:o.Limit]
		}
		out, err = fillResults(r, q, out, o)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// searchError turns what a backend says of a query it cannot read into
// the engine's one-line error; Parse leaves nothing such, so this guards
// the grammar's edges.
func searchError(err error) error {
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	msg := err.Error()
	for _, s := range []string{"malformed MATCH", "syntax error in tsquery", "tsquery"} {
		if strings.Contains(msg, s) {
			return errorf(CodeInvalid, "the search index cannot read this query: simplify it (words, \"phrases\", -word, prefix*)")
		}
	}
	return err
}

// sortResults orders by score (history: newest first), then by store and
// row, so that equal scores come in a stable order.
func sortResults(out []SearchResult, history bool) {
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if history {
			return a.seq > b.seq
		}
		if a.Score != b.Score {
			return a.Score > b.Score
		}
		return a.seq < b.seq
	})
}

// historyLimit is how many matches a history search reads: the newest
// o.Limit suffice unless a path prefix filters them afterwards. A search
// of the current memories reads every match (ranking needs them all).
func historyLimit(o SearchOptions) int64 {
	if !o.History {
		return -1
	}
	if o.PathPrefix != "" {
		return 1 << 62
	}
	return int64(o.Limit)
}

func inPrefix(path, prefix string) bool { return prefix == "" || strings.HasPrefix(path, prefix) }

// searchSQLite matches the FTS4 index over the store's row range, scores
// each match from matchinfo, then keeps the rows that are a current
// memory's head (or, with History, the versions shown).
func searchSQLite(r *run, storeID string, storeSeq int64, q *fulltext.Query, o SearchOptions) ([]SearchResult, error) {
	lo, hi := versionRange(storeSeq)
	// A history search shows the newest matches: FTS4 walks its doclists
	// newest first and stops at the limit, and matchinfo is computed for
	// the rows returned only. A path prefix is checked after, so then
	// every match is read.
	rows, err := r.query(`SELECT docid, matchinfo(search_versions, 'pcnalx') FROM search_versions
		WHERE search_versions MATCH ? AND docid > ? AND docid < ? ORDER BY docid DESC LIMIT ?`, q.FTS4(), lo, hi, historyLimit(o))
	if err != nil {
		return nil, err
	}
	scores := map[int64]float64{}
	phrases := len(q.Positive())
	for rows.Next() {
		var seq int64
		var mi []byte
		if err := rows.Scan(&seq, &mi); err != nil {
			rows.Close()
			return nil, err
		}
		s, err := fulltext.BM25(mi, phrases, searchWeights)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("rank version %d: %w", seq, err)
		}
		scores[seq] = s
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(scores) == 0 {
		return nil, nil
	}
	if o.History {
		return historyRows(r, storeID, lo, hi, scores, o)
	}
	return headRows(r, storeID, storeSeq, scores, o)
}

// headRows keeps the matched rows that are the head of a live memory.
func headRows(r *run, storeID string, storeSeq int64, scores map[int64]float64, o SearchOptions) ([]SearchResult, error) {
	rows, err := r.query("SELECT id, path, head, version_id FROM memories WHERE store = ?", storeSeq)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []SearchResult
	for rows.Next() {
		var res SearchResult
		if err := rows.Scan(&res.MemoryID, &res.Path, &res.seq, &res.VersionID); err != nil {
			return nil, err
		}
		score, ok := scores[res.seq]
		if !ok || !inPrefix(res.Path, o.PathPrefix) {
			continue
		}
		res.StoreID, res.Score, res.Head = storeID, score, true
		out = append(out, res)
	}
	return out, rows.Err()
}

// historyRows reads the matched versions, newest first, as far as a
// search's limit can reach.
func historyRows(r *run, storeID string, lo, hi int64, scores map[int64]float64, o SearchOptions) ([]SearchResult, error) {
	seqs := make([]int64, 0, len(scores))
	for s := range scores {
		seqs = append(seqs, s)
	}
	sort.Slice(seqs, func(i, j int) bool { return seqs[i] > seqs[j] })
	var out []SearchResult
	for len(seqs) > 0 && len(out) < o.Limit {
		n := min(len(seqs), 200)
		batch := seqs[:n]
		seqs = seqs[n:]
		args := make([]any, len(batch))
		for i, s := range batch {
			args[i] = s
		}
		found, err := versionResults(r, storeID, "v.seq IN ("+placeholders(len(batch))+")", args, o)
		if err != nil {
			return nil, err
		}
		for i := range found {
			found[i].Score = scores[found[i].seq]
		}
		sort.Slice(found, func(i, j int) bool { return found[i].seq > found[j].seq })
		out = append(out, found...)
	}
	return out, nil
}

// versionResults reads the versions where selects as history results,
// with whether each is its memory's head.
func versionResults(r *run, storeID, where string, args []any, o SearchOptions) ([]SearchResult, error) {
	rows, err := r.query(`SELECT v.seq, v.id, v.memory_id, v.operation, v.created_at, v.actor_type, v.actor_id, v.path,
			`+isHead("v")+`
		FROM versions v WHERE `+where+` AND `+searchVisible("v"), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []SearchResult
	for rows.Next() {
		var res SearchResult
		var id, actorType, actorID, path sql.NullString
		var op string
		var created int64
		if err := rows.Scan(&res.seq, &id, &res.MemoryID, &op, &created, &actorType, &actorID, &path, &res.Head); err != nil {
			return nil, err
		}
		if !inPrefix(path.String, o.PathPrefix) {
			continue
		}
		res.StoreID, res.Path, res.Operation, res.CreatedAt = storeID, path.String, Operation(op), fromNanos(created)
		res.VersionID = id.String
		if !id.Valid {
			res.VersionID = versionID(res.seq, created)
		}
		if actorType.Valid {
			res.CreatedBy = &Actor{Type: actorType.String, ID: actorID.String}
		}
		out = append(out, res)
	}
	return out, rows.Err()
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// searchPostgres matches the tsvector index; ts_rank scores with the
// path's words (weight A) counted three times the content's (D), over a
// length-normalised content (normalisation 1: divided by 1 + log length).
func searchPostgres(r *run, storeID string, storeSeq int64, q *fulltext.Query, o SearchOptions) ([]SearchResult, error) {
	const rank = `ts_rank('{0.1, 0, 0, 0.3}', s.tsv, CAST(?1 AS tsquery), 1)`
	if !o.History {
		rows, err := r.query(`SELECT m.id, m.path, m.head, m.version_id, `+rank+`
			FROM memories m JOIN search_versions s ON s.seq = m.head
			WHERE m.store = ?2 AND s.tsv @@ CAST(?1 AS tsquery)`, q.TSQuery(), storeSeq)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var out []SearchResult
		for rows.Next() {
			var res SearchResult
			if err := rows.Scan(&res.MemoryID, &res.Path, &res.seq, &res.VersionID, &res.Score); err != nil {
				return nil, err
			}
			if inPrefix(res.Path, o.PathPrefix) {
				res.StoreID, res.Head = storeID, true
				out = append(out, res)
			}
		}
		return out, rows.Err()
	}
	lo, hi := versionRange(storeSeq)
	rows, err := r.query(`SELECT s.seq, `+rank+` FROM search_versions s
		WHERE s.tsv @@ CAST(?1 AS tsquery) AND s.seq > ?2 AND s.seq < ?3 ORDER BY s.seq DESC LIMIT ?4`, q.TSQuery(), lo, hi, historyLimit(o))
	if err != nil {
		return nil, err
	}
	scores := map[int64]float64{}
	for rows.Next() {
		var seq int64
		var score float64
		if err := rows.Scan(&seq, &score); err != nil {
			rows.Close()
			return nil, err
		}
		scores[seq] = score
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return historyRows(r, storeID, lo, hi, scores, o)
}

// fillResults reads the content of each result and keeps the lines that
// match, and who wrote each result's version when.
//
// With History, a version the history views withhold (WithheldFromHistory:
// its store's guard finds a credential in it and nobody has redacted it)
// is not a result: the versions views show no more of it than its name.
func fillResults(r *run, q *fulltext.Query, out []SearchResult, o SearchOptions) ([]SearchResult, error) {
	policies := map[string]GuardPolicy{}
	kept := out[:0]
	for i := range out {
		var c, actorType, actorID sql.NullString
		var created int64
		err := r.scan("SELECT "+contentOf("v")+", v.created_at, v.actor_type, v.actor_id FROM versions v WHERE v.seq = ?",
			[]any{out[i].seq}, &c, &created, &actorType, &actorID)
		if err != nil {
			return nil, err
		}
		if o.History {
			policy, ok := policies[out[i].StoreID]
			if !ok {
				if err := r.scan("SELECT guard FROM stores WHERE id = ?", []any{out[i].StoreID}, &policy); err != nil {
					return nil, err
				}
				policies[out[i].StoreID] = policy
			}
			content := c.String
			if WithheldFromHistory(policy, &Version{Content: &content}) {
				continue
			}
		}
		out[i].CreatedAt = fromNanos(created)
		if actorType.Valid {
			out[i].CreatedBy = &Actor{Type: actorType.String, ID: actorID.String}
		}
		out[i].Lines = q.MatchingLines(c.String, o.MaxLines)
		if out[i].Lines == nil {
			out[i].Lines = []fulltext.Line{}
		}
		kept = append(kept, out[i])
	}
	return kept, nil
}

// searchCatchUp indexes the versions the stores gained since the index's
// mark (search_indexed), so that a search sees every save before it. The
// index is kept here rather than by each save so that it costs saves
// nothing: a store is indexed once per search that follows new saves, in
// one statement over the new versions. A store's versions are appended in
// its commit order under its lock, so the versions after the mark that a
// transaction sees are all there will be below the newest it sees. A
// read-only handle cannot write the index and searches what it holds.
func (db *DB) searchCatchUp(ctx context.Context, storeIDs []string) error {
	if db.readOnly {
		return nil
	}
	for _, id := range storeIDs {
		var behind bool
		err := db.read(ctx, "search", func(r *run) error {
			seq, err := db.storeSeq(r, id)
			if err != nil {
				return err
			}
			lo, hi := versionRange(seq)
			return r.scan(`SELECT coalesce((SELECT seq FROM search_indexed WHERE store = ?), ?)
				< coalesce((SELECT max(seq) FROM versions WHERE seq > ? AND seq < ?), ?)`,
				[]any{seq, lo, lo, hi, lo}, &behind)
		})
		if err != nil {
			return err
		}
		if !behind {
			continue
		}
		err = db.write(ctx, "index for search", func(r *run) error {
			seq, err := db.storeSeq(r, id)
			if err != nil {
				return err
			}
			lo, hi := versionRange(seq)
			var mark, last int64
			if err := r.scan(`SELECT coalesce((SELECT seq FROM search_indexed WHERE store = ?), ?),
				coalesce((SELECT max(seq) FROM versions WHERE seq > ? AND seq < ?), ?)`,
				[]any{seq, lo, lo, hi, lo}, &mark, &last); err != nil {
				return err
			}
			if last <= mark {
				return nil
			}
			insert := `INSERT INTO search_versions (docid, path, content)
				SELECT v.seq, memfs_search_fold(v.path), memfs_search_fold(coalesce(v.content, c.content))`
			if db.d.name == "postgres" {
				insert = `INSERT INTO search_versions (seq, tsv)
				SELECT v.seq, memfs_search_doc(v.path, convert_from(coalesce(v.content, c.content), 'UTF8'))`
			}
			insert += `
				FROM versions v LEFT JOIN versions c ON c.seq = v.content_of
				WHERE v.seq > ? AND v.seq <= ? AND v.redacted_at IS NULL
				AND (v.content IS NOT NULL OR v.content_of IS NOT NULL)`
			if db.d.name == "postgres" {
				insert += " ON CONFLICT DO NOTHING"
			}
			if _, err := r.exec(insert, mark, last); err != nil {
				return err
			}
			_, err = r.exec(`INSERT INTO search_indexed (store, seq) VALUES (?, ?)
				ON CONFLICT (store) DO UPDATE SET seq = excluded.seq WHERE excluded.seq > search_indexed.seq`, seq, last)
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}
