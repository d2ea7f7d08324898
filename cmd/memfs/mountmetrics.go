package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/versions"
)

// mountMetrics is a mount daemon's fusefs.Observer, served in the
// Prometheus text format by memfs mount --metrics-addr.
type mountMetrics struct {
	saves    prometheus.Counter
	refusals *prometheus.CounterVec
	guard    *prometheus.CounterVec
	lag      prometheus.Histogram
	reg      *prometheus.Registry
}

func newMountMetrics() *mountMetrics {
	m := &mountMetrics{
		reg: prometheus.NewRegistry(),
		saves: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "memfs_mount_saves_total",
			Help: "Saves through the mount that wrote a version.",
		}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "memfs_mount_refusals_total",
			Help: "Operations the mount refused, by errno (ESTALE: a strict mount's conflict).",
		}, []string{"errno"}),
		guard: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "memfs_guard_credentials_total",
			Help: "Credentials the guard found in writes through this daemon, by rule and action (refused, or warned: saved on a store whose guard warns).",
		}, []string{"rule", "action"}),
		lag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "memfs_mount_feed_lag_seconds",
			Help:    "Time from another writer's commit to the mount applying it.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}),
	}
	m.reg.MustRegister(m.saves, m.refusals, m.guard, m.lag, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// countLeases serves what db counts of its mount leases and of the
// recovery of lapsed ones (versions.LeaseStats).
func (m *mountMetrics) countLeases(db *versions.DB) {
	stat := func(f func(versions.LeaseStats) int64) func() float64 {
		return func() float64 { return float64(f(db.LeaseStats())) }
	}
	m.reg.MustRegister(
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "memfs_mount_lease_lapses_total",
			Help: "Times the mount found its lease lapsed (it was stopped or cut off from the database for longer than the lease) and took a new one; others published its temporary files.",
		}, stat(func(s versions.LeaseStats) int64 { return s.Lapses })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "memfs_recovery_published_total",
			Help: "Temporary files of lapsed mounts (anyone's) this daemon's recovery published.",
		}, stat(func(s versions.LeaseStats) int64 { return s.Recovered })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "memfs_recovery_unpublishable_total",
			Help: "Times this daemon's recovery could not publish a lapsed mount's file (its store archived or over its history quota) and set it aside; memfs pending list shows them.",
		}, stat(func(s versions.LeaseStats) int64 { return s.Unpublishable })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "memfs_mount_lease_renewal_gap_max_seconds",
			Help: "The longest time between two renewals of the mount's lease: it lapses past the lease's length.",
		}, func() float64 { return db.LeaseStats().MaxRenewalGap.Seconds() }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "memfs_recovery_backlog",
			Help: "Files of lapsed mounts still pending after this daemon's last recovery sweep (unpublishable ones included).",
		}, stat(func(s versions.LeaseStats) int64 { return s.Backlog })),
	)
}

// countWrites serves where db's writes spent their time
// (versions.WriteTimes), so that an operator sees whether saves wait for
// the database or for the mount.
func (m *mountMetrics) countWrites(db *versions.DB) {
	for _, c := range []struct {
		name, help string
		value      func() float64
	}{
		{"memfs_engine_write_seconds_total", "Time the daemon's writes to the database took, from call to return (waiting for the writer included).",
			func() float64 { return db.WriteTimes().Call.Seconds() }},
		{"memfs_engine_transaction_seconds_total", "Time the daemon's write transactions took on their connection, BEGIN to the end of COMMIT.",
			func() float64 { return db.WriteTimes().Transaction.Seconds() }},
		{"memfs_engine_commit_seconds_total", "Time the daemon's COMMITs took.",
			func() float64 { return db.WriteTimes().Commit.Seconds() }},
		{"memfs_engine_commits_total", "Write transactions the daemon committed.",
			func() float64 { return float64(db.Writes()) }},
	} {
		m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: c.name, Help: c.help}, c.value))
	}
}

func (m *mountMetrics) Saved() { m.saves.Inc() }

func (m *mountMetrics) Refused(errno syscall.Errno) {
	name := unix.ErrnoName(errno)
	if name == "" {
		name = fmt.Sprint(int(errno))
	}
	m.refusals.WithLabelValues(name).Inc()
}

// Guarded counts a credential the guard found in a write.
func (m *mountMetrics) Guarded(e versions.GuardEvent) {
	action := "warned"
	if e.Refused {
		action = "refused"
	}
	m.guard.WithLabelValues(e.Rule, action).Inc()
}

func (m *mountMetrics) FeedLag(d time.Duration) { m.lag.Observe(d.Seconds()) }

// serve answers GET /metrics on addr until the returned stop is called.
func (m *mountMetrics) serve(addr string) (stop func(), err error) {
	ln, err := listen("--metrics-addr", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			slog.Error("metrics server failed", "addr", addr, "err", err)
		}
	}()
	slog.Info("serving mount metrics", "url", "http://"+ln.Addr().String()+"/metrics")
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	}, nil
}
