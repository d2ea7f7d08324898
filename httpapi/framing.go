package httpapi

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// A request that carries both Content-Length and Transfer-Encoding is
// framed two ways: net/http follows Transfer-Encoding and drops
// Content-Length before a handler sees the request, while a proxy in front
// may have followed Content-Length, and the two then disagree on where the
// next request starts (request smuggling). Such a request is refused with
// 400 and its connection closed. Because net/http hides the header, the
// connection itself watches the request heads go by: framingConn follows
// HTTP/1.1 framing (heads, Content-Length bodies, chunked bodies) and
// records which requests on it were framed both ways.

// framingConn is a server connection that notes doubly framed requests.
type framingConn struct {
	net.Conn

	mu     sync.Mutex
	f      framer
	served int // requests handed to a handler so far
}

func (c *framingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.mu.Lock()
		c.f.feed(b[:n])
		c.mu.Unlock()
	}
	return n, err
}

// nextDoublyFramed tells whether the next request on c, the one about to be
// served, was framed both ways. Requests on one HTTP/1.1 connection are
// served one after another, in the order their heads arrived.
func (c *framingConn) nextDoublyFramed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := c.served
	c.served++
	return c.f.firstBad >= 0 && i >= c.f.firstBad
}

// framingListener wraps each accepted connection in a framingConn.
type framingListener struct{ net.Listener }

func (l framingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	fc := &framingConn{Conn: c}
	fc.f.firstBad = -1
	return fc, nil
}

type connKey struct{}

// withConn is the http.Server's ConnContext: it gives each request the
// connection it came on.
func withConn(ctx context.Context, c net.Conn) context.Context {
	if fc, ok := c.(*framingConn); ok {
		return context.WithValue(ctx, connKey{}, fc)
	}
	return ctx
}

// checkFraming refuses a request framed both ways; the caller closes the
// connection after the answer.
func checkFraming(r *http.Request) error {
	fc, _ := r.Context().Value(connKey{}).(*framingConn)
	if fc == nil || r.ProtoMajor != 1 || !fc.nextDoublyFramed() {
		return nil
	}
	return invalid("the request has both Content-Length and Transfer-Encoding: send one of them (the connection is closed)")
}

// framer follows the framing of the requests fed to it, byte by byte as
// they arrive. It keeps at most one line of a head (bounded by the
// server's header limit); a stream it cannot follow (a chunk size that is
// not one) stops it, and net/http refuses that request itself.
type framer struct {
	state    int
	line     []byte
	clen     int64 // Content-Length seen in the current head, -1 none
	te       bool  // Transfer-Encoding seen in the current head
	chunked  bool
	inHead   bool  // a request line has been read
	left     int64 // body or chunk bytes still to skip
	heads    int   // request heads completed
	firstBad int   // index of the first head framed both ways, -1 none
}

const (
	stHead = iota
	stBody
	stChunkSize
	stChunkData
	stChunkCRLF
	stTrailer
	stLost
)

const maxFramingLine = 128 << 10

func (f *framer) feed(b []byte) {
	for len(b) > 0 && f.state != stLost {
		switch f.state {
		case stBody, stChunkData:
			n := int64(len(b))
			if n > f.left {
				n = f.left
			}
			f.left -= n
			b = b[n:]
			if f.left == 0 {
				if f.state == stBody {
					f.state = stHead
				} else {
					f.state = stChunkCRLF
				}
			}
		case stChunkCRLF:
			// The CRLF after a chunk's data; a bare LF is taken too.
			if b[0] == '\n' {
				f.state = stChunkSize
			}
			b = b[1:]
		default:
			i := bytes.IndexByte(b, '\n')
			if i < 0 {
				f.line = append(f.line, b...)
				if len(f.line) > maxFramingLine {
					f.state = stLost
				}
				return
			}
			f.line = append(f.line, b[:i]...)
			b = b[i+1:]
			line := string(bytes.TrimSuffix(f.line, []byte("\r")))
			f.line = f.line[:0]
			f.endLine(line)
		}
	}
}

func (f *framer) endLine(line string) {
	switch f.state {
	case stHead:
		if !f.inHead {
			if line == "" {
				return // blank lines before a request line are ignored
			}
			f.inHead, f.clen, f.te, f.chunked = true, -1, false, false
			return
		}
		if line != "" {
			name, value, ok := strings.Cut(line, ":")
			if !ok {
				return
			}
			value = strings.TrimSpace(value)
			switch strings.ToLower(strings.TrimSpace(name)) {
			case "content-length":
				if n, err := strconv.ParseInt(value, 10, 64); err == nil && n >= 0 {
					f.clen = n
				} else {
					f.clen = 0
				}
			case "transfer-encoding":
				f.te = true
				f.chunked = f.chunked || strings.EqualFold(value, "chunked")
			}
			return
		}
		// The end of a head.
		if f.te && f.clen >= 0 && f.firstBad < 0 {
			f.firstBad = f.heads
		}
		f.heads++
		f.inHead = false
		switch {
		case f.chunked:
			f.state = stChunkSize
		case f.te:
			f.state = stLost // net/http refuses any other coding
		case f.clen > 0:
			f.state, f.left = stBody, f.clen
		}
	case stChunkSize:
		size, _, _ := strings.Cut(line, ";")
		n, err := strconv.ParseInt(strings.TrimSpace(size), 16, 64)
		switch {
		case err != nil || n < 0:
			f.state = stLost
		case n == 0:
			f.state = stTrailer
		default:
			f.state, f.left = stChunkData, n
		}
	case stTrailer:
		if line == "" {
			f.state = stHead
		}
	}
}
