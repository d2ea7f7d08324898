package httpapi_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/memfs/memfs/httpapi"
	"github.com/memfs/memfs/versions"
)

// Every code the engine returns for a caller's mistake maps to a 4xx; only
// what the engine could not classify is a 500.
func TestEveryCodeHasAStatus(t *testing.T) {
	for c := versions.CodeInvalid; c <= versions.CodeStale; c++ {
		status, body := httpapi.NewBody(&versions.Error{Code: c, Message: "m"})
		if status < 400 || status >= 500 {
			t.Errorf("code %d: status %d, want a 4xx", c, status)
		}
		if body.Type != "error" || body.Error.Type == httpapi.TypeAPI || body.Error.Message == "" {
			t.Errorf("code %d: body %+v", c, body)
		}
	}
	status, body := httpapi.NewBody(errors.New("disk on fire"))
	if status != http.StatusInternalServerError || body.Error.Type != httpapi.TypeAPI {
		t.Errorf("an unclassified error: %d %+v", status, body)
	}
	if body.Error.Message == "disk on fire" {
		t.Error("an internal error's text reached the client")
	}
}

// An internal error is logged to the server's logger, with the request's id
// and the error the client is not shown.
func TestInternalErrorLoggedToServerLogger(t *testing.T) {
	db, err := versions.Open(filepath.Join(t.TempDir(), "memfs.db"), versions.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, key, err := db.CreateAPIKey(context.Background(), "test")
	if err != nil {
		t.Fatal(err)
	}
	logged := &lockedBuffer{}
	srv := httpapi.New(db, httpapi.Options{Logger: slog.New(slog.NewTextHandler(logged, nil))})
	srv.Handle("GET /v1/boom", func(w http.ResponseWriter, r *http.Request) error { return errors.New("disk on fire") })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln, "", "") }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	req, _ := http.NewRequest("GET", "http://"+ln.Addr().String()+"/v1/boom", nil)
	req.Header.Set("x-api-key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusInternalServerError {
		t.Fatalf("GET /v1/boom: %s, want 500", resp.Status)
	}
	id := resp.Header.Get("request-id")
	if log := logged.String(); !strings.Contains(log, "disk on fire") || id == "" || !strings.Contains(log, id) {
		t.Errorf("the server's logger did not get the error with request id %q:\n%s", id, log)
	}
}

// lockedBuffer is a log written by the server's goroutines and read by the
// test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
