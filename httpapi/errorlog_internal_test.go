package httpapi

import (
	"bytes"
	"fmt"
	"log"
	"log/slog"
	"strings"
	"testing"
)

// net/http's error log passes 10 lines per window and counts the rest.
func TestConnErrorLogBounded(t *testing.T) {
	var buf bytes.Buffer
	l := log.New(&connErrorLog{log: slog.New(slog.NewTextHandler(&buf, nil))}, "", 0)
	for i := range 1000 {
		l.Printf("http: TLS handshake error from 127.0.0.1:%d: EOF", i)
	}
	if n := strings.Count(buf.String(), "\n"); n != connErrorBurst {
		t.Fatalf("1000 errors logged %d lines, want %d:\n%s", n, connErrorBurst, buf.String())
	}
	lg := &connErrorLog{log: slog.New(slog.NewTextHandler(&buf, nil))}
	lg.dropped = 990 // as if a window had ended with these uncounted
	buf.Reset()
	fmt.Fprintln(lg, "next")
	if !strings.Contains(buf.String(), "990 more connection errors were not logged") || !strings.Contains(buf.String(), "next") {
		t.Errorf("a new window does not report the dropped count:\n%s", buf.String())
	}
}
