package handlers

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"io"
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
	kflate "github.com/klauspost/compress/flate"
	kgzip "github.com/klauspost/compress/gzip"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sidecarlab/sidecarlab/admission"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/ambient"
	"github.com/sidecarlab/sidecarlab/static"
)

// Engine is what the handlers need of the engine.
type Engine interface {
	Timeline(ctx context.Context, manifest []byte, steps []engine.Step, s engine.Settings) (*engine.Timeline, error)
	Estimate(ctx context.Context, manifest []byte, steps []engine.Step, s engine.Settings) (engine.Cost, error)
	Install(ctx context.Context, o engine.InstallOptions) (*engine.Install, error)
	PlanUpgrade(ctx context.Context, old engine.InstallOptions, carry func(path string) bool) (*engine.Upgrade, error)
	PreviewUpgrade(ctx context.Context, manifest []byte, steps []engine.Step, s engine.Settings, carry func(path string) bool) (*engine.UpgradePreview, error)
	admission.Workloads
	ambient.Sides
}

// Config holds the knobs of the HTTP surface.
type Config struct {
	// MaxBodyBytes bounds a POSTed form or API request (default 1 MiB).
	MaxBodyBytes int64
	// MaxConcurrent bounds injections running at once (default 2 × GOMAXPROCS); a request waits
	// up to QueueWait for a slot (default 5 s), then gets 503 with Retry-After.
	MaxConcurrent int
	QueueWait     time.Duration
	// Work bounds one request's work, estimated before it starts (engine.Estimate): deeper or
	// costlier input is refused with a 422 that says which limit and how to split it (defaults:
	// 100 levels, 4,000 units — about 2,000 small documents, or 10 through 100 steps, twice).
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
		Work:               engine.Limits{MaxDepth: 100, MaxUnits: 4000},
		HeavyUnits:         200,
		HeavySlots:         1,
		RequestTimeout:     15 * time.Second,
		RatePerMinute:      6000,
		WriteRatePerMinute: 60,
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
	orDefault(&c.Work.MaxUnits, d.Work.MaxUnits)
	orDefault(&c.HeavyUnits, d.HeavyUnits)
	orDefault(&c.HeavySlots, d.HeavySlots)
	orDefault(&c.RequestTimeout, d.RequestTimeout)
	orDefault(&c.RatePerMinute, d.RatePerMinute)
	orDefault(&c.WriteRatePerMinute, d.WriteRatePerMinute)
	orDefault(&c.StoreTimeout, d.StoreTimeout)
	return c
}

// orDefault sets *v to d when it is zero.
func orDefault[T comparable](v *T, d T) {
	var zero T
	if *v == zero {
		*v = d
	}
}

// New returns the whole HTTP surface. eng returns nil until the engine is ready (the default
// installation is rendered at start) and the engine from then on; until then the routes that need
// it answer 503 with Retry-After (requireEngine) and /readyz says so.
func New(logger *slog.Logger, eng func() Engine, cfg Config) http.Handler {
	cfg = cfg.withDefaults()
	s := &server{log: logger, eng: eng, cfg: cfg, metrics: newMetrics(eng, cfg.Links),
		slots: make(chan struct{}, cfg.MaxConcurrent), heavy: make(chan struct{}, cfg.HeavySlots),
		statics: pageStatics{panel: sync.OnceValue(func() templ.Component { return renderPanel(annotationGroups(engine.DefaultCatalog())) }), lab: sync.OnceValue(newLabPath)}}
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

// admit runs the cluster's admission path for a state (see package admission), inside the
// request's hold on the work slots (see work).
func (s *server) admit(ctx context.Context, st State) ([]admission.Result, error) {
	if err := s.work(ctx, st); err != nil {
		return nil, err
	}
	s.admitOnce.Do(func() { s.admitter = admission.New(s.eng()) })
	return s.admitter.Admit(ctx, []byte(st.Manifest), st.Steps, st.Settings)
}

// compressor compresses answers at the fastest level, with klauspost/compress's gzip and deflate
// (the same formats; about twice as fast as the standard library's at level 1, which was most of
// the cost of compressing a toggle's answer).
func compressor() *middleware.Compressor {
	c := middleware.NewCompressor(1, "text/html", "text/css", "application/javascript", "text/javascript", "application/json", "image/svg+xml", "application/yaml")
	c.SetEncoder("gzip", func(w io.Writer, level int) io.Writer {
		gw, _ := kgzip.NewWriterLevel(w, level)
		return gw
	})
	c.SetEncoder("deflate", func(w io.Writer, level int) io.Writer {
		fw, _ := kflate.NewWriter(w, level)
		return fw
	})
	return c
}

var errBusy = httpError{status: http.StatusServiceUnavailable, id: "errors.busy"}

// timeline runs the engine on a state, inside the request's hold on the work slots (see work).
func (s *server) timeline(ctx context.Context, st State) (*engine.Timeline, error) {
	if err := s.work(ctx, st); err != nil {
		return nil, err
	}
	return s.eng().Timeline(ctx, []byte(st.Manifest), st.Steps, st.Settings)
}

// work checks what a state will cost before any of it is done, and holds a work slot for the
// rest of the request in the lane that cost chooses. A state holds no more than a POST may carry
// (--max-body), however it came: a link's state inflates up to 4 MiB otherwise (413). Then the
// estimate: deeper or costlier than Config.Work allows is a 422 that says which limit; over
// HeavyUnits, the request is heavy (see hold).
func (s *server) work(ctx context.Context, st State) error {
	if err := s.stateTooLarge(st); err != nil {
		return err
	}
	cost, err := s.eng().Estimate(ctx, []byte(st.Manifest), st.Steps, st.Settings)
	if err != nil {
		return err
	}
	if err := s.cfg.Work.Check(cost); err != nil {
		return err
	}
	return s.hold(ctx, cost.Units > s.cfg.HeavyUnits || cost.Render || cost.Worker)
}

// holdKey is the context key of a request's hold on the work slots.
type holdKey struct{}

// slotHold is what a request holds of the work slots: a light slot, a heavy one, or none yet.
// It is taken by the request's first piece of engine work (hold) and given back when its answer
// has been written (holdSlots), so rendering and encoding a large answer count as work too.
type slotHold struct {
	mu           sync.Mutex
	light, heavy bool
}

// holdSlots gives each request a hold on the work slots, released once the answer is written.
func (s *server) holdSlots(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := &slotHold{}
		defer func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			if h.light {
				<-s.slots
			}
			if h.heavy {
				<-s.heavy
			}
		}()
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), holdKey{}, h)))
	})
}

// hold takes a work slot for the request, in the heavy lane when heavy is set, waiting up to
// QueueWait, then answers 503 (appHandler adds Retry-After). A request holds at most one slot of
// each lane: a heavy slot covers light work, and a light one is upgraded when later work of the
// same request is heavy (a compare of a light and a heavy state). A heavy holder never waits for
// a light slot, so two requests never wait for each other.
func (s *server) hold(ctx context.Context, heavy bool) error {
	h, _ := ctx.Value(holdKey{}).(*slotHold)
	if h == nil {
		return errors.New("handlers: engine work outside holdSlots")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.heavy || (h.light && !heavy) {
		return nil
	}
	lane := s.slots
	if heavy {
		lane = s.heavy
	}
	wait := time.NewTimer(s.cfg.QueueWait)
	defer wait.Stop()
	select {
	case lane <- struct{}{}:
	case <-wait.C:
		return errBusy
	case <-ctx.Done():
		return ctx.Err()
	}
	if heavy {
		h.heavy = true
	} else {
		h.light = true
	}
	return nil
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

// securityHeaders sets the same headers on every response: a Content-Security-Policy that allows
// nothing from elsewhere, no inline script at all, and inline style only by this response's
// nonce (the editor's generated stylesheet); no framing (the embed route lifts that); no sniffing;
// no referrer beyond this origin.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b [16]byte
		_, _ = rand.Read(b[:])
		nonce := base64.RawStdEncoding.EncodeToString(b[:])
		h := w.Header()
		h.Set("Content-Security-Policy", csp(nonce, "'none'"))
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		next.ServeHTTP(w, r.WithContext(templ.WithNonce(r.Context(), nonce)))
	})
}

// csp is the policy with the response's nonce and who may frame it.
func csp(nonce, frameAncestors string) string {
	return "default-src 'self'; script-src 'self'; style-src 'self' 'nonce-" + nonce + "'; img-src 'self' data:; " +
		"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors " + frameAncestors
}
