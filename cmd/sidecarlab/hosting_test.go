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

// startServe runs serve with args on a free port and waits until it is ready.
func startServe(t *testing.T, args ...string) *served {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &served{logs: &syncBuffer{}, stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		s.err = run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...), func(string) string { return "" }, strings.NewReader(""), io.Discard, s.logs)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-s.done:
		case <-time.After(30 * time.Second):
		}
	})
	addrRE := regexp.MustCompile(`msg=listening addr=(\S+)`)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		select {
		case <-s.done:
			t.Fatalf("serve returned %v:\n%s", s.err, s.logs.String())
		default:
		}
		if m := addrRE.FindStringSubmatch(s.logs.String()); m != nil && strings.Contains(s.logs.String(), "msg=ready") {
			s.base = "http://" + m[1]
			return s
		}
	}
	t.Fatalf("the server did not become ready:\n%s", s.logs.String())
	return nil
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

// share posts the form's share as the page does, without following the redirect.
func (s *served) share(t *testing.T, manifest string) (int, http.Header, string) {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
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
	if !strings.Contains(s.logs.String(), "sharing is unavailable") {
		t.Fatalf("the store's failure is not logged:\n%s", s.logs.String())
	}
	if code, _, _ := s.get(t, "/"); code != http.StatusOK {
		t.Fatalf("the playground without a store: %d", code)
	}
	if code, _, body := s.get(t, "/readyz?verbose"); code != http.StatusOK || !strings.Contains(body, "link store: unavailable") {
		t.Fatalf("/readyz?verbose: %d %q", code, body)
	}
	if _, _, body := s.get(t, "/metrics"); !strings.Contains(body, "sidecarlab_link_store_up 0\n") {
		t.Fatal("/metrics does not say the store is down")
	}
	code, h, body := s.share(t, deployment)
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
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, h, _ = s.share(t, deployment)
		if code == http.StatusSeeOther || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if code != http.StatusSeeOther || !strings.HasPrefix(h.Get("Location"), "/s/") {
		t.Fatalf("share after the store came back: %d", code)
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

// TestShutdownWaitsForRequests: a request still in flight 11 s after SIGTERM (its client sends
// its body slowly) gets its answer, and serve returns nil (exit 0): the grace covers the request
// timeout. With a grace of 10 s the request was cut and serve failed.
func TestShutdownWaitsForRequests(t *testing.T) {
	if testing.Short() {
		t.Skip("takes 12 s")
	}
	s := startServe(t, "--db", filepath.Join(t.TempDir(), "links.db"))
	body := `{"manifest":"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: a, image: nginx}]}\n"}`
	pr, pw := io.Pipe()
	type result struct {
		status int
		err    error
	}
	res := make(chan result, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, s.base+"/api/v1/inject", pr)
		req.Header.Set("Content-Type", "application/json")
		req.ContentLength = int64(len(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			res <- result{err: err}
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		res <- result{status: resp.StatusCode}
	}()
	_, _ = pw.Write([]byte(body[:10]))
	time.Sleep(200 * time.Millisecond) // the request is in flight
	s.stop()                           // SIGTERM, as main's signal context does
	time.Sleep(11 * time.Second)
	_, _ = pw.Write([]byte(body[10:]))
	_ = pw.Close()
	r := <-res
	if r.err != nil || r.status != http.StatusOK {
		t.Fatalf("the request 11 s into the shutdown: %d %v\n%s", r.status, r.err, s.logs.String())
	}
	select {
	case <-s.done:
		if s.err != nil {
			t.Fatalf("serve returned %v after a clean SIGTERM", s.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not stop")
	}
}

// TestServeFlags: the hosting flags are read and checked.
func TestServeFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--trusted-proxies", "10.0.0.0/33"},
		{"--trusted-proxies", "ingress"},
		{"--request-timeout", "0s"},
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
	defer l.Close()
	ctx := context.Background()
	if _, err := l.Put(ctx, handlers.Link{State: []byte("x")}); !errors.Is(err, handlers.ErrLinkStoreUnavailable) {
		t.Fatalf("Put before the store opened: %v", err)
	}
	if _, err := l.Get(ctx, store.ID([]byte("x"))); !errors.Is(err, handlers.ErrLinkStoreUnavailable) {
		t.Fatalf("Get before the store opened: %v", err)
	}
	if !errors.Is(l.Health(), handlers.ErrLinkStoreUnavailable) {
		t.Fatalf("Health: %v", l.Health())
	}
	mu.Lock()
	openErr = nil
	mu.Unlock()
	deadline := time.Now().Add(5 * time.Second)
	for l.Health() != nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
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

func testLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// TestPostgresStoppedOrHung: with PostgreSQL behind a proxy the test controls, a running server
// answers 503 "sharing is unavailable" while the database is stopped (connections refused) or hung
// (connections accepted, never answered) — the hung one within the store's own timeout, not the
// request's — and shares again once it is back.
func TestPostgresStoppedOrHung(t *testing.T) {
	dsn := os.Getenv("SIDECARLAB_TEST_POSTGRES")
	if dsn == "" {
		if os.Getenv("SIDECARLAB_REQUIRE_POSTGRES") != "" || os.Getenv("CI") != "" {
			t.Fatal("SIDECARLAB_TEST_POSTGRES is not set; scripts/testenv.sh (make test) must start PostgreSQL")
		}
		t.Skip("SIDECARLAB_TEST_POSTGRES not set; `make test` starts a throwaway PostgreSQL and sets it")
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	p := newPGProxy(t, u.Host)
	u.Host = p.addr
	s := startServe(t, "--postgres", u.String())
	manifest := func(n string) string {
		return strings.Replace(deployment, "name: web", "name: "+n+"-"+filepath.Base(t.TempDir()), 1)
	}
	if code, _, body := s.share(t, manifest("up")); code != http.StatusSeeOther {
		t.Fatalf("share with PostgreSQL up: %d %.300s", code, body)
	}
	for mode, says := range map[string]string{"stopped": "does not answer", "hung": "did not answer in time"} {
		p.set(mode)
		start := time.Now()
		code, h, body := s.share(t, manifest(mode))
		took := time.Since(start)
		if code != http.StatusServiceUnavailable || h.Get("Retry-After") == "" || !strings.Contains(body, "Sharing is unavailable: the link store "+says) || strings.Contains(body, "smaller input") {
			t.Fatalf("%s: %d %v %.500s", mode, code, h, body)
		}
		if took > 10*time.Second { // the store's own 3 s, not the request's 15 s
			t.Fatalf("%s: took %v", mode, took)
		}
		p.set("up")
		deadline := time.Now().Add(15 * time.Second)
		for {
			code, _, body = s.share(t, manifest(mode+"-back"))
			if code == http.StatusSeeOther || time.Now().After(deadline) {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if code != http.StatusSeeOther {
			t.Fatalf("after PostgreSQL came back from %s: %d %.300s", mode, code, body)
		}
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
