package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/handlers"
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
	if err := parse(fs, args); err != nil {
		return err
	}
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
		e, err := engine.New(ctx, serveEngineOptions())
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

// serveEngineOptions are the engine's options for a server shared by people who do not trust each
// other: install options that name a path on the server or carry template text are refused
// (engine.InstallPolicy's zero value), with a 422 that says so.
func serveEngineOptions() engine.Options {
	return engine.Options{InstallPolicy: engine.InstallPolicy{
		TemplatesHint: "To try a template of your own, run the sidecarlab CLI on your own machine (sidecarlab inject --operator FILE), which allows them.",
	}}
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
