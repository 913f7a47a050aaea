package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sidecarlab/sidecarlab/handlers"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
	"github.com/sidecarlab/sidecarlab/store"
)

// served is a `sidecarlab serve` running in the test.
type served struct {
	base string
	logs *syncBuffer
	stop context.CancelFunc
	// done is closed when serve has returned err.
	done chan struct{}
	err  error
}

// startServe runs serve with args on a free port and waits until it is ready. Its request
// timeout is farAway unless args set one (a later flag wins).
// waitStopped waits for serve to return after it was told to stop, and fails unless it
// returned cleanly.
func (s *served) waitStopped(t *testing.T) {
	t.Helper()
	select {
	case <-s.done:
		if s.err != nil {
			t.Fatalf("serve returned %v after it was told to stop", s.err)
		}
	case <-time.After(testkit.Patience):
		t.Fatal("the server did not stop")
	}
}

func startServe(t *testing.T, args ...string) *served {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &served{logs: &syncBuffer{}, stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		s.err = run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0", "--request-timeout", farAway.String()}, args...), func(string) string { return "" }, strings.NewReader(""), io.Discard, s.logs)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-s.done:
		case <-time.After(testkit.Patience):
		}
	})
	addrRE := regexp.MustCompile(`msg=listening addr=(\S+)`)
	testkit.WaitFor(t, "serve ready", func() bool {
		select {
		case <-s.done:
			t.Fatalf("serve returned %v:\n%s", s.err, s.logs.String())
		default:
		}
		m := addrRE.FindStringSubmatch(s.logs.String())
		if m == nil || !strings.Contains(s.logs.String(), "msg=ready") {
			return false
		}
		s.base = "http://" + m[1]
		return true
	})
	return s
}

func (s *served) get(t *testing.T, path string) (int, http.Header, string) {
	t.Helper()
	resp, err := http.Get(s.base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// storeOK is whether /readyz?verbose says the link store answers: what a wait polls before it
// shares, since /readyz is never rate-limited and shares are.
func (s *served) storeOK(t *testing.T) bool {
	t.Helper()
	_, _, body := s.get(t, "/readyz?verbose")
	return strings.Contains(body, "link store: ok")
}

// share posts the form's share as the page does, without following the redirect.
func (s *served) share(t *testing.T, manifest string) (int, http.Header, string) {
	t.Helper()
	c := &http.Client{Timeout: testkit.Patience, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.PostForm(s.base+"/share", url.Values{"manifest": {manifest}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// TestServeWithoutStore: a link store that cannot be opened at start (its directory is a file)
// does not stop serve: the playground works, sharing answers 503 "sharing is unavailable",
// /readyz?verbose and /metrics say so; when the directory appears, sharing comes back by itself.
func TestServeWithoutStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.WriteFile(dir, []byte("not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, "--db", filepath.Join(dir, "links.db"))
	// The store is opened once the engine is ready, in the background: /readyz?verbose says
	// unavailable before that first attempt ends and after it fails, and the failure is logged
	// when it has (on a busy machine, after the server is ready).
	if code, _, body := s.get(t, "/readyz?verbose"); code != http.StatusOK || !strings.Contains(body, "link store: unavailable") {
		t.Fatalf("/readyz?verbose: %d %q", code, body)
	}
	testkit.WaitFor(t, "the store's failure in the log", func() bool { return strings.Contains(s.logs.String(), "sharing is unavailable") })
	if code, _, _ := s.get(t, "/"); code != http.StatusOK {
		t.Fatalf("the playground without a store: %d", code)
	}
	if _, _, body := s.get(t, "/metrics"); !strings.Contains(body, "sidecarlab_link_store_up 0\n") {
		t.Fatal("/metrics does not say the store is down")
	}
	code, h, body := s.share(t, testkit.Deployment)
	if code != http.StatusServiceUnavailable || h.Get("Retry-After") == "" || !strings.Contains(body, "Sharing is unavailable") {
		t.Fatalf("share without a store: %d %v", code, h)
	}
	if code, _, body := s.get(t, "/s/0123456789abcdef"); code != http.StatusServiceUnavailable || !strings.Contains(body, "cannot be opened right now") {
		t.Fatalf("a short link without a store: %d", code)
	}
	// The directory is fixed: the store opens on its own, and sharing works.
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "sharing after the store came back", func() bool {
		if !s.storeOK(t) {
			return false
		}
		code, h, _ = s.share(t, testkit.Deployment)
		return code == http.StatusSeeOther
	})
	if !strings.HasPrefix(h.Get("Location"), "/s/") {
		t.Fatalf("share after the store came back: %d %v", code, h)
	}
	if code, _, _ := s.get(t, h.Get("Location")); code != http.StatusOK {
		t.Fatalf("the new short link: %d", code)
	}
	if _, _, body := s.get(t, "/readyz?verbose"); !strings.Contains(body, "link store: ok") {
		t.Fatalf("/readyz?verbose after the store came back: %q", body)
	}
	if _, _, body := s.get(t, "/metrics"); !strings.Contains(body, "sidecarlab_link_store_up 1\n") {
		t.Fatal("/metrics does not say the store is back")
	}
}

// TestShutdownWaitsForRequests: the shutdown's grace covers the request timeout (a request that
// started just before SIGTERM may take all of it), and a request in flight at SIGTERM, whose
// client sends its body only after the shutdown began, gets its answer; serve returns nil (exit
// 0). With a grace of 10 s under a 15 s timeout, a slow request was cut and serve failed.
//
// The grace is read from serve's log: waiting it out would make the test as slow as the timeout
// and its outcome a race against the machine's speed.
func TestShutdownWaitsForRequests(t *testing.T) {
	const timeout = 37 * time.Minute // not the default, to see that the grace follows the flag
	s := startServe(t, "--db", filepath.Join(t.TempDir(), "links.db"), "--request-timeout", timeout.String())
	req := holdRequest(t, s.base+"/api/v1/inject", []byte(`{"manifest":"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: a, image: nginx}]}\n"}`))
	s.stop() // SIGTERM, as main's signal context does
	graceRE := regexp.MustCompile(`msg="shutting down" grace=(\S+)`)
	var grace time.Duration
	testkit.WaitFor(t, "serve shutting down", func() bool {
		m := graceRE.FindStringSubmatch(s.logs.String())
		if m != nil {
			grace, _ = time.ParseDuration(m[1])
		}
		return m != nil
	})
	if grace < timeout {
		t.Errorf("the shutdown's grace is %v, shorter than the request timeout %v: a request that started before SIGTERM can be cut", grace, timeout)
	}
	if r := req.send(t); r.err != nil || r.status != http.StatusOK {
		t.Fatalf("the request in flight through the shutdown: %d %v\n%s", r.status, r.err, s.logs.String())
	}
	s.waitStopped(t)
}

// TestServeFlags: the hosting flags are read and checked.
func TestServeFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--trusted-proxies", "10.0.0.0/33"},
		{"--trusted-proxies", "ingress"},
		{"--request-timeout", "0s"},
		{"--heavy-slots", "0"},
		{"--context", "prod"}, // names a cluster to read without --cluster-read
	} {
		err := run(context.Background(), append([]string{"serve", "--addr", "127.0.0.1:0"}, args...), func(string) string { return "" }, strings.NewReader(""), io.Discard, io.Discard)
		if exitCode(err) != 2 {
			t.Errorf("%v: %v (exit %d), want a usage error", args, err, exitCode(err))
		}
	}
}

// TestLinkStoreErrors: the adapter turns package store's failures into the handlers' errors that
// answer 507 and 503, on a real SQLite store: its quota, and a file that cannot be written.
func TestLinkStoreErrors(t *testing.T) {
	ctx := context.Background()
	db, err := store.OpenSQLite(ctx, filepath.Join(t.TempDir(), "links.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	size, _ := db.Size(ctx)
	db.Quota = size + 10<<10
	l := sqlLinks{db}
	if _, err := l.Put(ctx, handlers.Link{State: []byte(strings.Repeat("a", 1<<10))}); err != nil {
		t.Fatalf("under the quota: %v", err)
	}
	if _, err := l.Put(ctx, handlers.Link{State: []byte(strings.Repeat("b", 20<<10))}); !errors.Is(err, handlers.ErrLinkStoreFull) {
		t.Fatalf("over the quota: %v, want ErrLinkStoreFull", err)
	}
	// The store's read-only (a read-only file or replica; store's tests make one) is the handlers'.
	if err := storeError(fmt.Errorf("put: %w: attempt to write a readonly database", store.ErrReadOnly)); !errors.Is(err, handlers.ErrLinkStoreReadOnly) {
		t.Fatalf("read-only: %v, want ErrLinkStoreReadOnly", err)
	}
	if err := storeError(errors.New("connection refused")); errors.Is(err, handlers.ErrLinkStoreFull) || errors.Is(err, handlers.ErrLinkStoreReadOnly) {
		t.Fatalf("another failure: %v", err)
	}
}

// TestReconnectingLinks: a store that was never opened answers ErrLinkStoreUnavailable, says so
// in Health, and is opened again in the background; a store that fails later is unhealthy until
// it answers again.
func TestReconnectingLinks(t *testing.T) {
	var mu sync.Mutex
	var openErr = errors.New("connection refused")
	path := filepath.Join(t.TempDir(), "links.db")
	open := func(ctx context.Context) (*store.SQL, error) {
		mu.Lock()
		defer mu.Unlock()
		if openErr != nil {
			return nil, openErr
		}
		return store.OpenSQLite(ctx, path)
	}
	l := newReconnectingLinks(open, testLogger(), 20*time.Millisecond)
	l.Begin()
	defer l.Close()
	ctx := context.Background()
	if _, err := l.Put(ctx, handlers.Link{State: []byte("x")}); !errors.Is(err, handlers.ErrLinkStoreUnavailable) {
		t.Fatalf("Put before the store opened: %v", err)
	}
	if _, err := l.Get(ctx, "0123456789abcdef"); !errors.Is(err, handlers.ErrLinkStoreUnavailable) {
		t.Fatalf("Get before the store opened: %v", err)
	}
	if !errors.Is(l.Health(), handlers.ErrLinkStoreUnavailable) {
		t.Fatalf("Health: %v", l.Health())
	}
	mu.Lock()
	openErr = nil
	mu.Unlock()
	testkit.WaitFor(t, "the store opened in the background", func() bool { return l.Health() == nil })
	id, err := l.Put(ctx, handlers.Link{State: []byte("x")})
	if err != nil || l.Health() != nil {
		t.Fatalf("after the store opened: %v, health %v", err, l.Health())
	}
	if _, err := l.Get(ctx, id); err != nil {
		t.Fatal(err)
	}
	// It fails later (here: closed under it): unhealthy, and a call says unavailable.
	l.current().Close()
	if _, err := l.Get(ctx, id); err == nil || errors.Is(err, handlers.ErrLinkNotFound) {
		t.Fatalf("Get on a failed store: %v", err)
	}
	if !errors.Is(l.Health(), handlers.ErrLinkStoreUnavailable) {
		t.Fatalf("Health after a failed call: %v", l.Health())
	}
}

// TestLinksHealthCallerEnded: a call that fails because its request ended (the client went away,
// the request's deadline passed) leaves the store healthy; one cut off by the store's own timeout
// (the cause handlers.ErrLinkStoreTimeout) marks it unavailable, until a call succeeds. The
// contexts have ended before the call, so the database fails them at once.
func TestLinksHealthCallerEnded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "links.db")
	l := newReconnectingLinks(func(ctx context.Context) (*store.SQL, error) { return store.OpenSQLite(ctx, path) }, testLogger(), time.Hour)
	l.Begin()
	defer l.Close()
	testkit.WaitFor(t, "the store opened", func() bool { return l.Health() == nil })
	past := time.Unix(0, 0)
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	requestDeadline, cancel := context.WithDeadline(context.Background(), past)
	defer cancel()
	// The handlers' store context under a request whose deadline passed first: the request's cause.
	storeUnderRequest, cancel := context.WithTimeoutCause(requestDeadline, time.Hour, handlers.ErrLinkStoreTimeout)
	defer cancel()
	storeTimeout, cancel := context.WithDeadlineCause(context.Background(), past, handlers.ErrLinkStoreTimeout)
	defer cancel()
	id, err := l.Put(context.Background(), handlers.Link{State: []byte("x")})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		ctx     context.Context
		healthy bool
	}{
		{"the client went away", gone, true},
		{"the request's deadline passed", requestDeadline, true},
		{"the request's deadline passed within the store's timeout", storeUnderRequest, true},
		{"the store's own timeout", storeTimeout, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			for op, call := range map[string]func() error{
				"Put": func() error { _, err := l.Put(c.ctx, handlers.Link{State: []byte("y")}); return err },
				"Get": func() error { _, err := l.Get(c.ctx, id); return err },
			} {
				if err := call(); err == nil {
					t.Fatalf("%s with an ended context succeeded", op)
				}
				if healthy := l.Health() == nil; healthy != c.healthy {
					t.Fatalf("after a failed %s: health %v, want healthy %v", op, l.Health(), c.healthy)
				}
				if !c.healthy && !errors.Is(l.Health(), handlers.ErrLinkStoreUnavailable) {
					t.Fatalf("after a failed %s: health %v, want ErrLinkStoreUnavailable", op, l.Health())
				}
				// A call that works makes it healthy again.
				if _, err := l.Put(context.Background(), handlers.Link{State: []byte("x")}); err != nil || l.Health() != nil {
					t.Fatalf("a working Put: %v, health %v", err, l.Health())
				}
			}
		})
	}
}

// TestLinksOpenAfterBegin: the store is not opened before Begin (serve calls it once the engine
// is ready); a share sent before waits for the first attempt instead of answering 503, and one
// whose request ends first gets its context's error; a store never begun closes.
func TestLinksOpenAfterBegin(t *testing.T) {
	opens := make(chan struct{}, 10)
	path := filepath.Join(t.TempDir(), "links.db")
	open := func(ctx context.Context) (*store.SQL, error) {
		opens <- struct{}{}
		return store.OpenSQLite(ctx, path)
	}
	never := newReconnectingLinks(open, testLogger(), time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := never.Put(ctx, handlers.Link{State: []byte("x")}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Put whose request ended before the first attempt: %v", err)
	}
	if err := never.Close(); err != nil || len(opens) != 0 {
		t.Fatalf("a store never begun: Close %v, opened %d times", err, len(opens))
	}

	l := newReconnectingLinks(open, testLogger(), time.Hour)
	defer l.Close()
	put := make(chan error, 1)
	go func() {
		_, err := l.Put(context.Background(), handlers.Link{State: []byte("x")})
		put <- err
	}()
	select {
	case err := <-put:
		t.Fatalf("Put answered (%v) before the store was begun", err)
	case <-opens:
		t.Fatal("opened before Begin")
	default:
	}
	l.Begin()
	l.Begin() // once
	if err := <-put; err != nil {
		t.Fatalf("Put sent before Begin: %v", err)
	}
	if len(opens) != 1 {
		t.Fatalf("opened %d times, want 1", len(opens))
	}
}

func testLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// TestPostgresStoppedOrHung: with PostgreSQL behind a proxy the test controls, a running server
// answers 503 "sharing is unavailable" while the database is stopped (connections refused) or hung
// (connections accepted, never answered) — the hung one within the store's own timeout, not the
// request's — and shares again once it is back.
func TestPostgresStoppedOrHung(t *testing.T) {
	t.Parallel()
	dsn := testkit.PostgresDSN(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	p := newPGProxy(t, u.Host)
	u.Host = p.addr
	s := startServe(t, "--postgres", u.String()) // the request timeout is farAway: only the store's own cuts the hung one off
	manifest := func(n string) string {
		return strings.Replace(testkit.Deployment, "name: web", "name: "+n+"-"+filepath.Base(t.TempDir()), 1)
	}
	// The store opens in the background (Begin): shares wait for it.
	testkit.WaitFor(t, "the link store opened", func() bool { return s.storeOK(t) })
	if code, _, body := s.share(t, manifest("up")); code != http.StatusSeeOther {
		t.Fatalf("share with PostgreSQL up: %d %.300s", code, body)
	}
	for mode, says := range map[string]string{"stopped": "does not answer", "hung": "did not answer in time"} {
		p.set(mode)
		// The request's own timeout is farAway: a hung store is answered only because the store's
		// timeout cuts it off (share's client gives up after testkit.Patience, failing the test).
		code, h, body := s.share(t, manifest(mode))
		if code != http.StatusServiceUnavailable || h.Get("Retry-After") == "" || !strings.Contains(body, "Sharing is unavailable: the link store "+says) || strings.Contains(body, "smaller input") {
			t.Fatalf("%s: %d %v %.500s", mode, code, h, body)
		}
		p.set("up")
		testkit.WaitFor(t, "sharing after PostgreSQL came back from "+mode, func() bool {
			if !s.storeOK(t) {
				return false
			}
			code, _, body = s.share(t, manifest(mode+"-back"))
			return code == http.StatusSeeOther
		})
	}
}

// pgProxy forwards TCP to PostgreSQL while up; stopped cuts every connection and refuses new ones
// (closes them at once); hung holds every byte on the connections that are open and accepts new
// ones without answering, as a database that stopped responding.
type pgProxy struct {
	addr, target string
	mu           sync.Mutex
	mode         string
	conns        []net.Conn
}

func newPGProxy(t *testing.T, target string) *pgProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &pgProxy{addr: ln.Addr().String(), target: target, mode: "up"}
	t.Cleanup(func() { ln.Close(); p.set("stopped") })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			mode := p.mode
			p.conns = append(p.conns, c)
			p.mu.Unlock()
			switch mode {
			case "stopped":
				c.Close()
			case "up":
				go p.forward(c)
			} // hung: held open, never answered
		}
	}()
	return p
}

func (p *pgProxy) forward(c net.Conn) {
	d, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	p.conns = append(p.conns, d)
	p.mu.Unlock()
	go p.pipe(d, c)
	p.pipe(c, d)
}

// pipe copies src to dst, holding what it read while the proxy is hung.
func (p *pgProxy) pipe(dst, src net.Conn) {
	defer dst.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		for p.is("hung") {
			time.Sleep(10 * time.Millisecond)
		}
		if n > 0 {
			if _, err := dst.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *pgProxy) is(mode string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mode == mode
}

func (p *pgProxy) set(mode string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mode = mode
	if mode == "stopped" {
		for _, c := range p.conns {
			c.Close()
		}
		p.conns = nil
	}
}

// TestLinksHealthBeforeTheFirstAttempt: while the first attempt to open the store has not ended
// (a slow disk, a busy machine), the store is unavailable, never ok; once it opens, it is ok.
func TestLinksHealthBeforeTheFirstAttempt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "links.db")
	release := make(chan struct{})
	open := func(ctx context.Context) (*store.SQL, error) {
		<-release
		return store.OpenSQLite(ctx, path)
	}
	l := newReconnectingLinks(open, testLogger(), time.Hour)
	defer l.Close()
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	defer free() // before Close, which waits for the attempt
	l.Begin()
	if !errors.Is(l.Health(), handlers.ErrLinkStoreUnavailable) {
		t.Fatalf("Health while the first attempt runs: %v", l.Health())
	}
	free()
	testkit.WaitFor(t, "the first attempt opened the store", func() bool { return l.Health() == nil })
}
