// Package handlers is sidecarlab's HTTP surface: the routes (routes.go holds the whole URL
// surface, on a chi router), decoding requests, and choosing what to show.
//
// A request is read into a state and a view: a permalink's query (viewquery.go), a posted form
// and its action (form.go), a share or an API call. The engine runs the state; the handlers shape
// its answer into package web's view models (page.go, results.go for the results, panel.go,
// cluster.go, …) and render them, or answer JSON (api.go). Errors become a page or JSON with a
// status through one adapter (errors.go).
//
// The drawing is package web's: handlers passes it data, never geometry or markup.
package handlers

import (
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/a-h/templ"
	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/go-chi/httprate"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sidecarlab/sidecarlab/admission"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/ambient"
	"github.com/sidecarlab/sidecarlab/engine/catalog"
	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/engine/upgrade"
	"github.com/sidecarlab/sidecarlab/room"
	"github.com/sidecarlab/sidecarlab/static"
	"github.com/sidecarlab/sidecarlab/web"
)

// Engine is what the handlers need of the engine.
type Engine interface {
	Timeline(ctx context.Context, manifest []byte, steps []input.Step, s engine.Settings) (*engine.Timeline, error)
	Estimate(ctx context.Context, manifest []byte, steps []input.Step, s engine.Settings) (engine.Cost, error)
	Install(ctx context.Context, o engine.InstallOptions) (*engine.Install, error)
	OptionTakes(ctx context.Context, o engine.InstallOptions, set string) (bool, error)
	Explain(ctx context.Context, manifest []byte, steps []input.Step, s engine.Settings) ([]engine.Provenance, error)
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
		roomPages: newRoomPages(),
		statics:   pageStatics{panel: sync.OnceValue(func() templ.Component { return renderPanel(web.PanelGroups(catalog.DefaultCatalog())) }), lab: sync.OnceValue(newLabPath)}}
	for lane, ch := range map[string]chan struct{}{"light": s.slots, "heavy": s.heavy} {
		s.metrics.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sidecarlab_work_slots_busy",
			Help: "Work slots held by requests, by lane (see Config.HeavyUnits).", ConstLabels: prometheus.Labels{"lane": lane}},
			func() float64 { return float64(len(ch)) }))
	}
	r := chi.NewRouter()
	r.Use(s.metrics.observe)
	// A room's event stream lives as long as its page: no compression (each event must go out
	// as it is written) and no per-route deadline (exceptStreams).
	r.Use(middleware.RequestID, s.logRequests, s.recoverPanics, securityHeaders, exceptStreams(compressor().Handler))
	// HEAD is answered on every GET route as GET is, without the body (link checkers and chat
	// unfurlers ask with HEAD); net/http drops the body.
	r.Use(middleware.GetHead)
	r.Use(negotiateLanguage)
	r.Use(exceptStreams(middleware.Timeout(cfg.RequestTimeout)))
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
	// Rooms: starting one counts as a share; a room's page and events count against a limit of
	// their own, sized for a room of learners behind one address (Config.RoomRatePerMinute).
	// The page is kept per move, so a learner costs a copy, not a render.
	rooms := s.rateLimit(cfg.RoomRatePerMinute, "errors.rate.rooms")
	r.With(writes, s.refuseCrossSite).Post("/rooms", s.handleRoomStart().ServeHTTP)
	r.With(writes, s.refuseCrossSite).Post("/api/v1/rooms", s.handleAPIRoomCreate().ServeHTTP)
	r.With(rooms, s.refuseCrossSite, s.requireEngine, s.holdSlots).Get("/r/{code}", s.handleRoomPage().ServeHTTP)
	r.With(rooms, s.refuseCrossSite).Get("/r/{code}/events", s.handleRoomEvents().ServeHTTP)
	r.Group(func(r chi.Router) {
		r.Use(reads, s.refuseCrossSite)
		r.Handle("/static/*", http.StripPrefix("/static/", static.Handler()))
		r.Post("/lang", s.handleLanguage().ServeHTTP)
		r.Post("/r/{code}/move", s.handleRoomMove().ServeHTTP)

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
			r.Get("/why", s.handleWhy().ServeHTTP)
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
			r.Put("/rooms/{code}", s.handleAPIRoomMove().ServeHTTP)
			r.Get("/rooms/{code}", s.handleAPIRoom().ServeHTTP)
			// A stored state is read from the store alone: it answers before the engine is ready.
			r.Get("/links/{id}", s.handleAPILink().ServeHTTP)
		})
	})
	r.NotFound(reads(s.handleNotFound()).ServeHTTP)
	r.MethodNotAllowed(reads(s.handleMethodNotAllowed(r)).ServeHTTP)
	return r
}

// exceptStreams is mw for every request but a room's event stream (/r/{code}/events), which
// lives as long as its page.
func exceptStreams(mw func(http.Handler) http.Handler) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		wrapped := mw(next)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if isEventStream(r.URL.Path) {
				next.ServeHTTP(w, r)
				return
			}
			wrapped.ServeHTTP(w, r)
		})
	}
}

// isEventStream reports whether path is a room's event stream's.
func isEventStream(path string) bool {
	code, ok := strings.CutPrefix(path, "/r/")
	if !ok {
		return false
	}
	code, ok = strings.CutSuffix(code, "/events")
	return ok && !strings.Contains(code, "/")
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
	// roomPages keeps the rooms' pages, one render per move.
	roomPages *roomPages
}

// handleNotFound answers a path no route has: a page, or under /api/ the API's JSON error.
func (s *server) handleNotFound() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.refuse(w, r, httpError{status: http.StatusNotFound, id: "errors.not-found", args: []any{"Path", web.Bound(r.URL.Path, 256)}})
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
			args: []any{"Path", web.Bound(r.URL.Path, 256), "Method", web.Bound(r.Method, 16)}})
	})
}

// Config holds the knobs of the HTTP surface.
type Config struct {
	// MaxBodyBytes bounds a POSTed form or API request (default 1 MiB).
	MaxBodyBytes int64
	// MaxConcurrent bounds injections running at once (default 2 × GOMAXPROCS); a request waits
	// up to QueueWait for a slot (default 5 s), then gets 503 with Retry-After.
	MaxConcurrent int
	QueueWait     time.Duration
	// Work bounds one request's work, estimated before it starts (engine.Estimate): deeper,
	// costlier or more expanded input is refused with a 422 that says which limit and how to
	// split it. Defaults: 100 levels; as many units as finish within RequestTimeout (unitTime:
	// 1,500 in the default 15 s, about 1,500 small documents, or 15 through 100 steps); the
	// aliases may expand the manifest to MaxBodyBytes, what a POST may carry, but may not make
	// objects (List items) of their own: a server always refuses those (WrittenOut).
	Work engine.Limits
	// HeavyUnits is the estimate above which a request is heavy (default 200 units, about half
	// a second of work); so is one whose install options must be rendered first, and one whose
	// own templates run in a worker (their cost is not known before they run). Heavy requests
	// run HeavySlots at a time (default 1), apart from the MaxConcurrent slots of the others, so
	// light requests never wait behind heavy ones. Sharing by cost rather than by address keeps
	// a workshop behind one NAT as fast as one person.
	HeavyUnits int64
	HeavySlots int
	// RequestTimeout bounds one request's work (default 15 s).
	RequestTimeout time.Duration
	// RatePerMinute limits requests per client address (default 6000, a workshop behind one
	// NAT), WriteRatePerMinute the shares among them (link-store writes, default 60); a negative
	// value turns a limit off. The probes and /metrics are never limited.
	RatePerMinute      int
	WriteRatePerMinute int
	// RoomRatePerMinute limits the requests of rooms' pages and event streams per client address
	// (default 20,000: 200 learners behind one NAT, each following a move every 2 s, with room to
	// spare); negative, no limit.
	RoomRatePerMinute int
	// rateCounter, when set, makes each limit's counter (tests: one that counts without the
	// clock, so that a minute's boundary between two requests does not refill it).
	rateCounter func() httprate.LimitCounter
	// TrustedProxies are the proxies (an ingress, a load balancer) whose X-Forwarded-For or
	// Forwarded header names the client; from any other peer those headers are ignored.
	TrustedProxies []netip.Prefix
	// Links stores shared links; nil turns sharing off.
	Links LinkStore
	// Cluster is the cluster whose mesh and namespaces the page offers (serve --cluster-read);
	// nil offers none.
	Cluster Cluster
	// StoreTimeout bounds one call to the link store (default 3 s), so that a hung database
	// answers "sharing is unavailable" instead of holding the request.
	StoreTimeout time.Duration
	// Rooms keeps the rooms trainers run workshops in; nil turns rooms off.
	Rooms *room.Hub
	// PublicURL is the server's public address (https://sidecarlab.example.com), which the share
	// API puts before /s/<id>; empty, it answers the path alone. Never taken from a request's
	// Host header, which the client chooses.
	PublicURL string
}

// Defaults are the limits a server has when its Config leaves them zero: the one table of them,
// which New fills a Config from and serve's flags show as their defaults.
func Defaults() Config {
	return Config{
		MaxBodyBytes:       1 << 20,
		MaxConcurrent:      2 * runtime.GOMAXPROCS(0),
		QueueWait:          5 * time.Second,
		Work:               engine.Limits{MaxDepth: 100, MaxUnits: unitsWithin(15 * time.Second), MaxBytes: 1 << 20},
		HeavyUnits:         200,
		HeavySlots:         1,
		RequestTimeout:     15 * time.Second, // Work.MaxUnits follows it
		RatePerMinute:      6000,
		WriteRatePerMinute: 60,
		RoomRatePerMinute:  20_000,
		StoreTimeout:       3 * time.Second,
	}
}

// withDefaults is c with each limit it leaves zero taken from Defaults.
func (c Config) withDefaults() Config {
	d := Defaults()
	orDefault(&c.MaxBodyBytes, d.MaxBodyBytes)
	orDefault(&c.MaxConcurrent, d.MaxConcurrent)
	orDefault(&c.QueueWait, d.QueueWait)
	orDefault(&c.Work.MaxDepth, d.Work.MaxDepth)
	orDefault(&c.HeavyUnits, d.HeavyUnits)
	orDefault(&c.HeavySlots, d.HeavySlots)
	orDefault(&c.RequestTimeout, d.RequestTimeout)
	// What finishes within this server's timeout, and what a POST to it may carry.
	orDefault(&c.Work.MaxUnits, unitsWithin(c.RequestTimeout))
	orDefault(&c.Work.MaxBytes, c.MaxBodyBytes)
	c.Work.WrittenOut = true // a server shows what is written out (engine.Limits.WrittenOut)
	orDefault(&c.RatePerMinute, d.RatePerMinute)
	orDefault(&c.WriteRatePerMinute, d.WriteRatePerMinute)
	orDefault(&c.RoomRatePerMinute, d.RoomRatePerMinute)
	orDefault(&c.StoreTimeout, d.StoreTimeout)
	return c
}

// unitTime is what one unit of estimated work (engine.Cost) takes through a whole request on
// the route that does the most per unit, with a margin: BenchmarkUnitTime measured 4–7 ms for
// small documents and up to 11 ms for a List's items on this project's 2-core machine, beside
// other work (BENCHMARKS.md, "The unit limit"). A request is admitted only if its units finish
// within its timeout at this pace, so what is admitted finishes on a quiet machine and what
// cannot is refused up front with a 422 that says how to split it, not cut at the deadline.
const unitTime = 10 * time.Millisecond

// unitsWithin is how many units of work finish within d (unitTime).
func unitsWithin(d time.Duration) int64 { return max(1, int64(d/unitTime)) }

// orDefault sets *v to d when it is zero.
func orDefault[T comparable](v *T, d T) {
	var zero T
	if *v == zero {
		*v = d
	}
}
