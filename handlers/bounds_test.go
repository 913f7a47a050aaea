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

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/PuerkitoBio/goquery"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
	"github.com/sidecarlab/sidecarlab/permalink"
	"github.com/sidecarlab/sidecarlab/sandbox"
)

// fixedPartsBytes is what a normal page has besides the state it shows: the layout, the panel,
// the lab strip, the tabs (~300 KB at most); perShownObject what each object it shows adds at
// most (its YAML, changes, diff lines, lifecycle): a page shows the first 50 documents
// (defaultLimit), and of a document that holds many objects (a List) its share (yamlPerDoc).
const (
	fixedPartsBytes = 300 << 10
	perShownObject  = 24 << 10
)

// answerBound is the most an answer made from a state may be: twice the decoded state (the
// state once in the editor, each value in full once), a normal page's fixed parts, and each
// object it shows in each row of the timeline — of those written out: an alias that repeats an
// object earns nothing. A state that was refused counts for nothing: it is never echoed. A raw
// output may add what the engine made that it carries (bounded like a manifest: no more than
// --max-body and a sidecar for each object written out, checked apart).
func answerBound(stateBytes int, refused bool, written, rows, engineMade int) int {
	if refused {
		stateBytes, written, engineMade = 0, 0, 0
	}
	return 2*stateBytes + fixedPartsBytes + rows*min(written, defaultLimit)*perShownObject + engineMade
}

// sidecarBytes is what injection adds to one object at most, as the engine writes it (a
// Deployment of 300 bytes comes back as 6.6 KB).
const sidecarBytes = 8 << 10

// outputCap is the most output the engine may make for a state: what a manifest may be
// (--max-body), and a sidecar for each object written out.
func outputCap(written int) int { return 1<<20 + written*sidecarBytes }

// engineMade is what the engine makes for a state: every row's injected YAML (outputs: what
// the raw outputs carry), and with it every row's changes and unified diff and the last row's
// output again (all: what the API's whole answer carries); zeros when it refuses the state.
func engineMade(t *testing.T, e Engine, st api.State) (outputs, all int) {
	t.Helper()
	tl, err := e.Timeline(context.Background(), []byte(st.Manifest), st.Steps, st.Settings)
	if err != nil {
		return 0, 0
	}
	for _, s := range tl.Steps {
		changes, _ := s.Changes(context.Background())
		js, _ := json.Marshal(changes)
		unified, _ := s.Unified(context.Background(), 0)
		outputs += len(s.Output())
		all += 2*len(s.Output()) + len(js) + len(unified)
	}
	return outputs, all + len(tl.Steps[len(tl.Steps)-1].Output())
}

// workClock is the engine with a deadline in units of work for each timeline it makes: the
// estimate's units, in injections (an object through Istio's injector is at most one unit, as
// engine.Cost counts them). A timeline that does more injections than its estimate said fails
// with the deadline's error — the 503 a request admitted by its estimate would get at its
// deadline if the estimate counted short — and late counts them.
type workClock struct {
	*engine.Engine
	mu   sync.Mutex
	late []string
}

func (w *workClock) Timeline(ctx context.Context, m []byte, steps []input.Step, s engine.Settings) (*engine.Timeline, error) {
	c, err := w.Estimate(ctx, m, steps, s)
	if err != nil {
		return nil, err
	}
	clock := &unitDeadline{Context: ctx, e: w.Engine, start: w.Stats().Injections, units: c.Units, done: make(chan struct{})}
	tl, err := w.Engine.Timeline(clock, m, steps, s)
	if clock.passed() {
		w.mu.Lock()
		w.late = append(w.late, fmt.Sprintf("%d units estimated, more injections made (%.80q)", c.Units, m))
		w.mu.Unlock()
	}
	return tl, err
}

// unitDeadline is a context whose deadline passes once its engine has made more than units
// injections since start.
type unitDeadline struct {
	context.Context
	e            *engine.Engine
	start, units int64
	once         sync.Once
	done         chan struct{}
}

func (c *unitDeadline) passed() bool { return c.e.Stats().Injections-c.start > c.units }

func (c *unitDeadline) Err() error {
	if c.passed() {
		c.once.Do(func() { close(c.done) })
		return context.DeadlineExceeded
	}
	return c.Context.Err()
}

func (c *unitDeadline) Done() <-chan struct{} { _ = c.Err(); return c.done }

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
		return func(st api.State, _ string) *http.Request { return boundGet(path + "s=" + permalink.Encode(st)) }
	}
	short := func(suffix string) func(api.State, string) *http.Request {
		return func(_ api.State, id string) *http.Request { return boundGet("/s/" + id + suffix) }
	}
	return []boundRoute{
		{"GET /", false, q("/?")},
		{"GET / (the script's fragment)", false, func(st api.State, _ string) *http.Request {
			r := boundGet("/?s=" + permalink.Encode(st))
			r.Header.Set(partialHeader, "1")
			return r
		}},
		{"GET / presenter", false, q("/?present=1&")},
		{"GET / batch tab, every column", false, q("/?tab=batch&cols=" + url.QueryEscape(strings.Join(allBatchColumns(), ",")) + "&")},
		{"POST /", false, func(st api.State, _ string) *http.Request { return boundForm(st, false) }},
		{"POST / (the script's fragment)", false, func(st api.State, _ string) *http.Request { return boundForm(st, true) }},
		{"GET /compare", false, func(st api.State, _ string) *http.Request {
			e := permalink.Encode(st)
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

// TestAnswersBounded: issue 21's and issue 40's reproductions, each sent to every route that
// answers with something made from a state; no answer (read uncompressed: the requests send no
// Accept-Encoding) is over answerBound, and no request the estimate admitted does more work than
// it said (workClock: none would end in a 503 at its deadline). Before the fix: the
// 250,000-byte proxyMetadata value came back in a 4.43 MB page (in the step's title, every
// change's "caused by", the YAML) and a 4.55 MB API answer (in each change's cause, the last
// row's output and unified diff), the 4 MiB state in a 4.2 MB 413 page, the template's 10 MB in
// a 20 MB page and a 10 MB injected.yaml; a 376-byte link of a List of aliases in a 6.4 MB page
// and a 5.7 MB injected.yaml, and a List of a thousand Pods written out in a 7 MB page.
func TestAnswersBounded(t *testing.T) {
	t.Parallel()
	newServer(t)
	// The work clock counts injections: an engine of its own, which no test beside it adds to.
	own, err := engine.New(t.Context(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	bigValue := "proxyMetadata: {X: " + strings.Repeat("v", 250_000) + "}"
	big := api.State{Manifest: testkit.Deployment + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n  x: " +
		strings.Repeat("x", permalink.MaxBytes-4096) + "\n"}
	clocked := func(t *testing.T) (http.Handler, Engine, *memLinks) {
		links := newMemLinks()
		w := &workClock{Engine: own}
		t.Cleanup(func() {
			for _, l := range w.late {
				t.Errorf("admitted, and past its deadline: %s", l)
			}
		})
		return New(testLogger(), func() Engine { return w }, testConfig(Config{Links: links})), own, links
	}
	oneAlias := "apiVersion: v1\nkind: Pod\nmetadata: {name: many}\nspec:\n  containers: [&c {name: app, image: nginx}" + strings.Repeat(", *c", 999) + "]\n"
	cases := []struct {
		name    string
		st      api.State
		refused bool
		server  func(t *testing.T) (http.Handler, Engine, *memLinks)
	}{
		{"a proxy config value of 250,000 bytes", api.State{Manifest: testkit.Deployment, Steps: []input.Step{{Key: "proxy.istio.io/config", Value: bigValue}}}, false, clocked},
		{"the same value, on a server past its deadline (503 with the form)", api.State{Manifest: testkit.Deployment, Steps: []input.Step{{Key: "proxy.istio.io/config", Value: bigValue}}}, false,
			func(t *testing.T) (http.Handler, Engine, *memLinks) {
				links := newMemLinks()
				return serverConfig(t, Config{Links: links, RequestTimeout: time.Nanosecond}), eng, links
			}},
		{"a 4 MiB state", big, true, clocked},
		{"a List of 5,000 aliases of a Deployment", api.State{Manifest: testkit.AliasList(5000)}, false, clocked},
		{"a List of 300 aliases of a Deployment", api.State{Manifest: testkit.AliasList(300) + "# 300\n"}, false, clocked},
		// Written out, 150 Pods inject to more YAML than a page shows of one document (16 KiB a
		// document for 50).
		{"a List of 150 Pods written out", api.State{Manifest: testkit.PodList(150)}, false, clocked},
		{"a List of 150 Pods through a step", api.State{Manifest: testkit.PodList(150) + "# steps\n", Steps: cpuSteps(1)}, false, clocked},
		{"a Pod whose 1,000 containers are one alias", api.State{Manifest: oneAlias}, false, clocked},
		{"50 Pods", api.State{Manifest: testkit.Pods(50, 0)}, false, clocked},
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
			c.st.Version, c.st.Istio = permalink.Version, engine.Version().Istio
			stateBytes := len(permalink.JSON(c.st))
			// What the server admits of the state, and the objects it has written out.
			cost, err := e.Estimate(context.Background(), []byte(c.st.Manifest), c.st.Steps, c.st.Settings)
			admitted := err == nil && Config{}.withDefaults().Work.Check(cost) == nil && !c.refused
			written := cost.Objects - cost.Aliased
			id := "none"
			if links != nil {
				id, _ = links.Put(context.Background(), Link{State: permalink.JSON(c.st)})
			}
			type answered struct {
				route boundRoute
				code  int
				n     int
			}
			var answers []answered
			for _, rt := range boundRoutes() {
				if links == nil && strings.HasPrefix(rt.name, "GET /s/") {
					continue
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, rt.req(c.st, id))
				if ce := rec.Header().Get("Content-Encoding"); ce != "" {
					t.Fatalf("%s: compressed (%s) without Accept-Encoding", rt.name, ce)
				}
				answers = append(answers, answered{rt, rec.Code, rec.Body.Len()})
			}
			// The engine's output, once the routes have made (and memoised) it.
			out, all := 0, 0
			if admitted { // the server never runs a refused state
				out, all = engineMade(t, e, c.st)
			}
			rows := len(c.st.Steps) + 1
			if out > rows*outputCap(written) {
				t.Errorf("the engine made %d bytes of output in %d rows, over --max-body and a sidecar for each of %d objects written out (%d a row)", out, rows, written, outputCap(written))
			}
			for _, a := range answers {
				t.Run(a.route.name, func(t *testing.T) {
					bound := answerBound(stateBytes, c.refused, written, rows, 0)
					switch {
					case a.route.name == "GET /compare":
						// The state on both sides.
						bound = 2 * answerBound(stateBytes, c.refused, written, rows, 0)
					case a.route.name == "POST /api/v1/inject":
						// The whole timeline, every object (not the first 50 a page shows):
						// what the engine made, each output bounded like a manifest.
						bound = answerBound(stateBytes, c.refused, written, rows, min(all, (2*rows+1)*outputCap(written)+all-2*out))
						if !c.refused {
							bound += rows * max(0, written-defaultLimit) * perShownObject
						}
					case a.route.raw:
						// The engine's output, bounded like a manifest: a raw output of 10 MB
						// from a template is over even when the engine made it.
						bound = answerBound(stateBytes, c.refused, written, rows, min(out, rows*outputCap(written)))
					}
					t.Logf("%d: %s (bound %s)", a.code, sizeText(a.n), sizeText(bound))
					if a.n > bound {
						t.Errorf("%d: %s, over the bound of %s", a.code, sizeText(a.n), sizeText(bound))
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
		ids = append(ids, c.ID)
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
	r := get(t, h, stateLink(t, api.State{Manifest: testkit.Deployment, Steps: []input.Step{{Key: "proxy.istio.io/config", Value: long}}}))
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

	short := get(t, h, stateLink(t, api.State{Manifest: testkit.Deployment, Steps: []input.Step{{Key: "proxy.istio.io/config", Value: "concurrency: 2"}}}))
	if testid(short, "step-value-1").Length() != 0 || testid(short, "step-1").First().Find(".step-t").Text() != "proxy.istio.io/config=concurrency: 2" ||
		testid(short, "more-note").Length() != 0 {
		t.Error("a short value is not shown as before")
	}
}
