// Package httpapi serves the hosted memory-store HTTP API over the store
// engine, so that the official SDKs work against memfs with only their base
// URL changed. Handlers are thin: decode, call one engine method, encode;
// every error goes through Error.
package httpapi

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/memfs/memfs/versions"
)

// Authenticator checks an API key and returns the key it is: its id (the
// api_key_id of what the request writes) and its scope. A key that is
// unknown or revoked is an error; an error that is not a *versions.Error
// with CodeNotFound or CodeInvalid is a failure of the check itself (the
// database), not a 401.
type Authenticator interface {
	AuthenticateAPIKey(ctx context.Context, key string) (*versions.APIKey, error)
}

// Options configure a Server. Zero values mean the defaults noted.
type Options struct {
	// Auth checks every request's key; nil means the DB's own keys.
	Auth Authenticator
	// MaxInFlight is how many requests run at once (default 64); up to
	// MaxQueued more (default 1024) wait at most QueueWait (default 2s) for
	// a turn before they are refused with 503.
	MaxInFlight int
	MaxQueued   int
	QueueWait   time.Duration
	// MaxPerKey is how many requests one API key may have running or
	// waiting (default 512); beyond it the key's requests get 429.
	MaxPerKey int
	// Timeouts of the connection (defaults: 10s for the headers, 60s for
	// the whole request, 60s to write the response, 120s idle).
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// ShutdownTimeout bounds how long Serve waits for requests in flight
	// once its context is cancelled (default 30s).
	ShutdownTimeout time.Duration
	Logger          *slog.Logger
}

func (o *Options) defaults() {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	defDur := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.MaxInFlight, 64)
	def(&o.MaxQueued, 1024)
	def(&o.MaxPerKey, 512)
	defDur(&o.QueueWait, 2*time.Second)
	defDur(&o.ReadHeaderTimeout, 10*time.Second)
	defDur(&o.ReadTimeout, 60*time.Second)
	defDur(&o.WriteTimeout, 60*time.Second)
	defDur(&o.IdleTimeout, 120*time.Second)
	defDur(&o.ShutdownTimeout, 30*time.Second)
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

// Server is the API over one database.
type Server struct {
	db      *versions.DB
	o       Options
	mux     *http.ServeMux
	limit   *limiter
	metrics *Metrics
	// prefixes are handlers that own every path below a prefix and do
	// their own authentication (the web UI's sign-in cookie).
	prefixes []prefixHandler
}

type prefixHandler struct {
	prefix string
	h      http.Handler
}

// New makes the API's handler over db with every route of the memory-store
// API registered; Handle adds more.
func New(db *versions.DB, o Options) *Server {
	o.defaults()
	if o.Auth == nil {
		o.Auth = db
	}
	s := &Server{db: db, o: o, mux: http.NewServeMux(), limit: newLimiter(o), metrics: newMetrics()}
	s.routes()
	s.timeTravelRoutes()
	s.mux.Handle("GET /metrics", s.metrics.handler())
	return s
}

// HandlerFunc is a route's handler: what it returns is answered as the
// API's error envelope (writeError).
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// Handle registers h for pattern (net/http's "METHOD /path/{wildcard}"),
// behind authentication, the concurrency limit and the metrics. Register
// routes before serving.
func (s *Server) Handle(pattern string, h HandlerFunc) {
	s.mux.Handle(pattern, s.wrap(pattern, h))
}

// HandlePrefix gives h every request whose path is prefix (which ends in
// "/") or lies below it, and the path without its trailing "/". h does its
// own authentication: no API key is asked for. Register before serving.
func (s *Server) HandlePrefix(prefix string, h http.Handler) {
	s.prefixes = append(s.prefixes, prefixHandler{prefix, h})
}

// ServeHTTP answers one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("request-id", newRequestID())
	if err := checkFraming(r); err != nil {
		w.Header().Set("Connection", "close")
		s.metrics.observe("bad_framing", http.StatusBadRequest, 0)
		s.writeError(w, r, err)
		return
	}
	for _, p := range s.prefixes {
		if strings.HasPrefix(r.URL.Path, p.prefix) || r.URL.Path == strings.TrimSuffix(p.prefix, "/") {
			p.h.ServeHTTP(w, r)
			return
		}
	}
	if err := checkRawPath(r); err != nil {
		s.metrics.observe("invalid_path", http.StatusBadRequest, 0)
		s.writeError(w, r, err)
		return
	}
	if _, pattern := s.mux.Handler(r); pattern == "" {
		// No route: answer in the API's envelope, not net/http's text,
		// and never with the redirect ServeMux gives a path it would
		// clean.
		s.metrics.observe("unmatched", http.StatusNotFound, 0)
		s.writeError(w, r, noRoute(s.mux, r))
		return
	}
	// Through the mux, which sets the path's wildcards.
	s.mux.ServeHTTP(w, r)
}

// Serve serves the API on ln (with TLS when certFile is set) until ctx is
// cancelled, then shuts down gracefully: it stops accepting, lets requests
// in flight finish (at most ShutdownTimeout) and returns.
func (s *Server) Serve(ctx context.Context, ln net.Listener, certFile, keyFile string) error {
	hs := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: s.o.ReadHeaderTimeout,
		ReadTimeout:       s.o.ReadTimeout,
		WriteTimeout:      s.o.WriteTimeout,
		IdleTimeout:       s.o.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          log.New(&connErrorLog{log: s.o.Logger}, "", 0),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
		ConnContext:       withConn,
		// OPTIONS * comes to the handler too, so that every request on a
		// connection passes checkFraming in order.
		DisableGeneralOptionsHandler: true,
	}
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return fmt.Errorf("load TLS certificate %s and key %s: %w", certFile, keyFile, err)
		}
		hs.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		ln = tls.NewListener(ln, hs.TLSConfig)
	}
	ln = framingListener{ln}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	s.o.Logger.Info("shutting down: finishing requests in flight", "timeout", s.o.ShutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), s.o.ShutdownTimeout)
	defer cancel()
	err := hs.Shutdown(sctx)
	if serr := <-done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	if err != nil {
		return fmt.Errorf("shut down the HTTP server: %w", err)
	}
	return nil
}
