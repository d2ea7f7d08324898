// Package pgtest gives tests a fresh PostgreSQL database of their own on
// the server MEMFS_TEST_POSTGRES names (a URL or keyword DSN of a role
// that may create databases), dropped when the test ends.
package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver
)

// Env names the server tests run PostgreSQL tests against.
const Env = "MEMFS_TEST_POSTGRES"

// Server is the DSN of the test server, or "" when none is configured.
func Server() string { return os.Getenv(Env) }

// Database creates a uniquely named database on the test server and
// returns its DSN; the database is dropped (its connections closed) at
// the end of the test. It skips the test when no server is configured.
func Database(t testing.TB) string {
	t.Helper()
	server := Server()
	if server == "" {
		t.Skipf("no PostgreSQL server: set %s to run this test on one (scripts/pg start prints a URL)", Env)
	}
	b := make([]byte, 6)
	rand.Read(b)
	name := "memfs_test_" + hex.EncodeToString(b)
	admin, err := sql.Open("pgx", server)
	if err != nil {
		t.Fatalf("%s=%s: %v", Env, server, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		admin.Close()
		t.Fatalf("create the test database on %s: %v", Env, err)
	}
	t.Cleanup(func() {
		defer admin.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop the test database %s: %v", name, err)
		}
	})
	return WithDatabase(server, name)
}

// WithDatabase is dsn naming database name instead of its own.
func WithDatabase(dsn, name string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		if u, err := url.Parse(dsn); err == nil {
			u.Path = "/" + name
			q := u.Query()
			if q.Has("dbname") {
				q.Set("dbname", name)
				u.RawQuery = q.Encode()
			}
			return u.String()
		}
	}
	// A keyword DSN: the last setting of a keyword wins.
	return dsn + " dbname=" + name
}
