package versions

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// Connections a daemon holds to PostgreSQL, however many stores it mounts:
// pgWriters for write transactions, pgReaders for reads, and one more for
// LISTEN (the change feed's notifications). They open on first use and
// stay open.
const (
	pgWriters = 4
	pgReaders = 4
	// PostgresConnections is the most connections one DB holds: the
	// writers, the readers, LISTEN's and the one mount leases are renewed
	// on.
	PostgresConnections = pgWriters + pgReaders + 2
)

// On PostgreSQL, a transaction runs at READ COMMITTED and its first
// statement locks the store's row (SELECT … FROM stores WHERE id = ? FOR
// UPDATE), so the writers of one store, from any host, run one at a time,
// and each later statement sees every commit made before the lock was
// granted: the per-store limits, path uniqueness, preconditions and
// conflict marking are decided exactly as under SQLite's single writer,
// while writers of different stores do not wait for each other. Reads
// that span statements use REPEATABLE READ, one snapshot, as SQLite's read
// transactions do.
var postgresDialect = &dialect{
	name:             "postgres",
	beginWrite:       "BEGIN ISOLATION LEVEL READ COMMITTED",
	beginRead:        "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
	lockStore:        " FOR UPDATE",
	returning:        true,
	dollar:           true,
	blob:             func(s string) any { return []byte(s) },
	transient:        pgTransient,
	broken:           pgBroken,
	unsent:           pgconn.SafeToRetry,
	wrap:             pgWrap,
	notify:           feedNotify,
	statementTimeout: pgStatementTimeout,
}

// Network faults. A connection whose packets are silently dropped (a
// network partition, a NAT that forgot it, a proxy that stopped
// forwarding) gives no error: a statement waits for an answer that never
// comes, and TCP retransmits for a quarter of an hour. So that a save
// fails within 10 s instead and its connection is replaced:
//
//   - each statement has a deadline on the client's side
//     (pgStatementTimeout; a statement waiting for a store's lock, the
//     lock's own timeout): past it pgx closes the connection, the pool
//     drops it, the error is CodeUnavailable, and the next statement
//     opens another;
//   - TCP keepalives (pgKeepAlive) and TCP_USER_TIMEOUT find a dead peer
//     of an idle connection, and of one whose data is not acknowledged;
//   - the server ends a session idle inside a transaction for longer than
//     pgIdleInTransaction, so that the store lock a vanished daemon held
//     is released for the others.
const (
	pgStatementTimeout  = 8 * time.Second
	pgIdleInTransaction = 15 * time.Second
	pgUserTimeout       = 8 * time.Second
)

var pgKeepAlive = net.KeepAliveConfig{Enable: true, Idle: 5 * time.Second, Interval: 2 * time.Second, Count: 3}

// pgDial opens a connection with keepalives and TCP_USER_TIMEOUT (TCP
// only: a Unix socket has neither).
func pgDial(ctx context.Context, network, addr string) (net.Conn, error) {
	d := net.Dialer{KeepAliveConfig: pgKeepAlive, Control: func(network, _ string, rc syscall.RawConn) error {
		if !strings.HasPrefix(network, "tcp") {
			return nil
		}
		var serr error
		err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, tcpUserTimeout, int(pgUserTimeout.Milliseconds()))
		})
		if err != nil {
			return err
		}
		return serr
	}}
	return d.DialContext(ctx, network, addr)
}

// tcpUserTimeout is Linux's TCP_USER_TIMEOUT socket option.
const tcpUserTimeout = 0x12

// pgState is what a DB on PostgreSQL holds besides its pools.
type pgState struct {
	config   *pgx.ConnConfig
	ctx      context.Context // ends at Close
	listener listener
}

// migrationLock is the advisory lock that makes daemons starting at once
// migrate one after the other.
const migrationLock = 0x6d656d6673 // "memfs"

func (db *DB) openPostgres(dsn string, opts Options) error {
	db.d = postgresDialect
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		// pgx's message quotes no password, but may quote the DSN's
		// syntax error; the DSN itself is shown redacted.
		return errorf(CodeInvalid, "the database URL %s is not a valid PostgreSQL URL or DSN: %v", RedactDSN(dsn), redactErr(err, dsn))
	}
	db.where = pgWhere(cfg)
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	if _, ok := cfg.RuntimeParams["application_name"]; !ok {
		cfg.RuntimeParams["application_name"] = "memfs"
	}
	cfg.RuntimeParams["lock_timeout"] = strconv.FormatInt(opts.BusyTimeout.Milliseconds(), 10)
	if opts.Durability == DurabilityFull {
		cfg.RuntimeParams["synchronous_commit"] = "on"
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	if _, ok := cfg.RuntimeParams["idle_in_transaction_session_timeout"]; !ok {
		cfg.RuntimeParams["idle_in_transaction_session_timeout"] = strconv.FormatInt(pgIdleInTransaction.Milliseconds(), 10)
	}
	cfg.DialFunc = pgDial
	db.pg = &pgState{config: cfg}
	db.pg.ctx, db.stopBackground = context.WithCancel(context.Background())
	sdb := stdlib.OpenDB(*cfg)
	sdb.SetMaxOpenConns(pgWriters + pgReaders)
	sdb.SetMaxIdleConns(pgWriters + pgReaders)
	sdb.SetConnMaxIdleTime(0)
	sdb.SetConnMaxLifetime(0)
	db.w, db.r = sdb, sdb
	db.wp, db.rp = newConnPool(sdb, pgWriters, nil), newConnPool(sdb, pgReaders, nil)
	db.wp.broken, db.rp.broken = pgBroken, pgBroken
	db.lw = stdlib.OpenDB(*cfg)
	db.lw.SetMaxOpenConns(1)
	db.lw.SetMaxIdleConns(1)
	db.lw.SetConnMaxIdleTime(0)
	db.lw.SetConnMaxLifetime(0)
	db.lp = newConnPool(db.lw, 1, pgBroken)
	ctx := context.Background()
	if err := db.retry(ctx, func() error {
		return db.inTx(ctx, db.rp, "", false, func(r *run) error { return r.c.c.PingContext(ctx) })
	}); err != nil {
		return db.wrap("open database", err)
	}
	return db.migrate(ctx)
}

// pgWhere is host:port/database, for messages.
func pgWhere(cfg *pgx.ConnConfig) string {
	host := cfg.Host
	if strings.Contains(host, ":") && !strings.HasPrefix(host, "/") {
		host = "[" + host + "]"
	}
	return fmt.Sprintf("%s:%d/%s", host, cfg.Port, cfg.Database)
}

// oneLine is err's message on one line: pgx reports each connection
// attempt (TLS, then plain) on a line of its own, often the same twice.
func oneLine(err error) string {
	var parts []string
	for _, l := range strings.Split(err.Error(), "\n") {
		if l = strings.TrimSpace(l); l != "" && !slices.Contains(parts, l) {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, " ")
}

// redactErr is err's message without the DSN's password.
func redactErr(err error, dsn string) string {
	msg := err.Error()
	if cfg, perr := pgx.ParseConfig(dsn); perr == nil && cfg.Password != "" {
		msg = strings.ReplaceAll(msg, cfg.Password, "xxxxx")
	}
	return msg
}

func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// pgTransient: a serialization failure or a deadlock the server broke by
// aborting this transaction.
func pgTransient(err error) bool {
	switch pgCode(err) {
	case "40001", "40P01":
		return true
	}
	return false
}

// pgBroken: an error the server did not report (a dropped connection, a
// timeout, a cancelled context mid-statement) leaves the connection in an
// unknown state, and one it reported as it closed the connection (a
// shutdown, a crash of another backend) leaves none; it is closed rather
// than reused.
func pgBroken(err error) bool {
	var e *Error
	if errors.As(err, &e) || errors.Is(err, sql.ErrNoRows) {
		return false
	}
	return pgCode(err) == "" || unreachable(err)
}

// unreachable reports errors that mean the server could not be reached or
// the connection was lost.
func unreachable(err error) bool {
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) || pgconn.Timeout(err) ||
		errors.Is(err, net.ErrClosed) || strings.Contains(err.Error(), "conn closed") ||
		strings.HasPrefix(pgCode(err), "08") || pgCode(err) == "57P01" || pgCode(err) == "57P03"
}

func pgWrap(db *DB, what string, err error) error {
	switch code := pgCode(err); {
	case unreachable(err):
		advice := "check that the server is running and reachable; nothing was changed unless the commit reached it, and memfs reconnects by itself"
		if what == "open database" {
			advice = "check that the server is running and reachable, and that --db or MEMFS_DB names it"
		}
		return &Error{Code: CodeUnavailable, Message: fmt.Sprintf("%s: cannot reach the database at %s: %s: %s",
			what, db.where, oneLine(err), advice)}
	case code == "22021" || code == "22P05":
		return errorf(CodeInvalid, "%s: a text holds a character PostgreSQL cannot store (NUL): remove it (%v)", what, err)
	case code == "55P03":
		return &Error{Code: CodeInternal, Message: fmt.Sprintf("%s: another writer of this store held its lock too long: retry in a moment (%v)", what, err)}
	}
	return fmt.Errorf("%s: %w", what, err)
}
