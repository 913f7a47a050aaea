package handlers

import (
	"bytes"
	"compress/flate"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

// hostileBudget bounds the work of refusing a hostile input, in bytes the server allocates while
// it answers (doMeasured): the refusals below allocate at most 21 MiB (the deep nesting); without
// the document limit, 10,001 documents cost 500 MiB (and 72 MiB when the work estimate measured
// them all before refusing them, which this bound caught).
const hostileBudget = 64 << 20

// TestHostileInput: each hostile input gets a clear 4xx, refused before it is worked on (within
// hostileBudget), and a normal request succeeds right after.
func TestHostileInput(t *testing.T) {
	h := newServer(t)
	var bomb strings.Builder
	bomb.WriteString("apiVersion: v1\nkind: Pod\nmetadata:\n  name: lol\n  annotations:\n    a0: &a0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
	for i := 1; i < 10; i++ {
		bomb.WriteString("    a" + itoa(int64(i)) + ": &a" + itoa(int64(i)) + " [*a" + itoa(int64(i-1)) + ",*a" + itoa(int64(i-1)) + ",*a" + itoa(int64(i-1)) + ",*a" + itoa(int64(i-1)) + ",*a" + itoa(int64(i-1)) + ",*a" + itoa(int64(i-1)) + ",*a" + itoa(int64(i-1)) + ",*a" + itoa(int64(i-1)) + ",*a" + itoa(int64(i-1)) + "]\n")
	}
	deep := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: deep\nspec: " + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "\n"
	steps := make([]input.Step, 5000)
	for i := range steps {
		steps[i] = input.Step{Key: "sidecar.istio.io/logLevel", Value: "debug"}
	}
	// A URL state that inflates far beyond its size: a readable state (its manifest 50 MiB of
	// "a"), so that only the inflate limit (permalink.MaxBytes) can reject it.
	bombState := []byte(`{"v":1,"manifest":"` + strings.Repeat("a", 50<<20) + `"}`)
	if _, err := decodeStateJSON(bombState); err != nil {
		t.Fatalf("the decompression bomb is not a readable state, so the test would pass without the limit: %v", err)
	}
	var zbuf bytes.Buffer
	zw, _ := flate.NewWriter(&zbuf, flate.BestCompression)
	_, _ = zw.Write(bombState)
	_ = zw.Close()
	zipBomb := base64.RawURLEncoding.EncodeToString(zbuf.Bytes())

	apiPost := func(req api.InjectRequest) *http.Request {
		b, _ := json.Marshal(req)
		r := httptest.NewRequest(http.MethodPost, "/api/v1/inject", bytes.NewReader(b))
		r.Header.Set("Content-Type", "application/json")
		return r
	}
	cases := []struct {
		name   string
		req    *http.Request
		status int
	}{
		{"billion laughs", apiPost(api.InjectRequest{Manifest: bomb.String()}), http.StatusUnprocessableEntity},
		{"very deep nesting", apiPost(api.InjectRequest{Manifest: deep}), http.StatusUnprocessableEntity},
		{"invalid UTF-8 in the API", rawAPI("{\"manifest\":\"kind: Pod\\nmetadata: {name: \xff\xfe}\\n\"}"), http.StatusBadRequest},
		{"invalid UTF-8 in the form", formRequest(url.Values{"manifest": {"kind: Pod\nmetadata: {name: \xff\xfe}\n"}}), http.StatusUnprocessableEntity},
		{"binary garbage", apiPost(api.InjectRequest{Manifest: "\x00\x01\x02\x03: \x04\n\x7f"}), http.StatusUnprocessableEntity},
		{"a giant annotation value", apiPost(api.InjectRequest{Manifest: testkit.Deployment, Steps: []input.Step{{Key: "sidecar.istio.io/proxyCPU", Value: strings.Repeat("9", 900<<10)}}}), http.StatusUnprocessableEntity},
		{"thousands of steps", apiPost(api.InjectRequest{Manifest: testkit.Deployment, Steps: steps}), http.StatusUnprocessableEntity},
		{"more documents than the limit", apiPost(api.InjectRequest{Manifest: strings.Repeat("kind: ConfigMap\n---\n", 10001)}), http.StatusUnprocessableEntity},
		{"a decompression bomb in the URL", httptest.NewRequest(http.MethodGet, "/?s="+zipBomb, nil), http.StatusBadRequest},
		{"a body over the limit", apiPost(api.InjectRequest{Manifest: strings.Repeat("#", 2<<20)}), http.StatusRequestEntityTooLarge},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, work := doMeasured(t, h, c.req)
			if work > hostileBudget {
				t.Errorf("the refusal allocated %d MiB, want at most %d: the input was worked on before it was refused", work>>20, hostileBudget>>20)
			}
			if r.status != c.status {
				t.Fatalf("status %d, want %d: %s", r.status, c.status, r.body[:min(300, len(r.body))])
			}
			if ok := get(t, h, stateLink(t, api.State{Manifest: testkit.Deployment})); ok.status != http.StatusOK {
				t.Fatalf("a normal request after it: %d", ok.status)
			}
		})
	}
}

func rawAPI(body string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/api/v1/inject", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	return r
}

func formRequest(form url.Values) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return r
}

// blockingEngine holds every injection until released.
type blockingEngine struct {
	Engine
	started chan struct{}
	release chan struct{}
}

func (b blockingEngine) Timeline(ctx context.Context, m []byte, st []input.Step, s engine.Settings) (*engine.Timeline, error) {
	b.started <- struct{}{}
	<-b.release
	return b.Engine.Timeline(ctx, m, st, s)
}

// TestBusy: with every injection slot taken, a request waits, then gets 503 with Retry-After.
func TestBusy(t *testing.T) {
	newServer(t)
	be := blockingEngine{Engine: eng, started: make(chan struct{}, 1), release: make(chan struct{})}
	h := New(testLogger(), func() Engine { return be }, testConfig(Config{MaxConcurrent: 1, QueueWait: 50 * time.Millisecond}))
	done := make(chan response)
	go func() { done <- get(t, h, stateLink(t, api.State{Manifest: testkit.Deployment})) }()
	<-be.started // the only slot is taken
	r := get(t, h, stateLink(t, api.State{Manifest: testkit.Deployment}))
	if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" {
		t.Fatalf("busy: %d %v", r.status, r.header)
	}
	close(be.release)
	if first := <-done; first.status != http.StatusOK {
		t.Fatalf("the request holding the slot: %d", first.status)
	}
	go func() { <-be.started }()
	if r := get(t, h, stateLink(t, api.State{Manifest: testkit.Deployment})); r.status != http.StatusOK {
		t.Fatalf("after the slot is free: %d", r.status)
	}
}

func testLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// TestRateLimit: past the per-address limit, 429 with Retry-After: the API's JSON error on the
// API (it was plain text), the error page elsewhere.
func TestRateLimit(t *testing.T) {
	newServer(t)
	h := New(testLogger(), func() Engine { return eng }, testConfig(Config{RatePerMinute: 3}))
	for i := range 3 {
		if r := get(t, h, "/api/v1/version"); r.status != http.StatusOK {
			t.Fatalf("request %d: %d", i, r.status)
		}
	}
	r := get(t, h, "/api/v1/version")
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") != "60" {
		t.Fatalf("over the limit: %d, Retry-After %q", r.status, r.header.Get("Retry-After"))
	}
	checkAPIError(t, r, http.StatusTooManyRequests, "Too many requests")
	if r := get(t, h, "/"); r.status != http.StatusTooManyRequests || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") ||
		r.doc.Find("h1").Length() == 0 || r.header.Get("Retry-After") != "60" {
		t.Fatalf("a page over the limit: %d %q", r.status, r.header.Get("Content-Type"))
	}
}

// checkAPIError: r is the API's JSON error body with the status and a message that contains want.
func checkAPIError(t *testing.T, r response, status int, want string) {
	t.Helper()
	var body api.Error
	if !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") || json.Unmarshal([]byte(r.body), &body) != nil ||
		body.Error.Status != status || !strings.Contains(body.Error.Message, want) {
		t.Fatalf("want the API's JSON error %d %q, got %d %q: %.200s", status, want, r.status, r.header.Get("Content-Type"), r.body)
	}
}

// TestAPIErrorsAreJSON: under /api/ a path no route has and a method a route does not take
// answer the API's JSON error (they were a page and chi's plain text); elsewhere, pages.
func TestAPIErrorsAreJSON(t *testing.T) {
	h := newServer(t)
	r := get(t, h, "/api/v1/nothing")
	if r.status != http.StatusNotFound {
		t.Fatalf("/api/v1/nothing: %d", r.status)
	}
	checkAPIError(t, r, http.StatusNotFound, "/api/v1/nothing")
	r = do(t, h, httptest.NewRequest(http.MethodDelete, "/api/v1/version", nil))
	if r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") == "" {
		t.Fatalf("DELETE /api/v1/version: %d, Allow %q", r.status, r.header.Get("Allow"))
	}
	checkAPIError(t, r, http.StatusMethodNotAllowed, "DELETE")
	for _, req := range []*http.Request{httptest.NewRequest(http.MethodGet, "/nothing", nil), httptest.NewRequest(http.MethodDelete, "/compare", nil)} {
		r := do(t, h, req)
		if r.status/100 != 4 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") || r.doc.Find("h1").Length() == 0 {
			t.Errorf("%s %s: %d %q, want the error page", req.Method, req.URL.Path, r.status, r.header.Get("Content-Type"))
		}
	}
}

func TestMetrics(t *testing.T) {
	h := newServer(t)
	get(t, h, stateLink(t, api.State{Manifest: testkit.Deployment}))
	get(t, h, "/nowhere")
	r := get(t, h, "/metrics")
	for _, want := range []string{
		`sidecarlab_http_requests_total{code="200",route="/"}`,
		`sidecarlab_http_requests_total{code="404",route="unmatched"}`,
		`sidecarlab_http_request_duration_seconds_bucket{route="/",le="0.1"}`,
		"sidecarlab_injections_total ", "sidecarlab_timeline_cache_hits_total ", "sidecarlab_timeline_cache_misses_total ",
		"sidecarlab_store_errors_total 0", "go_goroutines ",
	} {
		if !strings.Contains(r.body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if strings.Contains(r.body, "s=") {
		t.Error("a URL (user content) leaked into a label")
	}
}
