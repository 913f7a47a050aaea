// Package engine is sidecarlab's injection engine: Istio's own sidecar injector
// (istio.io/istio/pkg/kube/inject) fed by installations rendered from Istio's own charts or taken
// from a mesh's own configuration, run as kube-inject or the webhook runs it. Around it is what
// sidecarlab reads from the results: the timeline of annotation steps and its memo, the diff
// between two rows (field by field and unified), the pitfall checks and where their findings are
// in the input, the annotation and ProxyConfig catalogs, the pod's lifecycle, the batch's rows
// and their capacity, upgrade previews and the label fix. Nothing about injection is
// re-implemented here. The package is pure: no HTTP, no templates, no logging; callers decide how
// results and errors are shown (package report writes the CLI's and the batch's formats).
package engine

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"istio.io/istio/pilot/pkg/features"
	"istio.io/istio/pkg/kube/inject"

	"github.com/sidecarlab/sidecarlab/engine/catalog"
	"github.com/sidecarlab/sidecarlab/engine/input"
)

// Options configure an Engine. The zero value is a strict engine, fit for a shared server: see
// InstallPolicy.
type Options struct {
	// InstallPolicy says which install options are accepted; the zero value refuses options that
	// name a path on the server or carry template text. The CLI sets TrustedInstalls().
	InstallPolicy InstallPolicy
	// Isolator, when set, runs every render of options other than the default, and every
	// injection under an installation with templates of its own, out of this process.
	Isolator Isolator
	// InstallCacheSize bounds how many rendered installations are kept (default 16), and
	// InstallCacheBytes the memory they hold, as estimated (default 64 MiB).
	InstallCacheSize  int
	InstallCacheBytes int64
	// StepCacheSize bounds how many memoised timeline steps are kept (default 512), and
	// StepCacheBytes the memory they hold, as estimated (default 64 MiB): a few steps of huge
	// manifests must not fill memory.
	StepCacheSize  int
	StepCacheBytes int64
	// MaxDocuments bounds the documents of one manifest (default 10,000).
	MaxDocuments int
	// MaxSteps bounds the annotation steps of one request (default 100).
	MaxSteps int
	// StepsAsWritten leaves an annotation step's value to Istio: the step is written into every
	// document as it is, and a value Istio refuses fails each document it is written into, with
	// Istio's message — as a manifest that carries the annotation does (istioctl kube-inject
	// prints the documents before the first). Without it, such a value fails the request before
	// any document is injected, naming the step (the playground's form, the API). A key Kubernetes
	// refuses and the bounds (catalog.SizeError) fail the request either way.
	StepsAsWritten bool
	// Workers is how many of one request's documents are injected at once (default 1). The CLI
	// uses every core for one large file; a server leaves it at 1, since its requests share
	// the cores by their slots (a request must not take more than its share).
	Workers int
}

// Engine injects manifests. It is safe for concurrent use; each request chooses its own mode and
// installation and nothing process-wide is changed per request.
type Engine struct {
	opts     Options
	installs *lru[*Install]
	steps    *lru[*StepResult]
	// shapes keeps what Estimate read of the manifests it saw.
	shapes   *lru[*manifestShape]
	clusters *clusters
	def      *Install
	catalog  *catalog.Catalog
	// injections counts objects run through Istio's injector (Stats.Injections); stepHits and stepMisses count
	// timeline rows served from the memo or computed.
	injections, stepHits, stepMisses atomic.Int64
}

// Stats are the engine's counters since it started.
type Stats struct {
	// Injections is objects run through Istio's injector: documents, a List's items in its
	// place (counted once the List is done).
	Injections int64
	// StepHits and StepMisses are timeline rows served from the memo and computed.
	StepHits, StepMisses int64
	// Installs is how many rendered installations are cached; InstallBytes and StepBytes the
	// memory the two caches hold, as estimated.
	Installs                int
	InstallBytes, StepBytes int64
}

// Stats reports the engine's counters.
func (e *Engine) Stats() Stats {
	return Stats{Injections: e.injections.Load(), StepHits: e.stepHits.Load(), StepMisses: e.stepMisses.Load(), Installs: e.installs.len(),
		InstallBytes: e.installs.held(), StepBytes: e.steps.held()}
}

// New makes the default installation ready (from its build-time render, see default_install.go)
// and returns a ready engine. Cancelling ctx stops
// it before the render; Close releases what it made.
func New(ctx context.Context, opts Options) (*Engine, error) {
	if opts.InstallCacheSize == 0 {
		opts.InstallCacheSize = 16
	}
	if opts.StepCacheSize == 0 {
		opts.StepCacheSize = 512
	}
	if opts.InstallCacheBytes == 0 {
		opts.InstallCacheBytes = 64 << 20
	}
	if opts.StepCacheBytes == 0 {
		opts.StepCacheBytes = 64 << 20
	}
	if opts.MaxDocuments == 0 {
		opts.MaxDocuments = 10000
	}
	if opts.MaxSteps == 0 {
		opts.MaxSteps = 100
	}
	if features.EnableNativeSidecars != features.NativeSidecarModeAuto {
		// Istio read ENABLE_NATIVE_SIDECARS from the environment at start; it would silently
		// override kube-inject and webhook modes for every request.
		return nil, &input.Error{ID: "native-sidecars-env"}
	}
	e := &Engine{
		opts:     opts,
		installs: newLRU(opts.InstallCacheSize, opts.InstallCacheBytes, (*Install).size),
		steps:    newLRU(opts.StepCacheSize, opts.StepCacheBytes, (*StepResult).size),
		shapes:   newLRU(1024, 1<<20, (*manifestShape).size),
		clusters: newClusters(),
		catalog:  catalog.DefaultCatalog(),
	}
	def, err := e.defaultInstall(ctx)
	if err != nil {
		e.Close()
		return nil, &input.Fault{ID: "default-install", Err: err}
	}
	e.def = def
	return e, nil
}

// defaultInstall is the default installation: parsed from the build-time render when it was made
// with this Istio (see default_install.go), else rendered from the charts now.
func (e *Engine) defaultInstall(ctx context.Context) (*Install, error) {
	if in, err := embeddedInstall(); in != nil || err != nil {
		return in, err
	}
	return e.Install(ctx, InstallOptions{})
}

// embeddedInstall is the installation built from the build-time render, built once per process
// (nil when the render was made with another Istio). It depends on nothing but the binary: for the
// default options buildInstall reads no policy. An Install is never changed once built, so
// engines share it as the requests of one engine share it. A process makes one engine, but the
// tests make hundreds: ~26 ms of parsing each, ~6 CPU-s of cmd/sidecarlab's tests.
var embeddedInstall = sync.OnceValues(func() (*Install, error) {
	cm, ok := embeddedDefault()
	if !ok {
		return nil, nil
	}
	return buildInstall(InstallOptions{}, cm, InstallPolicy{}, nil)
})

// Close stops the fake clusters behind webhook and native modes.
func (e *Engine) Close() { e.clusters.close() }

// Catalog is the annotation catalog the engine validates against.
func (e *Engine) Catalog() *catalog.Catalog { return e.catalog }

// Install returns the rendered installation for the options, from the cache when it can.
func (e *Engine) Install(ctx context.Context, o InstallOptions) (*Install, error) {
	if e.def != nil && o.IsDefault() {
		return e.def, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var builtin map[string]string
	if e.def != nil {
		builtin = e.def.rawTemplates
	}
	in, _, err := e.installs.get(o.Hash(), func() (*Install, error) {
		if !o.Mesh.IsZero() || RevisionOf(o.Revision) != "" {
			return e.ownInstall(ctx, o, builtin)
		}
		if e.opts.Isolator != nil && !o.IsDefault() {
			return e.renderIsolated(ctx, o, builtin)
		}
		return renderInstall(o, e.opts.InstallPolicy, builtin)
	})
	return in, err
}

// Injection is one manifest injected under one set of settings.
type Injection struct {
	Documents []Document `json:"documents"`
	// Findings are the pitfalls sidecarlab's checks found.
	Findings []Finding `json:"findings"`
	// Ignored are the findings the manifest opted out of (IgnoreAnnotation).
	Ignored []Finding `json:"ignored,omitempty"`
}

// Output is the whole injected manifest exactly as `istioctl kube-inject` prints it: every
// document followed by "---\n". Documents that failed are left out (istioctl would stop there).
func (in *Injection) Output() string {
	var b strings.Builder
	for _, d := range in.Documents {
		if d.Error != nil {
			continue
		}
		b.WriteString(d.Output())
		b.WriteString("---\n")
	}
	return b.String()
}

// Warnings are Istio's warnings for all documents, in order.
func (in *Injection) Warnings() []string {
	var out []string
	for _, d := range in.Documents {
		out = append(out, d.Warnings...)
	}
	return out
}

// Errors are the documents' errors, in order.
func (in *Injection) Errors() []*input.Error {
	var out []*input.Error
	for _, d := range in.Documents {
		if d.Error != nil {
			out = append(out, d.Error)
		}
	}
	return out
}

// Inject injects every document of manifest, with the annotation steps applied first (all of
// them, in order). Problems with single documents are reported on those documents; the error
// return is for problems with the request as a whole (empty input, bad settings or annotation
// values, too many documents).
func (e *Engine) Inject(ctx context.Context, manifest []byte, steps []input.Step, s Settings) (*Injection, error) {
	return e.inject(ctx, manifest, steps, s, e.opts.Workers)
}

// InjectInOrder is Inject with the documents injected one after another on the calling
// goroutine, as istioctl injects them, whatever Options.Workers says: for a caller that reads
// what Istio logs while it injects, in istioctl's order. It uses this engine's installations, so
// injecting again in order costs the injections only, not another render.
func (e *Engine) InjectInOrder(ctx context.Context, manifest []byte, steps []input.Step, s Settings) (*Injection, error) {
	return e.inject(ctx, manifest, steps, s, 1)
}

// inject is Inject with workers documents injected at once.
func (e *Engine) inject(ctx context.Context, manifest []byte, steps []input.Step, s Settings, workers int) (*Injection, error) {
	p, err := e.prepare(ctx, manifest, steps, s)
	if err != nil {
		return nil, err
	}
	docs, err := e.injectAll(ctx, p, annotationsAt(steps, len(steps)), workers)
	if err != nil {
		return nil, err
	}
	found, ignored, err := e.check(ctx, p, docs)
	if err != nil {
		return nil, err
	}
	wf, wi, err := e.waypointChecks(ctx, p, docs)
	if err != nil {
		return nil, err
	}
	return &Injection{Documents: docs, Findings: append(found, wf...), Ignored: append(ignored, wi...)}, nil
}

// prepared is a request that passed validation: its installation, injector and documents.
type prepared struct {
	settings Settings
	install  *Install
	injector inject.Injector
	chunks   []chunk
	inHash   string
}

func (e *Engine) prepare(ctx context.Context, manifest []byte, steps []input.Step, s Settings) (*prepared, error) {
	if len(bytes.TrimSpace(manifest)) == 0 {
		return nil, &input.Error{Field: "manifest", ID: "manifest-empty"}
	}
	if !utf8.Valid(manifest) {
		line := 1 + bytes.Count(manifest[:invalidUTF8At(manifest)], []byte("\n"))
		return nil, &input.Error{Line: line, Field: "manifest", ID: "not-utf8"}
	}
	if len(steps) > e.opts.MaxSteps {
		return nil, &input.Error{Field: "steps", ID: "too-many-steps",
			Params: input.Params("count", strconv.Itoa(len(steps)), "max", strconv.Itoa(e.opts.MaxSteps))}
	}
	validate := e.catalog.ValidateStep
	if e.opts.StepsAsWritten {
		validate = e.catalog.StepBounds
	}
	for i, st := range steps {
		if err := validate(st); err != nil {
			var ie *input.Error
			if errors.As(err, &ie) {
				if ie.Params == nil {
					ie.Params = map[string]string{}
				}
				ie.Params["step"] = strconv.Itoa(i + 1)
			}
			return nil, err
		}
	}
	install, err := e.Install(ctx, s.Install)
	if err != nil {
		return nil, err
	}
	if err := install.webhookRevision(s); err != nil {
		return nil, err
	}
	inj, err := e.clusters.injectorFor(s, install)
	if err != nil {
		return nil, err
	}
	chunks, err := splitDocuments(manifest)
	if err != nil {
		return nil, err
	}
	if err := e.documentsAllowed(len(chunks)); err != nil {
		return nil, err
	}
	sum := sha256.Sum256(manifest)
	return &prepared{settings: s, install: install, injector: inj, chunks: chunks, inHash: hex.EncodeToString(sum[:])}, nil
}

// documentsAllowed refuses more documents than Options.MaxDocuments.
func (e *Engine) documentsAllowed(n int) error {
	if n > e.opts.MaxDocuments {
		return &input.Error{Field: "manifest", ID: "too-many-documents",
			Params: input.Params("count", strconv.Itoa(n), "max", strconv.Itoa(e.opts.MaxDocuments))}
	}
	return nil
}

func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}
