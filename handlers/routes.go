package handlers

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"

	"github.com/sidecarlab/sidecarlab/engine/catalog"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/a-h/templ"
	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sidecarlab/sidecarlab/admission"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/ambient"
	"github.com/sidecarlab/sidecarlab/engine/upgrade"
	"github.com/sidecarlab/sidecarlab/static"
)

// Engine is what the handlers need of the engine.
type Engine interface {
	Timeline(ctx context.Context, manifest []byte, steps []input.Step, s engine.Settings) (*engine.Timeline, error)
	Estimate(ctx context.Context, manifest []byte, steps []input.Step, s engine.Settings) (engine.Cost, error)
	Install(ctx context.Context, o engine.InstallOptions) (*engine.Install, error)
	OptionTakes(ctx context.Context, o engine.InstallOptions, set string) (bool, error)
	upgrade.Engine
	admission.Workloads
	ambient.Sides
}

// New returns the whole HTTP surface. eng returns nil until the engine is ready (the default
// installation is rendered at start) and the engine from then on; until then the routes that need
// it answer 503 with Retry-After (requireEngine) and /readyz says so.
func New(logger *slog.Logger, eng func() Engine, cfg Config) http.Handler {
	cfg = cfg.withDefaults()
	s := &server{log: logger, eng: eng, cfg: cfg, metrics: newMetrics(eng, cfg.Links),
		slots: make(chan struct{}, cfg.MaxConcurrent), heavy: make(chan struct{}, cfg.HeavySlots),
		statics: pageStatics{panel: sync.OnceValue(func() templ.Component { return renderPanel(annotationGroups(catalog.DefaultCatalog())) }), lab: sync.OnceValue(newLabPath)}}
	for lane, ch := range map[string]chan struct{}{"light": s.slots, "heavy": s.heavy} {
		s.metrics.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sidecarlab_work_slots_busy",
			Help: "Work slots held by requests, by lane (see Config.HeavyUnits).", ConstLabels: prometheus.Labels{"lane": lane}},
			func() float64 { return float64(len(ch)) }))
	}
	r := chi.NewRouter()
	r.Use(s.metrics.observe)
	r.Use(middleware.RequestID, s.logRequests, s.recoverPanics, securityHeaders, compressor().Handler)
	// HEAD is answered on every GET route as GET is, without the body (link checkers and chat
	// unfurlers ask with HEAD); net/http drops the body.
	r.Use(middleware.GetHead)
	r.Use(negotiateLanguage)
	r.Use(middleware.Timeout(cfg.RequestTimeout))
	// The orchestrator's probes and the metrics scrape are never rate-limited: a busy client must
	// not make them fail.
	r.Get("/healthz", handleHealthz().ServeHTTP)
	r.Get("/readyz", s.handleReadyz().ServeHTTP)
	r.Get("/metrics", s.metrics.handleMetrics().ServeHTTP)

	// Everything else counts against one of two per-client limits: shares (link-store writes)
	// against theirs, every other request against the read limit.
	reads := s.rateLimit(cfg.RatePerMinute, "errors.rate.requests")
	writes := s.rateLimit(cfg.WriteRatePerMinute, "errors.rate.links")
	r.With(writes, s.refuseCrossSite, s.requireEngine, s.holdSlots).Post("/share", s.handleShare().ServeHTTP)
	r.With(writes, s.refuseCrossSite, s.requireEngine, s.holdSlots).Post("/api/v1/share", s.handleAPIShare().ServeHTTP)
	r.Group(func(r chi.Router) {
		r.Use(reads, s.refuseCrossSite)
		r.Handle("/static/*", http.StripPrefix("/static/", static.Handler()))
		r.Post("/lang", s.handleLanguage().ServeHTTP)

		// Everything made from a state needs the engine: 503 pages until it is ready; its work
		// holds a work slot until its answer is written (holdSlots).
		r.Group(func(r chi.Router) {
			r.Use(s.requireEngine, s.holdSlots)
			r.Get("/", s.handlePlayground().ServeHTTP)
			r.Post("/", s.handleForm().ServeHTTP)
			r.Get("/download", s.handleDownload().ServeHTTP)
			r.Get("/compare", s.handleCompare().ServeHTTP)
			r.Get("/upgrade", s.handleUpgrade().ServeHTTP)
			r.Get("/ambient", s.handleAmbient().ServeHTTP)
			r.Get("/embed", s.handleEmbed().ServeHTTP)
			r.Get("/s/{id}", s.handleShortLink().ServeHTTP)
			// The raw outputs of a state: a permalink's (?s=…) and a shared link's.
			r.Get("/injected.yaml", s.handleRaw("injected.yaml").ServeHTTP)
			r.Get("/diff.txt", s.handleRaw("diff.txt").ServeHTTP)
			r.Get("/state.json", s.handleRaw("state.json").ServeHTTP)
			r.Get("/repro.tar.gz", s.handleRaw("repro.tar.gz").ServeHTTP)
			r.Get("/s/{id}/injected.yaml", s.handleShortRaw("injected.yaml").ServeHTTP)
			r.Get("/s/{id}/diff.txt", s.handleShortRaw("diff.txt").ServeHTTP)
			r.Get("/s/{id}/state.json", s.handleShortRaw("state.json").ServeHTTP)
			r.Get("/s/{id}/repro.tar.gz", s.handleShortRaw("repro.tar.gz").ServeHTTP)
			r.Get("/batch.csv", s.handleBatchFile("csv").ServeHTTP)
			r.Get("/batch.md", s.handleBatchFile("md").ServeHTTP)
			r.Get("/batch.json", s.handleBatchFile("json").ServeHTTP)
		})

		r.Route("/api/v1", func(r chi.Router) {
			r.With(s.requireEngine, s.holdSlots).Post("/inject", s.handleAPIInject().ServeHTTP)
			r.With(s.requireEngine, s.holdSlots).Post("/upgrade", s.handleAPIUpgrade().ServeHTTP)
			r.With(s.requireEngine, s.holdSlots).Post("/ambient", s.handleAPIAmbient().ServeHTTP)
			// The catalog and the version are compiled in: they answer before the engine is ready.
			r.Get("/annotations", s.handleAPIAnnotations().ServeHTTP)
			r.Get("/version", s.handleAPIVersion().ServeHTTP)
			// The server's own cluster, read-only (serve --cluster-read): its revisions and namespaces.
			r.Get("/cluster", s.handleAPICluster().ServeHTTP)
			// A stored state is read from the store alone: it answers before the engine is ready.
			r.Get("/links/{id}", s.handleAPILink().ServeHTTP)
		})
	})
	r.NotFound(reads(s.handleNotFound()).ServeHTTP)
	r.MethodNotAllowed(reads(s.handleMethodNotAllowed(r)).ServeHTTP)
	return r
}

// server is what the handlers share.
type server struct {
	log *slog.Logger
	// eng returns nil until the engine is ready, then the engine. Every route that uses it is
	// behind requireEngine, so handlers call it without checking.
	eng func() Engine
	cfg Config
	// slots bounds concurrent light requests' work, heavy concurrent heavy ones' (see hold).
	slots, heavy chan struct{}
	metrics      *metrics
	statics      pageStatics
	// secretTotals memoises the secret scan of long links' manifests.
	secretTotals secretTotals
	// admitter runs the Cluster view's admissions on the engine, made on first use.
	admitOnce sync.Once
	admitter  *admission.Admitter
}

// handleNotFound answers a path no route has: a page, or under /api/ the API's JSON error.
func (s *server) handleNotFound() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.refuse(w, r, httpError{status: http.StatusNotFound, id: "errors.not-found", args: []any{"Path", bound(r.URL.Path, 256)}})
	})
}

// handleMethodNotAllowed answers a method a route of mux does not take, as handleNotFound
// answers, with the Allow header chi's own answer has (the methods mux matches at the path).
func (s *server) handleMethodNotAllowed(mux *chi.Mux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var allow []string
		for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions} {
			if mux.Match(chi.NewRouteContext(), m, r.URL.Path) {
				allow = append(allow, m)
			}
		}
		w.Header().Set("Allow", strings.Join(allow, ", "))
		s.refuse(w, r, httpError{status: http.StatusMethodNotAllowed, id: "errors.method-not-allowed",
			args: []any{"Path", bound(r.URL.Path, 256), "Method", bound(r.Method, 16)}})
	})
}
