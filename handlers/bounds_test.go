package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
	"github.com/sidecarlab/sidecarlab/sandbox"
)

// fixedPartsBytes is what a normal page has besides the state it shows: the layout, the panel,
// the lab strip, the tabs (~300 KB at most).
const fixedPartsBytes = 300 << 10

// answerBound is the most an answer made from a state may be: twice the decoded state (the
// state once in the editor, each value in full once) and a normal page's fixed parts. A state
// that was refused counts for nothing: it is never echoed. A raw output may add the output the
// engine made (which is bounded like a manifest: no more than --max-body, checked apart).
func answerBound(stateBytes int, refused bool, engineOutput int) int {
	if refused {
		stateBytes, engineOutput = 0, 0
	}
	return 2*stateBytes + fixedPartsBytes + engineOutput
}

// engineOutputOf is the output the engine makes for a state: every row's injected YAML (the raw
// outputs have everything), 0 when it refuses the state.
func engineOutputOf(t *testing.T, e Engine, st api.State) int {
	t.Helper()
	tl, err := e.Timeline(context.Background(), []byte(st.Manifest), st.Steps, st.Settings)
	if err != nil {
		return 0
	}
	n := 0
	for _, s := range tl.Steps {
		n += len(s.Output())
	}
	return n
}

// boundRoute is one way to ask for an answer made from a state: the request, and whether the
// answer is a raw output (which may carry the engine's whole output).
type boundRoute struct {
	name string
	raw  bool
	req  func(st api.State, id string) *http.Request
}

func boundGet(target string) *http.Request { return httptest.NewRequest(http.MethodGet, target, nil) }

func boundJSON(target string, st api.State) *http.Request {
	b, _ := json.Marshal(api.InjectRequest{Manifest: st.Manifest, Steps: st.Steps, Settings: st.Settings})
	r := httptest.NewRequest(http.MethodPost, target, strings.NewReader(string(b)))
	r.Header.Set("Content-Type", "application/json")
	return r
}

func boundForm(st api.State, partial bool) *http.Request {
	steps, _ := json.Marshal(st.Steps)
	r := formRequest(url.Values{"manifest": {st.Manifest}, "steps": {string(steps)}, "mode": {string(st.Settings.Mode)},
		"set": {strings.Join(st.Settings.Install.Set, "\n")}, "overlay": {st.Settings.Install.Overlay}, "action": {"apply"}})
	if partial {
		r.Header.Set(partialHeader, "1")
	}
	return r
}

// boundRoutes are every route that answers with something made from a state.
func boundRoutes() []boundRoute {
	q := func(path string) func(api.State, string) *http.Request {
		return func(st api.State, _ string) *http.Request { return boundGet(path + "s=" + EncodeState(st)) }
	}
	short := func(suffix string) func(api.State, string) *http.Request {
		return func(_ api.State, id string) *http.Request { return boundGet("/s/" + id + suffix) }
	}
	return []boundRoute{
		{"GET /", false, q("/?")},
		{"GET / (the script's fragment)", false, func(st api.State, _ string) *http.Request {
			r := boundGet("/?s=" + EncodeState(st))
			r.Header.Set(partialHeader, "1")
			return r
		}},
		{"GET / presenter", false, q("/?present=1&")},
		{"GET / batch tab, every column", false, q("/?tab=batch&cols=" + url.QueryEscape(strings.Join(allBatchColumns(), ",")) + "&")},
		{"POST /", false, func(st api.State, _ string) *http.Request { return boundForm(st, false) }},
		{"POST / (the script's fragment)", false, func(st api.State, _ string) *http.Request { return boundForm(st, true) }},
		{"GET /compare", false, func(st api.State, _ string) *http.Request {
			e := EncodeState(st)
			return boundGet("/compare?a=" + e + "&b=" + e)
		}},
		{"GET /embed", false, q("/embed?")},
		{"GET /s/{id}", false, short("")},
		// The API's answer carries the output the engine made (`output`), as the raw outputs do.
		{"POST /api/v1/inject", true, func(st api.State, _ string) *http.Request { return boundJSON("/api/v1/inject", st) }},
		{"POST /api/v1/share", false, func(st api.State, _ string) *http.Request { return boundJSON("/api/v1/share", st) }},
		{"GET /batch.csv", false, q("/batch.csv?")},
		{"GET /batch.md", false, q("/batch.md?")},
		{"GET /batch.json", false, q("/batch.json?")},
		{"GET /injected.yaml", true, q("/injected.yaml?")},
		{"GET /diff.txt", true, q("/diff.txt?")},
		{"GET /diff.txt unified", true, q("/diff.txt?unified=1&")},
		{"GET /state.json", true, q("/state.json?")},
		{"GET /repro.tar.gz", true, q("/repro.tar.gz?")},
		{"GET /download", true, q("/download?")},
		{"GET /s/{id}/injected.yaml", true, short("/injected.yaml")},
		{"GET /s/{id}/diff.txt", true, short("/diff.txt")},
		{"GET /s/{id}/state.json", true, short("/state.json")},
		{"GET /s/{id}/repro.tar.gz", true, short("/repro.tar.gz")},
	}
}

// TestAnswersBounded: issue 21's reproductions, each sent to every route that answers with
// something made from a state; no answer (read uncompressed: the requests send no
// Accept-Encoding) is over answerBound. Before the fix: the 250,000-byte proxyMetadata value
// came back in a 4.43 MB page (in the step's title, every change's "caused by", the YAML) and a
// 4.55 MB API answer (in each change's cause, the last row's output and unified diff), the
// 4 MiB state in a 4.2 MB 413 page, the template's 10 MB in a 20 MB page and a 10 MB
// injected.yaml.
func TestAnswersBounded(t *testing.T) {
	newServer(t)
	bigValue := "proxyMetadata: {X: " + strings.Repeat("v", 250_000) + "}"
	big := api.State{Manifest: testkit.Deployment + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n  x: " +
		strings.Repeat("x", maxStateBytes-4096) + "\n"}
	cases := []struct {
		name    string
		st      api.State
		refused bool
		server  func(t *testing.T) (http.Handler, Engine, *memLinks)
	}{
		{"a proxy config value of 250,000 bytes", api.State{Manifest: testkit.Deployment, Steps: []engine.Step{{Key: "proxy.istio.io/config", Value: bigValue}}}, false,
			func(t *testing.T) (http.Handler, Engine, *memLinks) {
				links := newMemLinks()
				return serverWith(t, links), eng, links
			}},
		{"the same value, on a server past its deadline (503 with the form)", api.State{Manifest: testkit.Deployment, Steps: []engine.Step{{Key: "proxy.istio.io/config", Value: bigValue}}}, false,
			func(t *testing.T) (http.Handler, Engine, *memLinks) {
				links := newMemLinks()
				return serverConfig(t, Config{Links: links, RequestTimeout: time.Nanosecond}), eng, links
			}},
		{"a 4 MiB state", big, true,
			func(t *testing.T) (http.Handler, Engine, *memLinks) {
				links := newMemLinks()
				return serverWith(t, links), eng, links
			}},
		{"a template repeating 10,000,000 bytes", api.State{Manifest: testkit.Deployment, Steps: selectMine,
			Settings: engine.Settings{Install: engine.InstallOptions{Overlay: withTemplate(`{{ repeat 10000000 "a" }}`)}}}, false,
			func(t *testing.T) (http.Handler, Engine, *memLinks) {
				e := boundsIsolated(t)
				links := newMemLinks()
				return New(testLogger(), func() Engine { return e }, testConfig(Config{Links: links})), e, links
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if testing.Short() && c.st.Settings.Install.Overlay != "" {
				t.Skip("renders a 10 MB template in sandbox workers for every route; run without -short")
			}
			h, e, links := c.server(t)
			c.st.Version, c.st.Istio = StateVersion, engine.Version().Istio
			stateBytes := len(StateJSON(c.st))
			out := 0
			if !c.refused { // the server never runs a refused state
				out = engineOutputOf(t, e, c.st)
			}
			if out > 1<<20 {
				t.Errorf("the engine made %d bytes of output, over --max-body (%d): not bounded like a manifest", out, 1<<20)
			}
			id := "none"
			if links != nil {
				id, _ = links.Put(context.Background(), Link{State: StateJSON(c.st)})
			}
			for _, rt := range boundRoutes() {
				if links == nil && strings.HasPrefix(rt.name, "GET /s/") {
					continue
				}
				t.Run(rt.name, func(t *testing.T) {
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, rt.req(c.st, id))
					if ce := rec.Header().Get("Content-Encoding"); ce != "" {
						t.Fatalf("compressed (%s) without Accept-Encoding", ce)
					}
					n := rec.Body.Len()
					bound := answerBound(stateBytes, c.refused, 0)
					if rt.raw {
						// The engine's output, bounded like a manifest (--max-body): a raw output
						// of 10 MB is over even when the engine made it.
						bound = answerBound(stateBytes, c.refused, min(out, 1<<20))
					}
					t.Logf("%d: %s (bound %s)", rec.Code, sizeText(n), sizeText(bound))
					if n > bound {
						t.Errorf("%d: %s, over the bound of %s", rec.Code, sizeText(n), sizeText(bound))
					}
				})
			}
		})
	}
}

var (
	boundsIsoOnce sync.Once
	boundsIsoEng  *engine.Engine
	boundsIsoErr  error
)

// boundsIsolated is the engine of `serve --allow-custom-templates`: user templates run in
// workers of the sandbox (this test binary as the worker, see TestMain), whose answers are
// bounded as serve bounds them by default (--max-body, 1 MiB).
func boundsIsolated(t *testing.T) *engine.Engine {
	t.Helper()
	boundsIsoOnce.Do(func() {
		var sb *sandbox.Sandbox
		sb, boundsIsoErr = sandbox.New(context.Background(), sandbox.Config{Command: []string{os.Args[0], "worker"},
			Limits: sandbox.Limits{CPUSeconds: 10, MemoryBytes: 384 << 20}, MaxOutput: 1 << 20})
		if boundsIsoErr != nil {
			return
		}
		boundsIsoEng, boundsIsoErr = engine.New(context.Background(), engine.Options{
			InstallPolicy: engine.InstallPolicy{AllowCustomTemplates: true},
			Isolator:      sandbox.Isolator(sb),
		})
	})
	if boundsIsoErr != nil {
		t.Fatal(boundsIsoErr)
	}
	return boundsIsoEng
}

// allBatchColumns are the ids of every column the batch table can show.
func allBatchColumns() []string {
	var ids []string
	for _, c := range batchColumns {
		ids = append(ids, c.id)
	}
	return ids
}

func sizeText(n int) string { return fmt.Sprintf("%.2f MB", float64(n)/1e6) }

// TestLongValueShownOnce: a step's long value is shown in full once, in the timeline; the step's
// title has a preview with its size, its changes name the step, and the YAML's long lines are
// cut with a note that says so. A short value is shown as it always was.
func TestLongValueShownOnce(t *testing.T) {
	h := newServer(t)
	long := "proxyMetadata: {X: " + strings.Repeat("v", 20_000) + "}"
	r := get(t, h, stateLink(t, api.State{Manifest: testkit.Deployment, Steps: []engine.Step{{Key: "proxy.istio.io/config", Value: long}}}))
	if r.status != http.StatusOK {
		t.Fatalf("status %d", r.status)
	}
	if got := testid(r, "step-value-1").Find("pre").Text(); got != long {
		t.Fatalf("the timeline shows %d bytes of the value, want all %d", len(got), len(long))
	}
	// Twice in the page: shown in the timeline, and in the form's state (a hidden input).
	if n := strings.Count(r.body, long); n != 2 || !strings.Contains(testid(r, "steps").AttrOr("value", ""), long) {
		t.Errorf("the whole value is on the page %d times, want twice (the timeline and the form)", n)
	}
	title := testid(r, "step-1").First().Find(".step-t").Text()
	if len(title) > 300 || !strings.HasPrefix(title, "proxy.istio.io/config=proxyMetadata: {X: vvv") || !strings.Contains(title, "20020 bytes in all") {
		t.Errorf("step title %q", title[:min(len(title), 400)])
	}
	testid(r, "diff-step-1").Find(`[data-testid="cause"] code`).Each(func(_ int, s *goquery.Selection) {
		if s.Text() != "proxy.istio.io/config, step 1" {
			t.Errorf("caused by %q", s.Text()[:min(len(s.Text()), 400)])
		}
	})
	if yaml := testid(r, "injected-yaml").Text(); strings.Contains(yaml, long) || !strings.Contains(yaml, "bytes in all") {
		t.Error("the YAML tab's long lines are not cut")
	}
	if note := testid(r, "more-note").Text(); !strings.Contains(note, "Lines longer than 4096 bytes") || strings.Contains(note, "first 1 of 1") {
		t.Errorf("no note says lines were cut: %q", testid(r, "more-note").Text())
	}

	short := get(t, h, stateLink(t, api.State{Manifest: testkit.Deployment, Steps: []engine.Step{{Key: "proxy.istio.io/config", Value: "concurrency: 2"}}}))
	if testid(short, "step-value-1").Length() != 0 || testid(short, "step-1").First().Find(".step-t").Text() != "proxy.istio.io/config=concurrency: 2" ||
		testid(short, "more-note").Length() != 0 {
		t.Error("a short value is not shown as before")
	}
}
