package handlers

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/go-chi/chi/v5"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
	"github.com/sidecarlab/sidecarlab/permalink"
)

// TestCrossSitePosts: a state-changing POST a browser sends from another site's page is refused
// (403), on the form, /share and the API; the same page's posts, and clients that send neither
// Sec-Fetch-Site nor Origin (curl), pass.
func TestCrossSitePosts(t *testing.T) {
	h := serverWith(t, newMemLinks())
	form := url.Values{"manifest": {testkit.Deployment}}.Encode()
	apiBody := `{"manifest":` + jsonString(testkit.Deployment) + `}`
	posts := []struct {
		path, ct, body string
		ok             int
	}{
		{"/", "application/x-www-form-urlencoded", form, http.StatusSeeOther},
		{"/share", "application/x-www-form-urlencoded", form, http.StatusSeeOther},
		{"/api/v1/inject", "application/json", apiBody, http.StatusOK},
	}
	headers := []struct {
		name    string
		h       map[string]string
		refused bool
	}{
		{"Sec-Fetch-Site cross-site", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}, true},
		{"Sec-Fetch-Site same-site", map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "https://other.example.com"}, true},
		{"an old browser's foreign Origin", map[string]string{"Origin": "https://evil.example"}, true},
		{"Sec-Fetch-Site same-origin", map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "http://example.com"}, false},
		{"an old browser's own Origin", map[string]string{"Origin": "http://example.com"}, false},
		{"a typed address (none)", map[string]string{"Sec-Fetch-Site": "none"}, false},
		{"curl: neither header", nil, false},
	}
	for _, p := range posts {
		for _, c := range headers {
			t.Run(p.path+" "+c.name, func(t *testing.T) {
				req := httptest.NewRequest(http.MethodPost, p.path, strings.NewReader(p.body)) // Host: example.com
				req.Header.Set("Content-Type", p.ct)
				for k, v := range c.h {
					req.Header.Set(k, v)
				}
				r := do(t, h, req)
				want := p.ok
				if c.refused {
					want = http.StatusForbidden
				}
				if r.status != want {
					t.Fatalf("status %d, want %d: %.200s", r.status, want, r.body)
				}
				if c.refused && !strings.Contains(r.body, "another site") {
					t.Fatalf("the refusal does not say why: %.300s", r.body)
				}
				// The refusal is shown as every error of its path is: the API's as its JSON body.
				if isJSON := strings.HasPrefix(r.header.Get("Content-Type"), "application/json"); c.refused && isJSON != strings.HasPrefix(p.path, "/api/") {
					t.Fatalf("the refusal of %s as %q", p.path, r.header.Get("Content-Type"))
				}
			})
		}
	}
	// A cross-site GET (a link from elsewhere) is a read and passes.
	req := httptest.NewRequest(http.MethodGet, stateLink(t, api.State{Manifest: testkit.Deployment}), nil)
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	if r := do(t, h, req); r.status != http.StatusOK {
		t.Fatalf("a cross-site link: %d", r.status)
	}
}

func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// TestAPIBody: the API takes application/json and one JSON object, nothing else: a body a
// cross-site fetch may send without a preflight (text/plain, no type) is refused, and so is
// anything after the object.
func TestAPIBody(t *testing.T) {
	h := newServer(t)
	obj := `{"manifest":` + jsonString(testkit.Deployment) + `}`
	cases := []struct {
		name, ct, body string
		status         int
	}{
		{"application/json", "application/json", obj, http.StatusOK},
		{"with a charset", "application/json; charset=utf-8", obj, http.StatusOK},
		{"trailing white space", "application/json", obj + "\n\n", http.StatusOK},
		{"no content type", "", obj, http.StatusUnsupportedMediaType},
		{"text/plain", "text/plain", obj, http.StatusUnsupportedMediaType},
		{"a form", "application/x-www-form-urlencoded", obj, http.StatusUnsupportedMediaType},
		{"application/jsonx", "application/jsonx", obj, http.StatusUnsupportedMediaType},
		{"a second object", "application/json", obj + `{"manifest":"kind: Pod"}`, http.StatusBadRequest},
		{"trailing garbage", "application/json", obj + " garbage", http.StatusBadRequest},
		{"a trailing bracket", "application/json", obj + "]", http.StatusBadRequest},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, "/api/v1/inject", strings.NewReader(c.body))
			if c.ct != "" {
				req.Header.Set("Content-Type", c.ct)
			}
			if r := do(t, h, req); r.status != c.status {
				t.Fatalf("status %d, want %d: %.200s", r.status, c.status, r.body)
			}
		})
	}
}

// TestStaticListsNoDirectory: /static/ serves its files and lists no directory.
func TestStaticListsNoDirectory(t *testing.T) {
	h := newServer(t)
	for target, want := range map[string]int{
		"/static/app.css":      http.StatusOK,
		"/static/dist/app.js":  http.StatusOK,
		"/static/":             http.StatusNotFound,
		"/static/dist/":        http.StatusNotFound,
		"/static/dist":         http.StatusNotFound,
		"/static/nothing.here": http.StatusNotFound,
	} {
		r := get(t, h, target)
		if r.status != want || strings.Contains(r.body, `<a href="app.css">`) || strings.Contains(r.body, `<a href="app.js">`) {
			t.Errorf("%s: %d, want %d: %.200s", target, r.status, want, r.body)
		}
	}
}

// TestHead: every GET route answers HEAD as it answers GET, without a body.
func TestHead(t *testing.T) {
	links := newMemLinks()
	h := serverWith(t, links)
	id := strings.TrimPrefix(share(t, h, testkit.Deployment, ""), "/s/")
	srv := httptest.NewServer(h)
	defer srv.Close()
	enc := permalink.Encode(api.State{Manifest: testkit.Deployment})
	var routes []string
	err := chi.Walk(h.(chi.Routes), func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if method == http.MethodGet {
			routes = append(routes, route)
		}
		return nil
	})
	if err != nil || len(routes) < 20 {
		t.Fatalf("%d GET routes: %v", len(routes), err)
	}
	for _, route := range routes {
		target := strings.ReplaceAll(strings.ReplaceAll(route, "{id}", id), "/static/*", "/static/app.css")
		target += "?s=" + enc + "&a=" + enc + "&b=" + enc
		t.Run(route, func(t *testing.T) {
			g, err := http.Get(srv.URL + target)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, g.Body)
			g.Body.Close()
			hd, err := http.Head(srv.URL + target)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(hd.Body)
			hd.Body.Close()
			if hd.StatusCode != g.StatusCode || hd.StatusCode == http.StatusMethodNotAllowed || len(body) != 0 {
				t.Fatalf("HEAD %d with %d bytes, GET %d", hd.StatusCode, len(body), g.StatusCode)
			}
			if hd.Header.Get("Content-Type") != g.Header.Get("Content-Type") {
				t.Fatalf("HEAD's Content-Type %q, GET's %q", hd.Header.Get("Content-Type"), g.Header.Get("Content-Type"))
			}
		})
	}
	// HEAD is not a way around the other methods: a POST-only route still refuses it.
	if hd, err := http.Head(srv.URL + "/share"); err != nil || hd.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("HEAD /share: %v %v", hd, err)
	}
}

// waitingEngine holds an injection until its context ends, and reports that it started.
type waitingEngine struct {
	Engine
	started chan struct{}
}

func (w waitingEngine) Timeline(ctx context.Context, m []byte, st []input.Step, s engine.Settings) (*engine.Timeline, error) {
	w.started <- struct{}{}
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestClientCancelledMetrics: a request whose client went away is counted as 499, not as 200.
func TestClientCancelledMetrics(t *testing.T) {
	newServer(t)
	we := waitingEngine{Engine: eng, started: make(chan struct{}, 1)}
	h := New(testLogger(), func() Engine { return we }, testConfig(Config{}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, stateLink(t, api.State{Manifest: testkit.Deployment}), nil).WithContext(ctx))
	}()
	<-we.started
	cancel()
	<-done
	m := get(t, h, "/metrics").body
	if !strings.Contains(m, `sidecarlab_http_requests_total{code="499",route="/"} 1`) || strings.Contains(m, `code="200",route="/"`) {
		t.Fatalf("the cancelled request is not counted as 499:\n%s", grepLines(m, "sidecarlab_http_requests_total"))
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestRateLimitsApart: reads and shares have their own limits per client, and the probes and
// /metrics have none.
func TestRateLimitsApart(t *testing.T) {
	newServer(t)
	h := New(testLogger(), func() Engine { return eng }, testConfig(Config{RatePerMinute: 3, WriteRatePerMinute: 2, Links: newMemLinks()}))
	from := func(req *http.Request, addr string) *http.Request { req.RemoteAddr = addr + ":1234"; return req }
	for i := range 3 {
		if r := do(t, h, from(httptest.NewRequest(http.MethodGet, "/api/v1/version", nil), "192.0.2.1")); r.status != http.StatusOK {
			t.Fatalf("read %d: %d", i, r.status)
		}
	}
	if r := do(t, h, from(httptest.NewRequest(http.MethodGet, "/api/v1/version", nil), "192.0.2.1")); r.status != http.StatusTooManyRequests {
		t.Fatalf("read over the limit: %d", r.status)
	}
	// The probes and the scrape keep answering the client that used up its limit.
	for range 10 {
		for _, p := range []string{"/healthz", "/readyz", "/metrics"} {
			if r := do(t, h, from(httptest.NewRequest(http.MethodGet, p, nil), "192.0.2.1")); r.status != http.StatusOK {
				t.Fatalf("%s from a limited client: %d", p, r.status)
			}
		}
	}
	// Shares have their own limit: the used-up read limit does not refuse them.
	for i := range 2 {
		req := shareRequest(url.Values{"manifest": {testkit.Deployment}, "steps": {`[{"key":"sidecar.istio.io/proxyCPU","value":"` + itoa(int64(100+i)) + `m"}]`}})
		if r := do(t, h, from(req, "192.0.2.1")); r.status != http.StatusSeeOther {
			t.Fatalf("share %d: %d %.200s", i, r.status, r.body)
		}
	}
	if r := do(t, h, from(shareRequest(url.Values{"manifest": {testkit.Deployment}}), "192.0.2.1")); r.status != http.StatusTooManyRequests || !strings.Contains(r.body, "shared links") {
		t.Fatalf("share over the limit: %d %s", r.status, r.body)
	}
	// Another client has its own budgets.
	if r := do(t, h, from(httptest.NewRequest(http.MethodGet, "/api/v1/version", nil), "192.0.2.2")); r.status != http.StatusOK {
		t.Fatalf("another client: %d", r.status)
	}
}

// TestTrustedProxies: behind a trusted proxy the client is the rightmost untrusted hop of
// X-Forwarded-For (or Forwarded); from any other peer the headers are ignored.
func TestTrustedProxies(t *testing.T) {
	trusted, err := ParseTrustedProxies("10.0.0.0/8, 2001:db8::/32,192.0.2.7")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseTrustedProxies("10.0.0.0/33"); err == nil {
		t.Fatal("a bad CIDR was accepted")
	}
	cases := []struct {
		name, peer string
		headers    map[string]string
		want       string
	}{
		{"no proxy", "198.51.100.1:1", nil, "198.51.100.1"},
		{"an untrusted peer's header is ignored", "198.51.100.1:1", map[string]string{"X-Forwarded-For": "203.0.113.9"}, "198.51.100.1"},
		{"behind the ingress", "10.1.2.3:1", map[string]string{"X-Forwarded-For": "203.0.113.9"}, "203.0.113.9"},
		{"a spoofed hop to the left is ignored", "10.1.2.3:1", map[string]string{"X-Forwarded-For": "1.1.1.1, 203.0.113.9"}, "203.0.113.9"},
		{"two trusted hops", "10.1.2.3:1", map[string]string{"X-Forwarded-For": "203.0.113.9, 192.0.2.7,10.9.9.9"}, "203.0.113.9"},
		{"a hop with a port", "10.1.2.3:1", map[string]string{"X-Forwarded-For": "203.0.113.9:4711"}, "203.0.113.9"},
		{"a trusted peer without the header", "10.1.2.3:1", nil, "10.1.2.3"},
		{"garbage in the header", "10.1.2.3:1", map[string]string{"X-Forwarded-For": "not-an-address"}, "10.1.2.3"},
		{"Forwarded", "10.1.2.3:1", map[string]string{"Forwarded": `for=1.1.1.1, for="[2001:db9::5]:4711";proto=https`}, "2001:db9::5"},
		{"Forwarded, unknown", "10.1.2.3:1", map[string]string{"Forwarded": "for=unknown"}, "10.1.2.3"},
		{"IPv6 peer", "[2001:db8::1]:1", map[string]string{"X-Forwarded-For": "203.0.113.9"}, "203.0.113.9"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			req.RemoteAddr = c.peer
			for k, v := range c.headers {
				req.Header.Set(k, v)
			}
			if got := clientAddr(req, trusted); got != netip.MustParseAddr(c.want) {
				t.Fatalf("client %v, want %s", got, c.want)
			}
		})
	}
	// Through the router: one rate-limit bucket per client behind the ingress, not one for all.
	newServer(t)
	h := New(testLogger(), func() Engine { return eng }, testConfig(Config{RatePerMinute: 1, TrustedProxies: trusted}))
	via := func(peer, xff string) int {
		req := httptest.NewRequest(http.MethodGet, "/api/v1/version", nil)
		req.RemoteAddr = peer + ":1234"
		req.Header.Set("X-Forwarded-For", xff)
		return do(t, h, req).status
	}
	for _, c := range []struct {
		peer, xff string
		want      int
	}{
		{"10.0.0.1", "203.0.113.5", http.StatusOK},
		{"10.0.0.1", "203.0.113.6", http.StatusOK},                       // another user behind the same ingress
		{"10.0.0.2", "203.0.113.5", http.StatusTooManyRequests},          // the first user again, via another ingress pod
		{"10.0.0.1", "6.6.6.6, 203.0.113.5", http.StatusTooManyRequests}, // spoofing a hop does not help
		{"198.51.100.1", "203.0.113.7", http.StatusOK},
		{"198.51.100.1", "203.0.113.8", http.StatusTooManyRequests}, // an untrusted peer: its headers do not count
	} {
		if got := via(c.peer, c.xff); got != c.want {
			t.Errorf("from %s as %q: %d, want %d", c.peer, c.xff, got, c.want)
		}
	}
}

// TestShareRefusesWhatIsNotAState: a share must be a manifest (something with a kind) of no more
// than a POST may carry once stored; a state Istio rejects is still shared (it shows the error
// someone asks about).
func TestShareRefusesWhatIsNotAState(t *testing.T) {
	links := newMemLinks()
	h := serverWith(t, links)
	garbage := make([]byte, 600<<10)
	for i := range garbage {
		garbage[i] = "abcdefghijklmnopqrstuvwxyz0123456789 :-\n"[(i*7919+i/13)%40]
	}
	cases := []struct {
		name     string
		manifest string
		status   int
	}{
		{"a Deployment", testkit.Deployment, http.StatusSeeOther},
		{"a JSON Pod", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"a","image":"nginx"}]}}`, http.StatusSeeOther},
		{"a manifest Istio rejects", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec: {template: 7}\n", http.StatusSeeOther},
		{"broken YAML in a manifest", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n   labels: x\n", http.StatusSeeOther},
		{"garbage", string(garbage), http.StatusUnprocessableEntity},
		{"nothing", "", http.StatusUnprocessableEntity},
		{"a word", "hello", http.StatusUnprocessableEntity},
		// 300 KB of '<' is a 300 KB form but 1.8 MB of JSON (\u003c): over what a POST may carry.
		{"a state that outgrows the POST limit", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: '" + strings.Repeat("<", 300<<10) + "'}\n", http.StatusRequestEntityTooLarge},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := len(links.links)
			r := do(t, h, shareRequest(url.Values{"manifest": {c.manifest}}))
			if r.status != c.status {
				t.Fatalf("status %d, want %d: %.300s", r.status, c.status, r.body)
			}
			stored := len(links.links) - before
			if (c.status == http.StatusSeeOther) != (stored == 1) {
				t.Fatalf("%d links stored", stored)
			}
		})
	}
}

// failingLinks is a LinkStore whose every call fails with err, or, with hang, waits for its
// context to end; health is what it reports to /readyz and /metrics.
type failingLinks struct {
	err    error
	hang   bool
	health error
}

func (f failingLinks) Put(ctx context.Context, _ Link) (string, error) {
	if f.hang {
		<-ctx.Done()
		return "", ctx.Err()
	}
	return "", f.err
}

func (f failingLinks) Get(ctx context.Context, _ string) (Link, error) {
	_, err := f.Put(ctx, Link{})
	return Link{}, err
}

func (f failingLinks) Health() error { return f.health }

// TestLinkStoreFailures: each way a link store fails answers its own status and words (never the
// generic 500, never the database's message), with Retry-After where waiting helps; a hung store
// is cut off by its own short timeout, not the request's.
func TestLinkStoreFailures(t *testing.T) {
	newServer(t)
	cases := []struct {
		name   string
		links  failingLinks
		status int
		says   string
		retry  bool
	}{
		{"quota or disk full", failingLinks{err: errors.Join(ErrLinkStoreFull, errors.New("database or disk is full (13)"))}, http.StatusInsufficientStorage, "the link store is full", false},
		{"read-only", failingLinks{err: errors.Join(ErrLinkStoreReadOnly, errors.New("attempt to write a readonly database (8)"))}, http.StatusServiceUnavailable, "cannot be written", true},
		{"down", failingLinks{err: errors.New("dial tcp 10.0.0.9:5432: connect: connection refused")}, http.StatusServiceUnavailable, "does not answer", true},
		{"never reached", failingLinks{err: ErrLinkStoreUnavailable}, http.StatusServiceUnavailable, "does not answer", true},
		{"hung", failingLinks{hang: true}, http.StatusServiceUnavailable, "did not answer in time", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// The request's own deadline is far away: a hung store is answered only if the
			// store's timeout cuts it off; answerWithin fails the test if nothing does.
			h := New(testLogger(), func() Engine { return eng }, testConfig(Config{Links: c.links, StoreTimeout: 100 * time.Millisecond}))
			r := answerWithin(t, h, shareRequest(url.Values{"manifest": {testkit.Deployment}}), time.Minute, "share")
			if r.status != c.status || !strings.Contains(r.body, "Sharing is unavailable: ") || !strings.Contains(r.body, c.says) || (r.header.Get("Retry-After") != "") != c.retry {
				t.Fatalf("share: %d %v %.400s", r.status, r.header, r.body)
			}
			for _, leak := range []string{"13)", "(8)", "10.0.0.9", "context"} {
				if strings.Contains(r.body, leak) {
					t.Fatalf("the store's own error %q is shown", leak)
				}
			}
			if c.status == http.StatusInsufficientStorage {
				return // a full store still reads
			}
			if r := answerWithin(t, h, httptest.NewRequest(http.MethodGet, "/s/0123456789abcdef", nil), time.Minute, "open"); r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" || !strings.Contains(r.body, c.says) {
				t.Fatalf("open: %d %v %.400s", r.status, r.header, r.body)
			}
		})
	}
}

// causeLinks is a LinkStore whose Put first calls before (if set), then waits for its context to
// end and sends the context's cause.
type causeLinks struct {
	before func()
	cause  chan error
}

func (c causeLinks) Put(ctx context.Context, _ Link) (string, error) {
	if c.before != nil {
		c.before()
	}
	<-ctx.Done()
	c.cause <- context.Cause(ctx)
	return "", ctx.Err()
}

func (c causeLinks) Get(context.Context, string) (Link, error) { return Link{}, ErrLinkNotFound }

// TestLinkStoreTimeoutCause: a store call cut off by the store's own timeout ends with the cause
// ErrLinkStoreTimeout (the store counts it against its health); one whose request ended first
// (here the client goes away during the call) with another, which the store does not count.
func TestLinkStoreTimeoutCause(t *testing.T) {
	newServer(t)
	t.Run("the store's own timeout", func(t *testing.T) {
		links := causeLinks{cause: make(chan error, 1)}
		h := New(testLogger(), func() Engine { return eng }, testConfig(Config{Links: links, StoreTimeout: time.Nanosecond}))
		do(t, h, shareRequest(url.Values{"manifest": {testkit.Deployment}}))
		if cause := <-links.cause; !errors.Is(cause, ErrLinkStoreTimeout) {
			t.Fatalf("cause %v, want ErrLinkStoreTimeout", cause)
		}
	})
	t.Run("the client went away", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		links := causeLinks{before: cancel, cause: make(chan error, 1)}
		h := New(testLogger(), func() Engine { return eng }, testConfig(Config{Links: links, StoreTimeout: farAway}))
		do(t, h, shareRequest(url.Values{"manifest": {testkit.Deployment}}).WithContext(ctx))
		if cause := <-links.cause; errors.Is(cause, ErrLinkStoreTimeout) || !errors.Is(cause, context.Canceled) {
			t.Fatalf("cause %v, want the request's context.Canceled", cause)
		}
	})
}

// TestLinkStoreHealth: the store's state is on /readyz (which stays ready: the playground works
// without it) and in /metrics.
func TestLinkStoreHealth(t *testing.T) {
	newServer(t)
	for _, c := range []struct {
		name    string
		links   LinkStore
		ready   string
		verbose string
		up      string
	}{
		{"no store", nil, "ready\n", "link store: off", ""},
		{"a store that answers", newMemLinks(), "ready\n", "link store: ok", "sidecarlab_link_store_up 1"},
		{"a store that answers, and says so", failingLinks{}, "ready\n", "link store: ok", "sidecarlab_link_store_up 1"},
		{"a store that does not answer", failingLinks{health: ErrLinkStoreUnavailable}, "ready (sharing is unavailable)\n", "link store: unavailable", "sidecarlab_link_store_up 0"},
		{"a full store", failingLinks{health: ErrLinkStoreFull}, "ready (sharing is unavailable)\n", "link store: full", "sidecarlab_link_store_up 0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := New(testLogger(), func() Engine { return eng }, testConfig(Config{Links: c.links}))
			r := get(t, h, "/readyz")
			if r.status != http.StatusOK || r.body != c.ready {
				t.Fatalf("/readyz: %d %q", r.status, r.body)
			}
			if r := get(t, h, "/readyz?verbose"); !strings.Contains(r.body, "engine: ok\n") || !strings.Contains(r.body, c.verbose) {
				t.Fatalf("/readyz?verbose: %q", r.body)
			}
			m := get(t, h, "/metrics").body
			if c.up == "" && strings.Contains(m, "sidecarlab_link_store_up") || c.up != "" && !strings.Contains(m, c.up+"\n") {
				t.Fatalf("/metrics: %q", grepLines(m, "link_store"))
			}
		})
	}
}
