// Package handlers is the HTTP surface of sidecarlab: the playground page, its permalinks, the
// JSON API and health checks, on a chi router. The whole URL surface is in this file.
package handlers

import (
	"context"
	"crypto/rand"
	"encoding/base64"
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
	kflate "github.com/klauspost/compress/flate"
	kgzip "github.com/klauspost/compress/gzip"

	"github.com/sidecarlab/sidecarlab/admission"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/static"
)

// Engine is what the handlers need of the engine.
type Engine interface {
	Timeline(ctx context.Context, manifest []byte, steps []engine.Step, s engine.Settings) (*engine.Timeline, error)
	Install(ctx context.Context, o engine.InstallOptions) (*engine.Install, error)
	admission.Workloads
}

// Config holds the knobs of the HTTP surface.
type Config struct {
	// MaxBodyBytes bounds a POSTed form or API request (default 1 MiB).
	MaxBodyBytes int64
	// MaxConcurrent bounds injections running at once (default 2 × GOMAXPROCS); a request waits
	// up to QueueWait for a slot (default 5 s), then gets 503 with Retry-After.
	MaxConcurrent int
	QueueWait     time.Duration
	// RequestTimeout bounds one request's work (default 15 s).
	RequestTimeout time.Duration
	// RatePerMinute limits requests per client address (default 6000, a workshop behind one
	// NAT), WriteRatePerMinute the shares among them (link-store writes, default 60); a negative
	// value turns a limit off. The probes and /metrics are never limited.
	RatePerMinute      int
	WriteRatePerMinute int
	// TrustedProxies are the proxies (an ingress, a load balancer) whose X-Forwarded-For or
	// Forwarded header names the client; from any other peer those headers are ignored.
	TrustedProxies []netip.Prefix
	// Links stores shared links; nil turns sharing off.
	Links LinkStore
	// StoreTimeout bounds one call to the link store (default 3 s), so that a hung database
	// answers "sharing is unavailable" instead of holding the request.
	StoreTimeout time.Duration
	// PublicURL is the server's public address (https://sidecarlab.example.com), which the share
	// API puts before /s/<id>; empty, it answers the path alone. Never taken from a request's
	// Host header, which the client chooses.
	PublicURL string
}

// New returns the whole HTTP surface. eng returns nil until the engine is ready (the default
// installation is rendered at start) and the engine from then on; until then the routes that need
// it answer 503 with Retry-After (requireEngine) and /readyz says so.
func New(logger *slog.Logger, eng func() Engine, cfg Config) http.Handler {
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = 1 << 20
	}
	if cfg.MaxConcurrent == 0 {
		cfg.MaxConcurrent = 2 * runtime.GOMAXPROCS(0)
	}
	if cfg.QueueWait == 0 {
		cfg.QueueWait = 5 * time.Second
	}
	if cfg.RequestTimeout == 0 {
		cfg.RequestTimeout = 15 * time.Second
	}
	if cfg.RatePerMinute == 0 {
		cfg.RatePerMinute = 6000
	}
	if cfg.WriteRatePerMinute == 0 {
		cfg.WriteRatePerMinute = 60
	}
	if cfg.StoreTimeout == 0 {
		cfg.StoreTimeout = 3 * time.Second
	}
	s := &server{log: logger, eng: eng, cfg: cfg, slots: make(chan struct{}, cfg.MaxConcurrent), metrics: newMetrics(eng, cfg.Links),
		statics: pageStatics{panel: sync.OnceValue(func() templ.Component { return renderPanel(annotationGroups(engine.DefaultCatalog())) }), lab: sync.OnceValue(newLabPath)}}
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
	r.With(writes, s.refuseCrossSite, s.requireEngine(htmlErrors)).Post("/share", s.handleShare().ServeHTTP)
	r.With(writes, s.refuseCrossSite, s.requireEngine(jsonErrors)).Post("/api/v1/share", s.handleAPIShare().ServeHTTP)
	r.Group(func(r chi.Router) {
		r.Use(reads, s.refuseCrossSite)
		r.Handle("/static/*", http.StripPrefix("/static/", static.Handler()))
		r.Post("/lang", s.handleLanguage().ServeHTTP)

		// Everything made from a state needs the engine: 503 pages until it is ready.
		r.Group(func(r chi.Router) {
			r.Use(s.requireEngine(htmlErrors))
			r.Get("/", s.handlePlayground().ServeHTTP)
			r.Post("/", s.handleForm().ServeHTTP)
			r.Get("/download", s.handleDownload().ServeHTTP)
			r.Get("/compare", s.handleCompare().ServeHTTP)
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
			r.With(s.requireEngine(jsonErrors)).Post("/inject", s.handleAPIInject().ServeHTTP)
			// The catalog and the version are compiled in: they answer before the engine is ready.
			r.Get("/annotations", s.handleAPIAnnotations().ServeHTTP)
			r.Get("/version", s.handleAPIVersion().ServeHTTP)
			// A stored state is read from the store alone: it answers before the engine is ready.
			r.Get("/links/{id}", s.handleAPILink().ServeHTTP)
		})
	})
	r.NotFound(reads(s.handleNotFound()).ServeHTTP)
	return r
}

// server is what the handlers share.
type server struct {
	log *slog.Logger
	// eng returns nil until the engine is ready, then the engine. Every route that uses it is
	// behind requireEngine, so handlers call it without checking.
	eng func() Engine
	cfg Config
	// slots bounds concurrent injections.
	slots   chan struct{}
	metrics *metrics
	statics pageStatics
	// secretTotals memoises the secret scan of long links' manifests.
	secretTotals secretTotals
	// admitter runs the Cluster view's admissions on the engine, made on first use.
	admitOnce sync.Once
	admitter  *admission.Admitter
}

// admit runs the cluster's admission path for a state (see package admission), for a caller
// holding a slot.
func (s *server) admit(ctx context.Context, st State) ([]admission.Result, error) {
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

// timeline runs the engine within the bound on concurrent injections (see acquire).
func (s *server) timeline(ctx context.Context, st State) (*engine.Timeline, error) {
	release, err := s.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	return s.timelineHeld(ctx, st)
}

// acquire takes one of the injection slots, waiting up to QueueWait, then answers 503
// (appHandler adds Retry-After). A caller that also encodes a large answer holds the slot until
// it is written, so that the encoding is inside the bound too.
func (s *server) acquire(ctx context.Context) (release func(), err error) {
	wait := time.NewTimer(s.cfg.QueueWait)
	defer wait.Stop()
	select {
	case s.slots <- struct{}{}:
		return func() { <-s.slots }, nil
	case <-wait.C:
		return nil, errBusy
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// timelineHeld runs the engine for a caller holding a slot. A state holds no more than a POST
// may carry (--max-body), however it came: a link's state inflates up to 4 MiB otherwise.
func (s *server) timelineHeld(ctx context.Context, st State) (*engine.Timeline, error) {
	if n := st.size(); n > s.cfg.MaxBodyBytes {
		return nil, httpError{status: http.StatusRequestEntityTooLarge, id: "errors.state-too-large",
			args: []any{"Size", byteCount(n), "Limit", byteCount(s.cfg.MaxBodyBytes), "Flag", "--max-body"}}
	}
	return s.eng().Timeline(ctx, []byte(st.Manifest), st.Steps, st.Settings)
}

// handleNotFound answers a path no route has, as a page.
func (s *server) handleNotFound() http.Handler {
	return s.pageHandler(func(w http.ResponseWriter, r *http.Request) error {
		return httpError{status: http.StatusNotFound, id: "errors.not-found", args: []any{"Path", bound(r.URL.Path, 256)}}
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

// requireEngine answers 503 with Retry-After until the engine is ready: the error page, or the
// API's error body for jsonErrors. The handlers behind it use s.eng() without checking.
func (s *server) requireEngine(format errorFormat) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return appHandler{s: s, format: format, fn: func(w http.ResponseWriter, r *http.Request) error {
			if s.eng() == nil {
				return errNotReady
			}
			next.ServeHTTP(w, r)
			return nil
		}}
	}
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
