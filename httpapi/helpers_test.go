package httpapi_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/memfs/memfs/httpapi"
	"github.com/memfs/memfs/versions"
	"github.com/memfs/memfs/versions/pgtest"
)

var ctx = context.Background()

// env is a server on a real listener over a real database file, with a key
// and the official SDK pointed at it.
type env struct {
	db     *versions.DB
	srv    *httpapi.Server
	url    string
	key    string
	keyID  string
	client anthropic.Client
}

func newEnv(t *testing.T, o httpapi.Options) *env {
	t.Helper()
	// The backend the suite runs on: PostgreSQL when MEMFS_TEST_POSTGRES
	// names a server (scripts/test runs the suite on both).
	where := filepath.Join(t.TempDir(), "memfs.db")
	if pgtest.Server() != "" {
		where = pgtest.Database(t)
	}
	db, err := versions.Open(where, versions.Options{})
	if err != nil {
		t.Fatal(err)
	}
	k, secret, err := db.CreateAPIKey(ctx, "test")
	if err != nil {
		t.Fatal(err)
	}
	srv := httpapi.New(db, o)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sctx, ln, "", "") }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		db.Close()
	})
	e := &env{db: db, srv: srv, url: "http://" + ln.Addr().String(), key: secret, keyID: k.ID}
	e.client = anthropic.NewClient(option.WithBaseURL(e.url), option.WithAPIKey(secret))
	return e
}

// apiError is the SDK's error of a failed call, with the status and type
// the test wants.
func wantAPIError(t *testing.T, err error, status int, typ string) *anthropic.Error {
	t.Helper()
	var ae *anthropic.Error
	if !errors.As(err, &ae) {
		t.Fatalf("got %v, want an API error %d %s", err, status, typ)
	}
	if ae.StatusCode != status || string(ae.Type()) != typ {
		t.Fatalf("got %d %s (%s), want %d %s", ae.StatusCode, ae.Type(), ae.Message, status, typ)
	}
	if ae.Message == "" || ae.RequestID == "" {
		t.Errorf("error without a message or request id: %+v", ae)
	}
	return ae
}

func optBase(e *env) option.RequestOption    { return option.WithBaseURL(e.url) }
func optKey(k string) option.RequestOption   { return option.WithAPIKey(k) }
func optToken(k string) option.RequestOption { return option.WithAuthToken(k) }

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
