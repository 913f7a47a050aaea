package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/handlers"
	"github.com/sidecarlab/sidecarlab/sandbox"
	"github.com/sidecarlab/sidecarlab/store"
)

// runServe serves the playground until ctx ends. It listens at once and renders the default
// installation in the background: /healthz answers immediately, /readyz once the engine is ready.
func runServe(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	addr := getenv("SIDECARLAB_ADDR")
	if addr == "" {
		addr = ":8080"
	}
	dbPath := getenv("SIDECARLAB_DB")
	if dbPath == "" {
		dbPath = "sidecarlab.db"
	}
	postgres := getenv("SIDECARLAB_POSTGRES")
	fs := newFlagSet("serve", stderr)
	fs.StringVar(&addr, "addr", addr, "address to listen on (env SIDECARLAB_ADDR)")
	fs.StringVar(&dbPath, "db", dbPath, "SQLite file for shared links, created on first use (env SIDECARLAB_DB)")
	fs.StringVar(&postgres, "postgres", postgres, "PostgreSQL DSN for shared links, instead of SQLite (env SIDECARLAB_POSTGRES)")
	var cfg handlers.Config
	fs.Int64Var(&cfg.MaxBodyBytes, "max-body", 1<<20, "largest request body in bytes")
	fs.IntVar(&cfg.MaxConcurrent, "max-concurrent", 0, "injections running at once (0: 2 × GOMAXPROCS); more wait, then get 503")
	fs.IntVar(&cfg.RatePerMinute, "rate-limit", 6000, "requests per minute per client address (-1: off)")
	var iso isolation
	fs.BoolVar(&iso.allow, "allow-custom-templates", false, "accept install options that bring injection templates (or template text), and run them in isolated worker processes")
	limits := sandbox.DefaultLimits()
	fs.IntVar(&limits.CPUSeconds, "worker-cpu-seconds", limits.CPUSeconds, "CPU time a worker may use (with --allow-custom-templates)")
	fs.Int64Var(&limits.MemoryBytes, "worker-memory", limits.MemoryBytes, "memory in bytes a worker may map beyond its start (with --allow-custom-templates)")
	fs.IntVar(&iso.maxWorkers, "max-workers", 0, "workers running at once (0: GOMAXPROCS; with --allow-custom-templates)")
	if err := parse(fs, args); err != nil {
		return err
	}
	iso.limits = limits
	logger := slog.New(slog.NewTextHandler(stderr, nil))

	var links *store.SQL
	var err error
	if postgres != "" {
		links, err = store.OpenPostgres(postgres)
	} else {
		links, err = store.OpenSQLite(dbPath)
	}
	if err != nil {
		return fmt.Errorf("link store: %w", err)
	}
	defer links.Close()

	// The engine starts in the background, tied to ctx; before returning, runServe waits for it
	// to finish starting and closes it, so an early shutdown leaves nothing running.
	var ready atomic.Pointer[engine.Engine]
	start := time.Now()
	engErr := make(chan error, 1)
	engDone := make(chan struct{})
	go func() {
		defer close(engDone)
		opts, err := iso.engineOptions(ctx, logger)
		if err != nil {
			engErr <- err
			return
		}
		e, err := engine.New(ctx, opts)
		if err != nil {
			engErr <- err
			return
		}
		ready.Store(e)
		logger.Info("ready", "istio", engine.Version().Istio, "after", time.Since(start).Round(time.Millisecond))
	}()
	defer func() {
		<-engDone
		if e := ready.Load(); e != nil {
			e.Close()
		}
	}()

	h := handlers.New(logger, func() handlers.Engine {
		if e := ready.Load(); e != nil {
			return e
		}
		return nil
	}, withLinks(cfg, sqlLinks{links}))
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		// Requests do not inherit ctx: when it ends, Shutdown lets those in flight finish.
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	logger.Info("listening", "addr", ln.Addr().String(), "url", fmt.Sprintf("http://%s/", displayAddr(ln.Addr())))

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case err := <-engErr:
		if ctx.Err() == nil {
			_ = srv.Close()
			return fmt.Errorf("engine: %w", err)
		}
		// Shut down before the engine was ready: that is a stop, not a failure.
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return err
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// isolation is how serve treats install options that bring templates: refused (the default),
// or allowed and run in isolated workers.
type isolation struct {
	allow      bool
	limits     sandbox.Limits
	maxWorkers int
}

// serveEngineOptions are the engine's options for a server shared by people who do not trust each
// other, when templates are not allowed: install options that name a path on the server or carry
// template text are refused (engine.InstallPolicy's zero value), with a 422 that says so and how
// an operator allows templates.
func serveEngineOptions() engine.Options {
	return engine.Options{InstallPolicy: engine.InstallPolicy{
		TemplatesHint: "An operator can allow them: sidecarlab serve --allow-custom-templates (Helm chart value allowCustomTemplates: true) runs them in an isolated worker process.",
	}}
}

// engineOptions are the engine's options for serve. With templates allowed, a sandbox of workers
// (this binary's hidden `worker` command) runs every render of non-default options and every
// injection under templates of a user's own; paths on the server stay refused.
func (i isolation) engineOptions(ctx context.Context, logger *slog.Logger) (engine.Options, error) {
	if !i.allow {
		return serveEngineOptions(), nil
	}
	exe, err := os.Executable()
	if err != nil {
		return engine.Options{}, fmt.Errorf("--allow-custom-templates: locating this binary for its workers: %w", err)
	}
	sb, err := sandbox.New(ctx, sandbox.Config{Command: []string{exe, "worker"}, Limits: i.limits, MaxWorkers: i.maxWorkers})
	if err != nil {
		return engine.Options{}, fmt.Errorf("--allow-custom-templates: %w", err)
	}
	logger.Info("custom templates allowed; they run in isolated workers",
		"cpu_seconds", i.limits.CPUSeconds, "memory_bytes", i.limits.MemoryBytes, "network_namespace", sb.IsolatesNetwork())
	if !sb.IsolatesNetwork() {
		logger.Warn("workers cannot have a network namespace of their own (that needs root); templates that resolve names (getHostByName) are refused")
	}
	return engine.Options{InstallPolicy: engine.InstallPolicy{AllowCustomTemplates: true}, Isolator: sandbox.Isolator(sb)}, nil
}

func displayAddr(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok || tcp.IP.IsUnspecified() {
		if ok {
			return fmt.Sprintf("localhost:%d", tcp.Port)
		}
		return a.String()
	}
	return a.String()
}

func withLinks(cfg handlers.Config, links handlers.LinkStore) handlers.Config {
	cfg.Links = links
	return cfg
}
