package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/sidecarlab/sidecarlab/clustermesh"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/handlers"
	"github.com/sidecarlab/sidecarlab/internal/hugepages"
	"github.com/sidecarlab/sidecarlab/room"
	"github.com/sidecarlab/sidecarlab/sandbox"
	"github.com/sidecarlab/sidecarlab/store"
)

// newServeCmd is serve: the playground until the process is told to stop.
func newServeCmd(c *cli) *cobra.Command {
	var o serveOptions
	cmd := &cobra.Command{
		Use:   "serve",
		Short: c.T("cli.serve.short"),
		Long:  c.T("cli.serve.long"),
		Example: examples(c,
			"# "+c.T("cli.serve.example.e1"),
			"{} serve",
			"",
			"# "+c.T("cli.serve.example.e2"),
			"SIDECARLAB_POSTGRES=postgres://... {} serve --addr :9000 --trusted-proxies 10.0.0.0/8",
			"",
			"# "+c.T("cli.serve.example.e3"),
			"{} serve --allow-custom-templates=false"),
		Args: c.noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.iso.explicit = cmd.Flags().Changed("allow-custom-templates")
			return serveRun(c, o)
		},
	}
	o.register(c, cmd)
	return cmd
}

// serveOptions are serve's flags.
type serveOptions struct {
	addr, dbPath, postgres, trusted string
	// cpuProfile, when set, is where a CPU profile of the whole run is written (hidden: for
	// measuring the server under the load test, see BENCHMARKS.md).
	cpuProfile string
	quota      int64
	cfg        handlers.Config
	iso        isolation
	// clusterRead reads the cluster the server runs in (or the one cluster names) for the
	// page's "this cluster's mesh" and namespaces.
	clusterRead bool
	cluster     clusterFlags
	// rooms bound the workshops' rooms (room.Limits).
	rooms room.Limits
}

func (o *serveOptions) register(c *cli, cmd *cobra.Command) {
	getenv := c.getenv
	o.addr = getenv("SIDECARLAB_ADDR")
	if o.addr == "" {
		o.addr = ":8080"
	}
	o.dbPath = getenv("SIDECARLAB_DB")
	if o.dbPath == "" {
		o.dbPath = "sidecarlab.db"
	}
	o.postgres = getenv("SIDECARLAB_POSTGRES")
	o.cfg.PublicURL = getenv("SIDECARLAB_PUBLIC_URL")
	fs := cmd.Flags()
	// The server's limits default to the handlers' own (--max-concurrent 0 is theirs too).
	def := handlers.Defaults()
	fs.StringVar(&o.addr, "addr", o.addr, c.T("cli.flag.serve.addr"))
	fs.StringVar(&o.dbPath, "db", o.dbPath, c.T("cli.flag.serve.db"))
	fs.StringVar(&o.postgres, "postgres", o.postgres, c.T("cli.flag.serve.postgres"))
	fs.Int64Var(&o.cfg.MaxBodyBytes, "max-body", def.MaxBodyBytes, c.T("cli.flag.serve.max_body"))
	fs.IntVar(&o.cfg.MaxConcurrent, "max-concurrent", 0, c.T("cli.flag.serve.max_concurrent"))
	fs.IntVar(&o.cfg.HeavySlots, "heavy-slots", def.HeavySlots, c.T("cli.flag.serve.heavy_slots"))
	fs.IntVar(&o.cfg.RatePerMinute, "rate-limit", def.RatePerMinute, c.T("cli.flag.serve.rate_limit"))
	fs.IntVar(&o.cfg.WriteRatePerMinute, "share-rate-limit", def.WriteRatePerMinute, c.T("cli.flag.serve.share_rate_limit"))
	fs.IntVar(&o.cfg.RoomRatePerMinute, "room-rate-limit", def.RoomRatePerMinute, c.T("cli.flag.serve.room_rate_limit"))
	o.rooms = room.DefaultLimits()
	fs.IntVar(&o.rooms.Rooms, "rooms", o.rooms.Rooms, c.T("cli.flag.serve.rooms"))
	fs.IntVar(&o.rooms.Learners, "room-learners", o.rooms.Learners, c.T("cli.flag.serve.room_learners"))
	fs.DurationVar(&o.rooms.Idle, "room-idle", o.rooms.Idle, c.T("cli.flag.serve.room_idle"))
	fs.DurationVar(&o.cfg.RequestTimeout, "request-timeout", def.RequestTimeout, c.T("cli.flag.serve.request_timeout"))
	fs.StringVar(&o.cfg.PublicURL, "public-url", o.cfg.PublicURL, c.T("cli.flag.serve.public_url"))
	fs.StringVar(&o.trusted, "trusted-proxies", "", c.T("cli.flag.serve.trusted_proxies"))
	fs.Int64Var(&o.quota, "store-quota", 1<<30, c.T("cli.flag.serve.store_quota"))
	fs.BoolVar(&o.iso.allow, "allow-custom-templates", true, c.T("cli.flag.serve.allow_custom_templates"))
	o.iso.limits = sandbox.DefaultLimits()
	fs.IntVar(&o.iso.limits.CPUSeconds, "worker-cpu-seconds", o.iso.limits.CPUSeconds, c.T("cli.flag.serve.worker_cpu_seconds"))
	fs.Int64Var(&o.iso.limits.MemoryBytes, "worker-memory", o.iso.limits.MemoryBytes, c.T("cli.flag.serve.worker_memory"))
	fs.IntVar(&o.iso.maxWorkers, "max-workers", 0, c.T("cli.flag.serve.max_workers"))
	fs.BoolVar(&o.clusterRead, "cluster-read", false, c.T("cli.flag.serve.cluster_read"))
	o.cluster.register(c, cmd)
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", c.T("cli.flag.serve.cpuprofile"))
	_ = fs.MarkHidden("cpuprofile")
	for _, name := range []string{"addr", "postgres", "max-body", "max-concurrent", "heavy-slots", "rate-limit", "share-rate-limit", "room-rate-limit", "rooms", "room-learners", "room-idle", "request-timeout", "public-url", "trusted-proxies", "store-quota", "worker-cpu-seconds", "worker-memory", "max-workers"} {
		_ = cmd.RegisterFlagCompletionFunc(name, cobra.NoFileCompletions)
	}
}

// clusterCatalogTTL is how long the page's list of the cluster's revisions and namespaces is
// kept: a page served to a room asks the API server once in a while, not once a request.
const clusterCatalogTTL = 30 * time.Second

// settleAfter is how long after ready serve settles the start's huge pages
// (internal/hugepages): past the first requests of a start, long before a steady load.
const settleAfter = 2 * time.Second

// serveRun serves the playground until ctx ends. It listens at once and renders the default
// installation in the background: /healthz answers immediately, /readyz once the engine is ready.
func serveRun(c *cli, o serveOptions) error {
	ctx, cfg := c.ctx, o.cfg
	var err error
	if cfg.TrustedProxies, err = handlers.ParseTrustedProxies(o.trusted); err != nil {
		return usageError{fmt.Sprintf("--trusted-proxies: %v", err)}
	}
	if cfg.RequestTimeout <= 0 {
		return usageError{c.T("cli.error.request_timeout")}
	}
	if cfg.HeavySlots < 1 {
		return usageError{c.T("cli.error.heavy_slots")}
	}
	if cfg.PublicURL, err = publicURL(cfg.PublicURL); err != nil {
		return usageError{c.T("cli.error.public_url", "Value", fmt.Sprintf("%q", cfg.PublicURL))}
	}
	if o.rooms.Rooms < 0 || o.rooms.Learners < 0 || o.rooms.Idle < 0 {
		return usageError{c.T("cli.error.rooms")}
	}
	// Rooms live in this process (--rooms 0 turns them off); Shutdown ends their event streams,
	// which would otherwise hold it until its grace is over.
	if o.rooms.Rooms > 0 {
		cfg.Rooms = room.New(o.rooms, time.Now)
	}
	if o.cluster.given() && !o.clusterRead {
		return usageError{c.T("cli.error.cluster_read")}
	}
	if o.clusterRead {
		r, err := o.cluster.reader(c)
		if err != nil {
			return err
		}
		cfg.Cluster = &clustermesh.Cached{Reader: r, TTL: clusterCatalogTTL}
	}
	logger := slog.New(slog.NewTextHandler(c.stderr, nil))
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return err
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}

	// The playground does not need the link store: one that cannot be opened is logged, reported
	// on /readyz?verbose and /metrics, answered with 503 "sharing is unavailable", and opened
	// again in the background.
	links := newReconnectingLinks(func(ctx context.Context) (*store.SQL, error) {
		var db *store.SQL
		var err error
		if o.postgres != "" {
			db, err = store.OpenPostgres(ctx, o.postgres)
		} else {
			db, err = store.OpenSQLite(ctx, o.dbPath)
		}
		if err == nil {
			db.Quota = o.quota
		}
		return db, err
	}, logger, storeRetry)
	defer links.Close()

	// The engine starts in the background, tied to ctx; before returning, serveRun waits for it
	// to finish starting and closes it, so an early shutdown leaves nothing running.
	var ready atomic.Pointer[engine.Engine]
	start := time.Now()
	engErr := make(chan error, 1)
	engDone := make(chan struct{})
	go func() {
		defer close(engDone)
		// The link store opens once the engine is ready (or could not start): opening SQLite
		// takes the cores for tens of milliseconds, which the engine's start needs more.
		defer links.Begin()
		o.iso.maxOutput = o.cfg.MaxBodyBytes
		opts, err := o.iso.engineOptions(ctx, logger)
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
		// The huge pages that made the start cheap would make the requests slower: settle them
		// once the start is over. Returning the free heap is a whole collection, which right
		// at ready would be in the way of the first requests (ready.py: 51 ms after version
		// against 16–31 ms).
		time.AfterFunc(settleAfter, func() {
			if hugepages.Settle() {
				debug.FreeOSMemory()
			}
		})
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
	}, withLinks(cfg, links))
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      writeTimeout(cfg.RequestTimeout),
		IdleTimeout:       120 * time.Second,
		// Requests do not inherit ctx: when it ends, Shutdown lets those in flight finish.
	}
	if cfg.Rooms != nil {
		srv.RegisterOnShutdown(cfg.Rooms.Close)
		if o.postgres != "" {
			// Every replica on this PostgreSQL serves every room (LISTEN/NOTIFY); while it does
			// not answer, each replica's rooms are its own, and their trainers are told.
			shared, err := room.SharePostgres(o.postgres, cfg.Rooms, cmp.Or(cfg.StoreTimeout, handlers.Defaults().StoreTimeout), logger.Info)
			if err != nil {
				return usageError{fmt.Sprintf("--postgres: %v", err)}
			}
			defer shared.Close()
		}
	}
	ln, err := net.Listen("tcp", o.addr)
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
	// Every request's work ends within the request timeout, so waiting that long (and a little
	// more for the answer to be written) lets every request in flight finish.
	grace := cfg.RequestTimeout + 5*time.Second
	logger.Info("shutting down", "grace", grace)
	shutdownCtx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		// Only a client too slow to send or read its request is left: cut it. The stop itself was
		// clean, so it is not a failure.
		logger.Warn("shutdown grace over; closing the connections left", "err", err)
		_ = srv.Close()
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// storeRetry is how often a link store that is not answering is tried again (and one that is,
// pinged).
const storeRetry = 2 * time.Second

// isolation is how serve treats install options that bring templates: allowed and run in
// isolated workers (the default), or refused (--allow-custom-templates=false, a locked-down
// server).
type isolation struct {
	allow bool
	// explicit: --allow-custom-templates was given. A server that cannot start its workers then
	// fails to start, where by default it serves locked down and says why.
	explicit bool
	// worker is the program a worker runs (`worker` is its argument); empty, this binary.
	worker     string
	limits     sandbox.Limits
	maxWorkers int
	// maxOutput bounds a worker's answer: --max-body, what a manifest may be.
	maxOutput int64
}

// lockedDownHint ends a locked-down server's refusal of a template: why it refuses, and what an
// operator changes.
const lockedDownHint = "This server was started with --allow-custom-templates=false (Helm chart value allowCustomTemplates: false); " +
	"by default sidecarlab runs them in an isolated worker process."

// serveEngineOptions are the engine's options for a server that runs no templates but Istio's
// own: install options that name a path on the server or carry template text are refused
// (engine.InstallPolicy's zero value), with a 422 that says so and why (hint).
func serveEngineOptions(hint string) engine.Options {
	return engine.Options{InstallPolicy: engine.InstallPolicy{TemplatesHint: hint}}
}

// engineOptions are the engine's options for serve. With templates allowed, a sandbox of workers
// (this binary's hidden `worker` command) runs every render of non-default options and every
// injection under templates of a user's own; paths on the server stay refused. Where no worker
// can start (not Linux; a worker that keeps a capability it cannot drop), a server that was not
// told --allow-custom-templates serves locked down and says so in its log and its refusals.
func (i isolation) engineOptions(ctx context.Context, logger *slog.Logger) (engine.Options, error) {
	if !i.allow {
		logger.Info("custom templates refused (--allow-custom-templates=false): only Istio's own templates run")
		return serveEngineOptions(lockedDownHint), nil
	}
	sb, err := i.sandbox(ctx)
	if err == nil {
		logger.Info("custom templates allowed; they run in isolated workers",
			"cpu_seconds", i.limits.CPUSeconds, "memory_bytes", i.limits.MemoryBytes,
			"network_namespace", sb.IsolatesNetwork(), "user_namespace", sb.InUserNamespace())
		if !sb.IsolatesNetwork() {
			logger.Warn("workers cannot have namespaces of their own (as root, or in a user namespace of their own: this system allows neither): their seccomp filter still refuses every socket, but they read the server's /etc/hosts, so templates that resolve names (getHostByName) are refused")
		}
		return engine.Options{InstallPolicy: engine.InstallPolicy{AllowCustomTemplates: true}, Isolator: sandbox.Isolator(sb)}, nil
	}
	if i.explicit {
		return engine.Options{}, fmt.Errorf("--allow-custom-templates: %w", err)
	}
	logger.Warn("custom templates refused: the isolated workers they run in cannot start here; only Istio's own templates run", "err", err)
	return serveEngineOptions(fmt.Sprintf("This server could not start the isolated worker process it runs them in (%v), so it runs Istio's own templates only.", err)), nil
}

// sandbox starts the workers' sandbox: i.worker, or this binary, as `worker`.
func (i isolation) sandbox(ctx context.Context) (*sandbox.Sandbox, error) {
	exe := i.worker
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return nil, err
		}
	}
	return sandbox.New(ctx, sandbox.Config{Command: []string{exe, "worker"}, Limits: i.limits, MaxWorkers: i.maxWorkers, MaxOutput: i.maxOutput})
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

// publicURL checks --public-url: empty, or an absolute http(s) URL with no query, fragment or
// user, which links are made under (its trailing "/" dropped).
func publicURL(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("%q: want an http:// or https:// address such as https://sidecarlab.example.com (a path is kept; no query, fragment or user)", s)
	}
	return strings.TrimSuffix(u.String(), "/"), nil
}

// writeTimeout is how long the server gives a request to be answered: its work's timeout
// (--request-timeout) and time to write the answer after it, and never less than a minute, so
// that a slow reader of a large answer is not cut when the work was quick.
func writeTimeout(request time.Duration) time.Duration {
	return max(request+30*time.Second, time.Minute)
}
