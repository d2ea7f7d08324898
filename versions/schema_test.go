package versions_test

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memfs/memfs/versions"
	"github.com/memfs/memfs/versions/pgtest"
)

// schemaOf is what both backends' schemas must agree on, each line one
// fact: a table's column with its type's family and whether it may be
// null, a unique set of columns (primary key, UNIQUE, unique index), an
// index by name with its columns, a foreign key.
type schemaOf map[string]bool

// The SQLite and PostgreSQL migrations make the same schema: tables,
// columns, types by family, indexes and constraints. The search index
// (search_*) is each backend's own: an FTS4 table and its shadow tables on
// SQLite, a tsvector table on PostgreSQL.
func TestSchemasMatch(t *testing.T) {
	pgDSN := pgtest.Database(t) // skips without a PostgreSQL server
	lite := filepath.Join(t.TempDir(), "memfs.db")
	for _, dsn := range []string{lite, pgDSN} {
		db, err := versions.Open(dsn, versions.Options{})
		ok(t, err)
		ok(t, db.Close())
	}
	ls, err := sql.Open("sqlite3", "file:"+lite)
	ok(t, err)
	defer ls.Close()
	ps, err := sql.Open("pgx", pgDSN)
	ok(t, err)
	defer ps.Close()
	a, b := sqliteSchema(t, ls), postgresSchema(t, ps)
	var diff []string
	for f := range a {
		if !b[f] {
			diff = append(diff, "only on SQLite:     "+f)
		}
	}
	for f := range b {
		if !a[f] && !postgresOnly[f] {
			diff = append(diff, "only on PostgreSQL: "+f)
		}
	}
	slices.Sort(diff)
	if len(diff) > 0 {
		t.Fatalf("the schemas differ:\n%s", strings.Join(diff, "\n"))
	}
	t.Logf("%d facts agree", len(a))
}

// postgresOnly are the facts only PostgreSQL's schema has, on purpose.
// There a memory's row lives in a heap, found by its inode number or id
// through these indexes (its save functions search by id); SQLite keeps it
// in one b-tree keyed by store and path, so that a deletion writes one
// page of it, and finds a memory by id through its latest version
// (migrations/sqlite/0029_memories_by_path.sql). A version a save
// function wrote is marked applied: the function moved its memory's row
// and indexes itself (migrations/postgres/0031_applied_versions.sql).
var postgresOnly = map[string]bool{"memories unique (ino)": true, "memories unique (id)": true,
	"versions.applied int null=true": true}

func family(typ string) string {
	switch strings.ToLower(typ) {
	case "integer", "bigint", "boolean", "smallint":
		return "int"
	case "text", "bytea", "character varying":
		return "text" // content: text on SQLite, bytea on PostgreSQL
	}
	return strings.ToLower(typ)
}

func queryStrings(t *testing.T, db *sql.DB, q string, args ...any) [][]string {
	t.Helper()
	rows, err := db.Query(q, args...)
	ok(t, err)
	defer rows.Close()
	cols, err := rows.Columns()
	ok(t, err)
	var out [][]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		ok(t, rows.Scan(ptrs...))
		row := make([]string, len(cols))
		for i, v := range vals {
			row[i] = v.String
		}
		out = append(out, row)
	}
	ok(t, rows.Err())
	return out
}

func sqliteSchema(t *testing.T, db *sql.DB) schemaOf {
	s := schemaOf{}
	for _, tr := range queryStrings(t, db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'schema_migrations' AND substr(name, 1, 7) <> 'search_'") {
		tbl := tr[0]
		var pk []string
		for _, c := range queryStrings(t, db, "SELECT name, type, \"notnull\", pk FROM pragma_table_info(?) ORDER BY pk, cid", tbl) {
			null := c[2] == "0" && c[3] == "0"
			s[fmt.Sprintf("%s.%s %s null=%v", tbl, c[0], family(c[1]), null)] = true
			if c[3] != "0" {
				pk = append(pk, c[0])
			}
		}
		if len(pk) > 0 {
			s[fmt.Sprintf("%s unique (%s)", tbl, strings.Join(pk, ", "))] = true
		}
		for _, ix := range queryStrings(t, db, "SELECT name, \"unique\", origin, partial FROM pragma_index_list(?)", tbl) {
			var cols []string
			for _, c := range queryStrings(t, db, "SELECT name FROM pragma_index_info(?) ORDER BY seqno", ix[0]) {
				cols = append(cols, c[0])
			}
			switch {
			case ix[2] == "pk":
			case ix[1] == "1" && ix[3] == "0":
				s[fmt.Sprintf("%s unique (%s)", tbl, strings.Join(cols, ", "))] = true
			default:
				s[fmt.Sprintf("%s index %s (%s) unique=%s partial=%s", tbl, ix[0], strings.Join(cols, ", "), ix[1], ix[3])] = true
			}
		}
		for _, fk := range queryStrings(t, db, "SELECT \"from\", \"table\", \"to\", on_delete FROM pragma_foreign_key_list(?)", tbl) {
			s[fmt.Sprintf("%s foreign key (%s) → %s (%s) on delete %s", tbl, fk[0], fk[1], fk[2], strings.ToLower(fk[3]))] = true
		}
	}
	return s
}

func postgresSchema(t *testing.T, db *sql.DB) schemaOf {
	s := schemaOf{}
	for _, c := range queryStrings(t, db, `SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns
		WHERE table_schema = 'public' AND table_name <> 'schema_migrations' AND left(table_name, 7) <> 'search_'`) {
		s[fmt.Sprintf("%s.%s %s null=%v", c[0], c[1], family(c[2]), c[3] == "YES")] = true
	}
	// Indexes, those of constraints included: a unique full index is a
	// unique set of columns, whatever made it.
	for _, ix := range queryStrings(t, db, `SELECT t.relname, i.relname, x.indisunique, x.indpred IS NOT NULL,
			(SELECT string_agg(a.attname, ', ' ORDER BY k.n) FROM unnest(x.indkey) WITH ORDINALITY AS k(attnum, n)
				JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum)
		FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
		JOIN pg_namespace ns ON ns.oid = t.relnamespace
		WHERE ns.nspname = 'public' AND t.relname <> 'schema_migrations' AND left(t.relname, 7) <> 'search_'`) {
		unique, partial := ix[2] == "true", ix[3] == "true"
		if unique && !partial {
			s[fmt.Sprintf("%s unique (%s)", ix[0], ix[4])] = true
			continue
		}
		s[fmt.Sprintf("%s index %s (%s) unique=%d partial=%d", ix[0], ix[1], ix[4], b2i(unique), b2i(partial))] = true
	}
	for _, fk := range queryStrings(t, db, `SELECT tc.table_name, kcu.column_name, ccu.table_name, ccu.column_name, rc.delete_rule
		FROM information_schema.table_constraints tc
		JOIN information_schema.key_column_usage kcu ON kcu.constraint_name = tc.constraint_name
		JOIN information_schema.constraint_column_usage ccu ON ccu.constraint_name = tc.constraint_name
		JOIN information_schema.referential_constraints rc ON rc.constraint_name = tc.constraint_name
		WHERE tc.constraint_type = 'FOREIGN KEY' AND tc.table_schema = 'public' AND left(tc.table_name, 7) <> 'search_'`) {
		s[fmt.Sprintf("%s foreign key (%s) → %s (%s) on delete %s", fk[0], fk[1], fk[2], fk[3], strings.ToLower(fk[4]))] = true
	}
	return s
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
