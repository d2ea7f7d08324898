package versions

import (
	"strconv"
	"strings"
	"time"
)

// dialect is what differs between the backends below the store rules: the
// statements that open transactions, how an INSERT returns its key, the
// placeholders, which errors are transient, and how a connection breaks.
// Everything else — every rule, every other statement — is shared; a
// statement that the two backends cannot share is chosen by a field here,
// never by a second copy of a rule.
type dialect struct {
	name string // "sqlite" or "postgres"
	// beginWrite and beginRead open a write and a read transaction.
	beginWrite, beginRead string
	// lockStore follows the SELECT that reads a store's row at the start of
	// a write transaction: on PostgreSQL it locks the row, so that the
	// writers of one store run one after the other, as SQLite's single
	// writer makes them.
	lockStore string
	// returning: an INSERT reports its key with RETURNING, not
	// LastInsertId (which PostgreSQL's driver does not implement).
	returning bool
	// dollar: placeholders are $1, $2… rather than ? and ?NNN.
	dollar bool
	// blob converts content for its column: PostgreSQL keeps content as
	// bytea, since a text column refuses the NUL character UTF-8 allows.
	blob func(string) any
	// transient: the transaction may succeed if run again.
	transient func(error) bool
	// broken: the connection cannot serve another statement.
	broken func(error) bool
	// unsent: the statement failed before anything of it reached the
	// server, so that even a write is safe to run again.
	unsent func(error) bool
	// notify, if set, is the statement that runs before the COMMIT of a
	// transaction that added to the change feeds of stores, in the same
	// round trip; by is the origin of its writes (0: not one).
	notify func(stores []string, by int64) string
	// groupCommit: writes that arrive together share a transaction (see
	// group.go).
	groupCommit bool
	// statementTimeout, if set, bounds each statement on the client's
	// side (see run.stmtCtx).
	statementTimeout time.Duration
	// wrap turns a driver error into the engine's error for an operation.
	wrap func(db *DB, what string, err error) error
}

// rebind rewrites SQLite placeholders for the dialect: on PostgreSQL ?NNN
// becomes $NNN and each bare ? the next number; on SQLite each becomes
// +?NNN or +?, the same value. Quoted literals are left alone.
//
// SQLite plans some statements on the value bound to a bare placeholder
// (a LIMIT, an equality that may select a boolean) and marks them to be
// prepared again whenever that binding changes, which go-sqlite3 makes
// happen before every run by clearing all bindings: each run would parse
// and plan the statement anew. A unary plus, which leaves any value as it
// is, keeps the planner from looking at the value.
func (d *dialect) rebind(q string) string {
	if !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0
	quoted := false
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case c == '\'':
			quoted = !quoted
			b.WriteByte(c)
		case c == '?' && !quoted && !d.dollar:
			b.WriteString("+?")
		case c == '?' && !quoted:
			j := i + 1
			for j < len(q) && q[j] >= '0' && q[j] <= '9' {
				j++
			}
			b.WriteByte('$')
			if j > i+1 {
				b.WriteString(q[i+1 : j])
				i = j - 1
			} else {
				n++
				b.WriteString(strconv.Itoa(n))
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// lockClause is what follows a read of a store's row in r: the row lock of
// a write transaction, or nothing.
func (r *run) lockClause() string {
	if r.write {
		return r.db.d.lockStore
	}
	return ""
}
