package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os/signal"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs/httpapi"
	"github.com/memfs/memfs/memtool"
	"github.com/memfs/memfs/versions"
	"github.com/memfs/memfs/webui"
)

func serveCommand() *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "serve the memory-store HTTP API, so the official SDKs work against this database (SIGINT/SIGTERM stop it gracefully)",
		Description: "Every request needs an API key (memfs apikey create), in x-api-key or as Authorization: Bearer.\n" +
			"Versions written through the API are attributed to the key's api_actor.",
		ArgsUsage: " ",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "listen", Value: "127.0.0.1:8080", Usage: "listen on `ADDR` (host:port; port 0 picks a free one)"},
			&cli.StringFlag{Name: "tls-cert", Usage: "serve HTTPS with the certificate in `FILE` (PEM; with --tls-key)"},
			&cli.StringFlag{Name: "tls-key", Usage: "the TLS certificate's private key in `FILE` (PEM)"},
			&cli.IntFlag{Name: "max-in-flight", Value: 64, Usage: "run at most `N` requests at once; more wait briefly, then get 503"},
			&cli.BoolFlag{Name: "ui", Value: true, Usage: "serve the web page at /ui/ (sign in with an API key); --ui=false turns it off"},
			&cli.DurationFlag{Name: "ui-idle", Value: 30 * time.Minute, Usage: "end a web page sign-in unused for `DURATION`"},
		},
		Action: serve,
	}
}

func serve(c *cli.Context) error {
	if err := wantArgs(c, 0); err != nil {
		return err
	}
	cert, key := c.String("tls-cert"), c.String("tls-key")
	if (cert == "") != (key == "") {
		return usageFor(c, "give --tls-cert and --tls-key together")
	}
	if c.Duration("ui-idle") <= 0 {
		return usageFor(c, "--ui-idle must be a positive duration, such as 30m")
	}
	if _, port, err := net.SplitHostPort(c.String("listen")); err != nil || port == "" {
		return usageFor(c, "--listen %q is not HOST:PORT, such as 127.0.0.1:8080 or :8080", c.String("listen"))
	}
	if c.Int("max-in-flight") < 1 {
		return usageFor(c, "--max-in-flight must be at least 1")
	}
	// Catch signals before anything can be in flight.
	sctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	db, err := openDB(c)
	if err != nil {
		return err
	}
	defer db.Close()
	if keys, err := db.ListAPIKeys(sctx); err != nil {
		return err
	} else if !hasActiveKey(keys) {
		slog.Warn("this database holds no API key that is not revoked: every request will be refused with 401 until one is made; make one with `memfs apikey create --name NAME` (with the same --db)")
	}
	ln, err := listen("--listen", c.String("listen"))
	if err != nil {
		return err
	}
	scheme := "http"
	if cert != "" {
		scheme = "https"
	} else if !loopback(ln.Addr()) {
		slog.Warn("serving without TLS on an address other hosts can reach: API keys and memories cross the network in clear text; give --tls-cert and --tls-key, or listen on 127.0.0.1",
			"addr", ln.Addr().String())
	}
	srv := httpapi.New(db, httpapi.Options{MaxInFlight: c.Int("max-in-flight"), Logger: slog.Default()})
	srv.Handle("POST /v1/memory_stores/{id}/memory_tool", memtool.HTTPHandler(db, httpapi.Actor))
	if c.Bool("ui") {
		srv.HandlePrefix("/ui/", webui.New(db, webui.Options{IdleTimeout: c.Duration("ui-idle"), Logger: slog.Default()}))
	}
	slog.Info("serving the memory-store API", "addr", ln.Addr().String(), "url", scheme+"://"+ln.Addr().String())
	if c.Bool("ui") {
		slog.Info("serving the web page", "ui", scheme+"://"+ln.Addr().String()+"/ui/")
	}
	if err := srv.Serve(sctx, ln, cert, key); err != nil {
		return err
	}
	slog.Info("stopped serving")
	return nil
}

// loopback reports whether only this host can reach addr.
func loopback(addr net.Addr) bool {
	ta, ok := addr.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}

func hasActiveKey(keys []versions.APIKey) bool {
	for _, k := range keys {
		if k.RevokedAt == nil {
			return true
		}
	}
	return false
}

// listen opens addr for the server of flag. A taken address is a conflict
// (exit 4), as a mountpoint already mounted is; a port this user may not
// bind is read-only (exit 6).
func listen(flag, addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return nil, &versions.Error{Code: versions.CodeConflict, Message: fmt.Sprintf(
			"cannot listen on %s: another server is using that address; stop it, or choose another %s", addr, flag)}
	case errors.Is(err, syscall.EACCES):
		return nil, &versions.Error{Code: versions.CodeReadOnly, Message: fmt.Sprintf(
			"cannot listen on %s: this user may not use that port (below 1024 needs root or CAP_NET_BIND_SERVICE); choose a port from 1024 up", addr)}
	case err != nil:
		return nil, fmt.Errorf("%s %s: %w", flag, addr, err)
	}
	return ln, nil
}
