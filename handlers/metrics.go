package handlers

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/sidecarlab/sidecarlab/engine"
)

// metrics are the server's Prometheus metrics, on a registry of its own (nothing global).
type metrics struct {
	reg         *prometheus.Registry
	requests    *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	storeErrors prometheus.Counter
}

// statser is the part of the engine that reports counters.
type statser interface{ Stats() engine.Stats }

func newMetrics(eng func() Engine, links LinkStore) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sidecarlab_http_requests_total",
			Help: "HTTP requests by route and status code."}, []string{"route", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "sidecarlab_http_request_duration_seconds",
			Help: "HTTP request latency by route.", Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}}, []string{"route"}),
		storeErrors: prometheus.NewCounter(prometheus.CounterOpts{Name: "sidecarlab_store_errors_total",
			Help: "Errors from the shared-link store."}),
	}
	stat := func(f func(engine.Stats) float64) func() float64 {
		return func() float64 {
			if s, ok := eng().(statser); ok {
				return f(s.Stats())
			}
			return 0
		}
	}
	m.reg.MustRegister(m.requests, m.duration, m.storeErrors,
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "sidecarlab_injections_total", Help: "Documents run through Istio's injector."},
			stat(func(s engine.Stats) float64 { return float64(s.Injections) })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "sidecarlab_timeline_cache_hits_total", Help: "Timeline rows served from the memo."},
			stat(func(s engine.Stats) float64 { return float64(s.StepHits) })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "sidecarlab_timeline_cache_misses_total", Help: "Timeline rows computed."},
			stat(func(s engine.Stats) float64 { return float64(s.StepMisses) })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sidecarlab_installs_cached", Help: "Rendered Istio installations in the cache."},
			stat(func(s engine.Stats) float64 { return float64(s.Installs) })),
		prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}),
	)
	if links != nil {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sidecarlab_link_store_up",
			Help: "1 while the shared-link store answers and can store links, 0 while sharing is unavailable."},
			func() float64 {
				if h, ok := links.(LinkStoreHealth); ok && h.Health() != nil {
					return 0
				}
				return 1
			}))
	}
	return m
}

// observe counts every request under its route pattern (never its URL: states are user content),
// a request whose client went away before the answer under code 499.
func (m *metrics) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		next.ServeHTTP(ww, r)
		route := "unmatched"
		if rc := chi.RouteContext(r.Context()); rc != nil && rc.RoutePattern() != "" {
			route = rc.RoutePattern()
		}
		status := ww.Status()
		switch {
		case status == 0 && r.Context().Err() != nil:
			// Nothing was answered because the client went away (appHandler writes nothing
			// then): nginx's 499, not a 200.
			status = statusClientClosedRequest
		case status == 0:
			status = http.StatusOK
		}
		m.requests.WithLabelValues(route, strconv.Itoa(status)).Inc()
		m.duration.WithLabelValues(route).Observe(time.Since(start).Seconds())
	})
}

// handleMetrics serves the registry in Prometheus' text format.
func (m *metrics) handleMetrics() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// handleHealthz says the process is up; it answers from the start, before the engine is ready.
func handleHealthz() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
}

// handleReadyz says whether the engine is ready: the condition requireEngine checks. The link
// store does not decide readiness (the playground works without it), but a store that does not
// answer is named on the answer's second line, and with ?verbose every part's state is listed.
func (s *server) handleReadyz() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		engineLine := "engine: ok"
		store, sharing := s.linkStoreState()
		var b strings.Builder
		switch {
		case s.eng() == nil:
			engineLine = "engine: starting (rendering the default Istio installation)"
			w.WriteHeader(http.StatusServiceUnavailable)
			b.WriteString("starting: rendering the default Istio installation\n")
		case !sharing:
			b.WriteString("ready (sharing is unavailable)\n")
		default:
			b.WriteString("ready\n")
		}
		if _, verbose := r.URL.Query()["verbose"]; verbose {
			b.WriteString(engineLine + "\nlink store: " + store + "\n")
		}
		_, _ = w.Write([]byte(b.String()))
	})
}

// requireEngine answers 503 with Retry-After until the engine is ready (as every error, a page
// or the API's error body: jsonErrors). The handlers behind it use s.eng() without checking.
func (s *server) requireEngine(next http.Handler) http.Handler {
	return s.handler(func(w http.ResponseWriter, r *http.Request) error {
		if s.eng() == nil {
			return errNotReady
		}
		next.ServeHTTP(w, r)
		return nil
	})
}
