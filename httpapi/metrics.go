package httpapi

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/memfs/memfs/versions"
)

// Metrics are the server's Prometheus metrics, in a registry of its own so
// that several servers in one process do not collide.
type Metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	saves    *prometheus.CounterVec
	refusals *prometheus.CounterVec
}

func newMetrics() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "memfs_http_requests_total",
			Help: "HTTP requests answered, by route pattern and status code.",
		}, []string{"route", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "memfs_http_request_duration_seconds",
			Help:    "Time from a request's routing to its answer, by route pattern.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"route"}),
		saves: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "memfs_saves_total",
			Help: "Memory writes through the API that succeeded, by kind (create, update, delete).",
		}, []string{"kind"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "memfs_refusals_total",
			Help: "Requests refused, by reason (the engine's error code, or the HTTP layer's own reason).",
		}, []string{"reason"}),
	}
	m.reg.MustRegister(m.requests, m.latency, m.saves, m.refusals,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *Metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Registry is where the metrics live, for a caller that adds its own.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

func (m *Metrics) observe(route string, status int, d time.Duration) {
	if status == 0 {
		status = http.StatusOK
	}
	m.requests.WithLabelValues(route, strconv.Itoa(status)).Inc()
	if d > 0 {
		m.latency.WithLabelValues(route).Observe(d.Seconds())
	}
}

func (m *Metrics) saved(kind string) { m.saves.WithLabelValues(kind).Inc() }

// reasons names each engine code for the refusal metric.
var reasons = map[versions.Code]string{
	versions.CodeInvalid:            "invalid",
	versions.CodeNotFound:           "not_found",
	versions.CodePathConflict:       "path_conflict",
	versions.CodePreconditionFailed: "precondition_failed",
	versions.CodeConflict:           "conflict",
	versions.CodeReadOnly:           "read_only",
	versions.CodeStoreFull:          "store_full",
	versions.CodeOverQuota:          "over_quota",
	versions.CodeCredential:         "credential",
	versions.CodeTooLarge:           "too_large",
	versions.CodeNameTooLong:        "name_too_long",
	versions.CodeNotUTF8:            "not_utf8",
	versions.CodeNotEmpty:           "not_empty",
	versions.CodeIsDir:              "is_dir",
	versions.CodeNotDir:             "not_dir",
	versions.CodeStale:              "stale",
}

func (m *Metrics) refused(err error) {
	reason := "internal"
	var ae *apiError
	var e *versions.Error
	switch {
	case errors.As(err, &ae):
		reason = ae.typ
	case errors.As(err, &e):
		if r, ok := reasons[e.Code]; ok {
			reason = r
		}
	}
	m.refusals.WithLabelValues(reason).Inc()
}

// Metrics are the server's metrics.
func (s *Server) Metrics() *Metrics { return s.metrics }
