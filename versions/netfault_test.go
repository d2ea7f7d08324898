package versions_test

import (
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memfs/memfs/versions"
	"github.com/memfs/memfs/versions/pgtest"
)

// tcpProxy bridges a local TCP port to the test server's Unix socket. Its
// blackhole makes every connection open stop forwarding without closing,
// as a network that silently drops packets does: bytes are read and
// dropped, nothing is answered, nothing is closed. Connections opened
// after resume forward again; those blackholed stay silent.
type tcpProxy struct {
	ln     net.Listener
	socket string
	mu     sync.Mutex
	open   []*atomic.Bool // each connection's "silent" flag
	silent atomic.Bool    // new connections start silent
}

func startProxy(t *testing.T, socket string) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	ok(t, err)
	p := &tcpProxy{ln: ln, socket: socket}
	var wg sync.WaitGroup
	var conns []net.Conn
	var connsMu sync.Mutex
	t.Cleanup(func() {
		ln.Close()
		connsMu.Lock()
		for _, c := range conns {
			c.Close()
		}
		connsMu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("unix", socket)
			if err != nil {
				c.Close()
				continue
			}
			connsMu.Lock()
			conns = append(conns, c, s)
			connsMu.Unlock()
			flag := new(atomic.Bool)
			flag.Store(p.silent.Load())
			p.mu.Lock()
			p.open = append(p.open, flag)
			p.mu.Unlock()
			pipe := func(dst, src net.Conn) {
				buf := make([]byte, 32<<10)
				for {
					n, err := src.Read(buf)
					if n > 0 && !flag.Load() {
						if _, werr := dst.Write(buf[:n]); werr != nil {
							return
						}
					}
					if err != nil {
						if !errors.Is(err, io.EOF) || !flag.Load() {
							dst.Close()
						}
						return
					}
				}
			}
			wg.Go(func() { pipe(s, c) })
			wg.Go(func() { pipe(c, s) })
		}
	})
	return p
}

func (p *tcpProxy) blackhole() {
	p.silent.Store(true)
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, f := range p.open {
		f.Store(true)
	}
}

func (p *tcpProxy) resume() { p.silent.Store(false) }

// A save over a connection that went silent fails within 10 s with
// CodeUnavailable, and the next one, once the network forwards again,
// succeeds on a new connection.
func TestPostgresSilentConnection(t *testing.T) {
	dsn := pgtest.Database(t)
	cfg, err := pgx.ParseConfig(dsn)
	ok(t, err)
	if len(cfg.Host) == 0 || cfg.Host[0] != '/' {
		t.Skipf("the test server is reached at %s, not through a Unix socket", cfg.Host)
	}
	p := startProxy(t, filepath.Join(cfg.Host, ".s.PGSQL."+strconv.Itoa(int(cfg.Port))))
	_, port, _ := net.SplitHostPort(p.ln.Addr().String())
	tcp := fmt.Sprintf("postgres://%s@127.0.0.1:%s/%s?sslmode=disable", cfg.User, port, cfg.Database)
	db, err := versions.Open(tcp, versions.Options{})
	ok(t, err)
	t.Cleanup(func() { db.Close() })
	s := newStore(t, db, versions.StoreParams{})
	m := create(t, db, s.ID, "/a", "one")

	p.blackhole()
	start := time.Now()
	c := "two"
	_, err = db.UpdateMemory(ctx, s.ID, m.ID, versions.MemoryUpdate{Content: &c}, me)
	took := time.Since(start)
	t.Logf("the save over the silent connection failed after %v: %v", took, err)
	if versions.ErrorCode(err) != versions.CodeUnavailable {
		t.Fatalf("save over a silent connection: %v, want CodeUnavailable", err)
	}
	if took > 10*time.Second {
		t.Fatalf("the save took %v to fail, more than 10 s", took)
	}

	p.resume()
	c = "three"
	got, err := db.UpdateMemory(ctx, s.ID, m.ID, versions.MemoryUpdate{Content: &c}, me)
	ok(t, err)
	if *got.Content != "three" {
		t.Fatalf("after the network came back: %+v", got)
	}
}
