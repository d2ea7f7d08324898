package versions

import (
	"context"
	"strings"
	"testing"
)

// queryPlan returns the EXPLAIN QUERY PLAN details of q as the engine
// prepares it (rebind), one per line.
func queryPlan(t *testing.T, db *DB, q string, args ...any) string {
	t.Helper()
	var lines []string
	err := db.one(context.Background(), "explain", func(r *run) error {
		rows, err := r.c.c.QueryContext(r.ctx, "EXPLAIN QUERY PLAN "+db.d.rebind(q), args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				return err
			}
			lines = append(lines, detail)
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}

// The listings a mount and the CLI run often must search an index, never
// scan a table whose size grows with history.
func TestQueryPlansUseIndexes(t *testing.T) {
	db := openSQLite(t)
	// No ANALYZE: the engine never runs it, so the plans must be good on
	// the planner's defaults.
	history, args, err := versionListQuery(VersionListOptions{MemoryID: "mem_x"}, 100)
	if err != nil {
		t.Fatal(err)
	}
	args[0], args[1] = versionRange(1)
	sessionQ, sargs, _ := versionListQuery(VersionListOptions{SessionID: "sesn_x", Page: *encodeSeqCursor(50)}, 100)
	sargs[0], args[1] = versionRange(1)
	latest, largs, _ := versionListQuery(VersionListOptions{}, 100)
	lo, hi := versionRange(1)
	largs[0], args[1] = versionRange(1)

	cases := []struct {
		name, q string
		args    []any
		want    string
		// merges: the query reads the versions of a few memories (those
		// path_memories or actor_memories list) and sorts what it read.
		merges bool
	}{
		{"one-memory-history", history, args, "versions_memory", false},
		{"session-history", sessionQ, sargs, "PRIMARY KEY (actor_id=?)", true},
		{"latest-page", latest, largs, "INTEGER PRIMARY KEY", false},
		{"memory-by-path", "SELECT " + memCols + " FROM memories m WHERE m.store = ? AND m.path = ?", []any{1, "/a"}, "USING PRIMARY KEY (store=? AND path", false},
		{"list-prefix", "SELECT " + memCols + " FROM memories m WHERE m.store = ? AND m.path >= ? AND m.path < ? ORDER BY m.path LIMIT ?", []any{1, "/a/", "/a0", 100}, "USING PRIMARY KEY (store=? AND path", false},
		{"stat", statQuery, []any{1, "/a/b", "/a/b/", "/a/b0"}, "USING PRIMARY KEY (store=? AND path", false},
		{"file-at-or-above", chainQueries[2], []any{1, "", "/a/b/c", "/a", "/a/b"}, "USING PRIMARY KEY (store=? AND path", false},
		{"path-free", freeQueries[2], []any{1, "", "/a/b/c", "/a", "/a/b", "/a/b/c/", "/a/b/c0"}, "USING PRIMARY KEY (store=? AND path", false},
		{"feed-versions", changesQuery, []any{lo + 5, hi, "memstore_x", 2}, "INTEGER PRIMARY KEY", false},
		{"room", roomQuery, []any{1, lo, hi}, "COVERING INDEX pending_store", false},
		{"store-counts", "SELECT " + storeCols + " FROM stores WHERE id = ?", []any{"memstore_x"}, "INTEGER PRIMARY KEY", false},
		{"insert-version", insertVersionQuery, []any{lo, hi, 1, "mem_x", "modified", 1, nil, nil, false, 1, nil, "/a", nil, nil, lo + 1, nil, 0, 0, nil}, "INTEGER PRIMARY KEY", false},
		{"version-by-stored-id", "SELECT seq FROM versions WHERE id = ? AND seq > ? AND seq < ?", []any{"memver_x", lo, hi}, "versions_id", false},
		{"path-history", pathHistoryQuery(false, true), []any{1, "/a", lo, hi, 0, 1 << 62, 100}, "PRIMARY KEY (store=? AND path=?)", true},
		{"path-history-newest", pathHistoryQuery(true, false), []any{1, "/a", lo, hi, 0, 1 << 62, 100}, "PRIMARY KEY (store=? AND path=?)", true},
		{"history-names", historyNamesQuery, []any{1, "/a/", "/a0"}, "path_memories USING PRIMARY KEY", false},
		{"known-save", knownSaveQuery, []any{lo, hi, "mem_x", lo + 5, 1, nil, nil, false, 1, "sha", 3, "c", 400, nil, "/a", 1, "refuse", 100}, "PRIMARY KEY (store=? AND path=?)", false},
		{"delete", deleteByIDQuery, []any{lo, hi, 1, 5, nil, nil, 1, 400, nil, "mem_x", ""}, "versions_memory (memory_id=? AND seq>? AND seq<?)", false},
		{"delete-by-path", deleteByPathQuery, []any{lo, hi, 1, 5, nil, nil, 1, 400, nil, "/a", ""}, "PRIMARY KEY (store=? AND path=?)", false},
		{"memory-by-id", "SELECT " + memCols + " FROM memories m WHERE " + memoryRef("mem_x"), []any{1, "mem_x"}, "versions_memory (memory_id=? AND seq>? AND seq<?)", false},
		{"create", createQuery, []any{lo, hi, 1, "refuse", 100, 400, `["/a"]`, "/a/b/", "/a/b0", "/a/b", "mem_x", 5, nil, nil, 1, "sha", 3, "c", nil}, "USING PRIMARY KEY (store=? AND path", false},
		{"rename", renameQuery, []any{lo, hi, 1, "refuse", "/a", 400, "/b", "/b/", "/b0", 5, nil, nil, 1, nil}, "USING PRIMARY KEY (store=? AND path", false},
		{"redacted", redactedQuery, []any{1}, "versions_redacted", false},
		{"place-redacted", placeNextQuery, []any{"mem_x", lo + 5, hi}, "versions_memory", false},
		{"place-redacted-before", placePrevQuery, []any{"mem_x", lo, lo + 5}, "versions_memory", false},
		{"feed-changes", changesQuery, []any{lo + 5, hi, "memstore_x", 2}, "changes_store", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			plan := queryPlan(t, db, c.q, c.args...)
			// The feed merges its two kinds by time: it sorts what it
			// returns, never a table.
			sorts := strings.Contains(plan, "TEMP B-TREE") && c.q != changesQuery && !c.merges
			if !strings.Contains(plan, c.want) || scansTable(plan) || sorts {
				t.Fatalf("plan does not search %s without sorting:\n%s", c.want, plan)
			}
			t.Logf("%s:\n%s", c.name, plan)
		})
	}
}

// scansTable tells whether a plan reads a whole table, which SQLite shows
// as SCAN with the table's name or alias.
func scansTable(plan string) bool {
	for _, line := range strings.Split(plan, "\n") {
		if strings.HasPrefix(line, "SCAN ") && line != "SCAN CONSTANT ROW" && !strings.Contains(line, "json_each") {
			return true
		}
	}
	return false
}
