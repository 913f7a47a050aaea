package handlers

import (
	"bytes"
	"compress/flate"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/catalog"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/go-cmp/cmp"
	istiolog "istio.io/istio/pkg/log"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/diff"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
	"github.com/sidecarlab/sidecarlab/permalink"
	"github.com/sidecarlab/sidecarlab/report"
	"github.com/sidecarlab/sidecarlab/web"
)

var (
	engOnce sync.Once
	eng     *engine.Engine
	engErr  error
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "worker" {
		// The test binary is the isolated worker of the isolated server (isolated_test.go).
		workerMain()
	}
	testkit.CollectLess()
	o := istiolog.DefaultOptions()
	o.SetDefaultOutputLevel(istiolog.OverrideScopeName, istiolog.NoneLevel)
	_ = istiolog.Configure(o)
	os.Exit(m.Run())
}

// newServer is the real router over the real engine, the one engine the package's tests share.
// The slowest tests that own their server call t.Parallel (this package's tests ran one after
// another, its ~150 s the unit step's longest path); Go runs them only beside each other, after
// every serial test. A test that reads the process's memory (deadlines_test.go) stays serial, and
// one that counts an engine's injections (TestAnswersBounded's work clock) counts its own
// engine's: a test beside it would count.
func newServer(t *testing.T) http.Handler {
	t.Helper()
	engOnce.Do(func() { eng, engErr = engine.New(context.Background(), engine.Options{}) })
	if engErr != nil {
		t.Fatal(engErr)
	}
	return New(slog.New(slog.NewTextHandler(io.Discard, nil)), func() Engine { return eng }, testConfig(Config{}))
}

type response struct {
	status int
	header http.Header
	body   string
	doc    *goquery.Document
}

func do(t *testing.T, h http.Handler, req *http.Request) response {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return recorded(t, rec)
}

// recorded is the response rec holds, its HTML parsed.
func recorded(t *testing.T, rec *httptest.ResponseRecorder) response {
	t.Helper()
	r := response{status: rec.Code, header: rec.Header(), body: rec.Body.String()}
	if strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
		doc, err := goquery.NewDocumentFromReader(strings.NewReader(r.body))
		if err != nil {
			t.Fatal(err)
		}
		r.doc = doc
	}
	return r
}

func get(t *testing.T, h http.Handler, target string) response {
	t.Helper()
	return do(t, h, httptest.NewRequest(http.MethodGet, target, nil))
}

func postForm(t *testing.T, h http.Handler, form url.Values) response {
	t.Helper()
	return do(t, h, formRequest(form))
}

func testid(r response, id string) *goquery.Selection {
	return r.doc.Find(`[data-testid="` + id + `"]`)
}

// changes lists "kind path" for every field-diff row of a page.
func changes(r response) []string {
	var out []string
	testid(r, "change").Each(func(_ int, s *goquery.Selection) {
		out = append(out, s.AttrOr("data-kind", "")+" "+s.AttrOr("data-path", ""))
	})
	return out
}

func contains(list []string, want string) bool {
	for _, s := range list {
		if s == want {
			return true
		}
	}
	return false
}

func TestDefaultPage(t *testing.T) {
	h := newServer(t)
	r := get(t, h, "/")
	if r.status != http.StatusOK {
		t.Fatalf("status %d", r.status)
	}
	if got := testid(r, "manifest").Text(); !strings.Contains(got, "name: productpage") {
		t.Fatalf("manifest editor holds %q, want the first preset", got)
	}
	if got := testid(r, "istio-version").Text(); got != "Istio "+engine.Version().Istio {
		t.Fatalf("version badge %q", got)
	}
	if !contains(changes(r), "added spec.template.spec.containers[istio-proxy]") {
		t.Fatalf("the default view does not show istio-proxy added: %v", changes(r))
	}
	for _, id := range []string{"tab-diff", "tab-unified", "tab-yaml", "tab-timeline", "tab-warnings", "apply", "copy-link", "annotations", "settings", "preset"} {
		if testid(r, id).Length() != 1 {
			t.Errorf("no element data-testid=%q", id)
		}
	}
	if n := testid(r, "annotation-sidecar.istio.io/proxyCPU").Length(); n != 1 {
		t.Fatalf("proxyCPU appears %d times in the panel", n)
	}
	if testid(r, "annotation-proxy.istio.io/overrides").Length() != 0 {
		t.Fatal("a hidden annotation is in the panel")
	}
	// The injector writes the status itself: nobody adds it.
	if testid(r, "annotation-sidecar.istio.io/status").Length() != 0 {
		t.Fatal("sidecar.istio.io/status is offered in the panel")
	}
	// Every input has a label.
	r.doc.Find("input:not([type=hidden]), select, textarea").Each(func(_ int, s *goquery.Selection) {
		id, _ := s.Attr("id")
		if s.ParentsFiltered("label").Length() == 0 && (id == "" || r.doc.Find(`label[for="`+id+`"]`).Length() == 0) {
			t.Errorf("input %s (name %s) has no label", id, s.AttrOr("name", ""))
		}
	})
	// Nothing is loaded from another host.
	r.doc.Find("script[src], link[href], img[src]").Each(func(_ int, s *goquery.Selection) {
		u := s.AttrOr("src", s.AttrOr("href", ""))
		if !strings.HasPrefix(u, "/") {
			t.Errorf("asset from elsewhere: %s", u)
		}
	})
}

// addStep posts the form as the page would after the person clicked "Add" on key, and follows
// the redirect.
func addStep(t *testing.T, h http.Handler, manifest string, steps []input.Step, key, value string) (location string, r response) {
	t.Helper()
	js, _ := json.Marshal(steps)
	form := url.Values{"manifest": {manifest}, "steps": {string(js)}, "mode": {"kube-inject"}, "add": {key}, "v:" + key: {value}}
	p := postForm(t, h, form)
	if p.status != http.StatusSeeOther {
		t.Fatalf("POST answered %d, want 303:\n%s", p.status, p.body)
	}
	loc := p.header.Get("Location")
	if !strings.HasPrefix(loc, "/?s=") {
		t.Fatalf("redirect to %q, want a permalink", loc)
	}
	return loc, get(t, h, loc)
}

func TestPostRedirectsToAPermalinkThatRendersTheSame(t *testing.T) {
	h := newServer(t)
	loc, r := addStep(t, h, testkit.Deployment, nil, "sidecar.istio.io/proxyCPU", "200m")
	if r.status != http.StatusOK {
		t.Fatalf("permalink answered %d", r.status)
	}
	want := "changed spec.template.spec.containers[istio-proxy].resources.requests.cpu"
	if !contains(changes(r), want) {
		t.Fatalf("missing %q in %v", want, changes(r))
	}
	again := get(t, h, loc)
	a, _ := testid(r, "results").Html()
	b, _ := testid(again, "results").Html()
	if a != b || a == "" {
		t.Fatal("the permalink does not render the same results twice")
	}
	if got := testid(r, "permalink").AttrOr("href", ""); got != loc {
		t.Fatalf("permalink button points to %q, want %q", got, loc)
	}
	// The steps carried by the form are the timeline.
	var steps []input.Step
	if err := json.Unmarshal([]byte(testid(r, "steps").AttrOr("value", "")), &steps); err != nil || len(steps) != 1 || steps[0].Key != "sidecar.istio.io/proxyCPU" {
		t.Fatalf("steps field: %v %v", steps, err)
	}
	if got := testid(r, "active-sidecar.istio.io/proxyCPU").Text(); !strings.Contains(got, "sidecar.istio.io/proxyCPU=200m") {
		t.Fatalf("proxyCPU not listed as set by the timeline: %q", got)
	}
}

// TestLabAnnotations: each annotation of the lab, added through the form, shows its diff rows.
func TestLabAnnotations(t *testing.T) {
	h := newServer(t)
	const p = "spec.template.spec."
	cases := []struct {
		key, value string
		want       []string
	}{
		{"sidecar.istio.io/proxyCPU", "200m", []string{"changed " + p + "containers[istio-proxy].resources.requests.cpu", "removed " + p + "containers[istio-proxy].resources.limits"}},
		{"sidecar.istio.io/proxyMemory", "256Mi", []string{"changed " + p + "containers[istio-proxy].resources.requests.memory"}},
		{"proxy.istio.io/config", "concurrency: 2", []string{"changed " + p + "containers[istio-proxy].env[PROXY_CONFIG].value"}},
		{"proxy.istio.io/config", "holdApplicationUntilProxyStarts: true", []string{"moved " + p + "containers[istio-proxy]", "added " + p + "containers[istio-proxy].lifecycle"}},
		{"traffic.sidecar.istio.io/excludeOutboundPorts", "3306", []string{"added " + p + "initContainers[istio-init].args[-o]"}},
		{"sidecar.istio.io/inject", "false", []string{"removed " + p + "containers[istio-proxy]", "removed " + p + "initContainers[istio-init]"}},
		{"sidecar.istio.io/nativeSidecar", "true", []string{"moved " + p + "initContainers[istio-proxy]", "added " + p + "initContainers[istio-proxy].restartPolicy"}},
	}
	for _, c := range cases {
		t.Run(c.key+"="+c.value, func(t *testing.T) {
			_, r := addStep(t, h, testkit.Deployment, nil, c.key, c.value)
			step1 := testid(r, "diff-step-1")
			if step1.Length() != 1 {
				t.Fatal("no step 1 in the field diff")
			}
			var got []string
			step1.Find(`[data-testid="change"]`).Each(func(_ int, s *goquery.Selection) {
				got = append(got, s.AttrOr("data-kind", "")+" "+s.AttrOr("data-path", ""))
				if cause := s.Find(`[data-testid="cause"] code`).Text(); cause != c.key+"="+c.value {
					t.Errorf("row %s caused by %q", s.AttrOr("data-path", ""), cause)
				}
			})
			for _, w := range c.want {
				if !contains(got, w) {
					t.Errorf("missing %q in %v", w, got)
				}
			}
		})
	}
}

func stateLink(t *testing.T, s api.State) string {
	t.Helper()
	return "/?s=" + permalink.Encode(s)
}

func TestBadManifestIsShownAtItsLine(t *testing.T) {
	h := newServer(t)
	bad := testkit.Deployment + "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n   bad: indent\n"
	r := get(t, h, stateLink(t, api.State{Manifest: bad}))
	if r.status != http.StatusUnprocessableEntity {
		t.Fatalf("status %d, want 422", r.status)
	}
	wantLine := strings.Count(testkit.Deployment, "\n") + 6
	if got := testid(r, "manifest").AttrOr("data-error-line", ""); got != itoa(int64(wantLine)) {
		t.Fatalf("error mark on line %s, want %d", got, wantLine)
	}
	// The column too: the key indented one space too many starts at column 4.
	if got := testid(r, "manifest").AttrOr("data-error-col", ""); got != "4" {
		t.Fatalf("error mark at column %s, want 4", got)
	}
	if msg := testid(r, "manifest-error").Text(); !strings.HasPrefix(msg, "document 2, line "+itoa(int64(wantLine))+", column 4: ") {
		t.Fatalf("error text %q", msg)
	}
	// Said once, in words; the parser's own text behind "details".
	msg := testid(r, "manifest-error").Text()
	if strings.Count(strings.ToLower(msg), "line") != 1 || strings.Contains(msg, "converting YAML to JSON") || !strings.Contains(msg, "check the indentation") {
		t.Fatalf("error text %q: want the line once, in words", msg)
	}
	if d := testid(r, "parser-text").Text(); !strings.Contains(d, "mapping values are not allowed") {
		t.Fatalf("the parser's text is not behind details: %q", d)
	}
	// A key indented less than the one before it stops go-yaml's parser, whose message names the
	// line before (engine.TestYAMLErrorLine): the mark is on the bad line itself.
	under := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n  containers:\n  - name: app\n    image: nginx\n   ports: []\n"
	r = get(t, h, stateLink(t, api.State{Manifest: testkit.Deployment + "---\n" + under}))
	wantLine = strings.Count(testkit.Deployment, "\n") + 1 + 9
	if got := testid(r, "manifest").AttrOr("data-error-line", ""); r.status != http.StatusUnprocessableEntity || got != itoa(int64(wantLine)) {
		t.Fatalf("status %d, error mark on line %s, want %d (%s)", r.status, got, wantLine, testid(r, "parser-text").Text())
	}
	// A request-level error (an invalid annotation value) names the step.
	r = get(t, h, stateLink(t, api.State{Manifest: testkit.Deployment, Steps: []input.Step{{Key: "sidecar.istio.io/proxyCPU", Value: "lots"}}}))
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(testid(r, "error").Text(), "step 1") {
		t.Fatalf("status %d, error %q", r.status, testid(r, "error").Text())
	}
	// And the server is still fine.
	if get(t, h, "/healthz").status != http.StatusOK {
		t.Fatal("unhealthy after bad input")
	}
}

// TestFragmentOutcome: an answer the page script gets that is not OK says which it is
// (data-outcome, the script's words for its status line): an empty manifest asks for one — not
// "Istio rejected part of this input — see the marks", which has no marks to point at — a request
// refused as a whole points at its error, documents Istio rejected at their marks. A manifest of
// comments only is Istio's to pass through, as istioctl does: OK, with a note saying it names no
// kind and what to paste.
func TestFragmentOutcome(t *testing.T) {
	h := newServer(t)
	badDoc := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n  containers: nope\n"
	cases := []struct {
		name    string
		state   api.State
		status  int
		outcome string
		// say is what the results say.
		say string
	}{
		{"empty", api.State{Manifest: ""}, http.StatusUnprocessableEntity, web.OutcomeEmpty, "the manifest is empty; paste a Pod"},
		{"blank lines", api.State{Manifest: "  \n\t\n\n"}, http.StatusUnprocessableEntity, web.OutcomeEmpty, "the manifest is empty; paste a Pod"},
		{"a refused annotation value", api.State{Manifest: testkit.Deployment, Steps: []input.Step{{Key: "sidecar.istio.io/proxyCPU", Value: "lots"}}},
			http.StatusUnprocessableEntity, web.OutcomeRefused, "invalid value 'lots'"},
		{"a document that is not what Kubernetes reads", api.State{Manifest: testkit.Deployment + "---\n" + badDoc}, http.StatusUnprocessableEntity, web.OutcomeRejectedSchema,
			"Document 2 is YAML, but not what Kubernetes reads as its kind"},
		{"a document that is not YAML", api.State{Manifest: testkit.Deployment + "---\n" + "a: [b\n"}, http.StatusUnprocessableEntity, web.OutcomeRejectedYAML, "Document 2 is not valid YAML"},
		{"a document Istio rejects", api.State{Manifest: strings.Replace(testkit.Deployment, "    metadata:\n      labels:\n", "    metadata:\n      annotations:\n        proxy.istio.io/config: '{bad'\n      labels:\n", 1)},
			http.StatusUnprocessableEntity, web.OutcomeRejected, "Injection failed for document 1"},
		{"comments only", api.State{Manifest: "# nothing yet\n"}, http.StatusOK, "", "Document 1 names no kind"},
		{"a workload", api.State{Manifest: testkit.Deployment}, http.StatusOK, "", "istio-proxy"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, stateLink(t, c.state), nil)
			req.Header.Set(partialHeader, "1")
			r := do(t, h, req)
			frag := r.doc.Find("#fragment")
			if r.status != c.status || frag.Length() != 1 || frag.AttrOr("data-outcome", "?") != c.outcome {
				t.Fatalf("status %d, outcome %q; want %d, %q", r.status, frag.AttrOr("data-outcome", "?"), c.status, c.outcome)
			}
			if got := frag.Find("#results-body").Text(); !strings.Contains(got, c.say) {
				t.Fatalf("the results do not say %q:\n%s", c.say, got)
			}
		})
	}
	// Each outcome is one of the script's words, in every language.
	for _, code := range i18n.Codes {
		words := web.JSWords(i18n.For(code))
		for _, o := range []string{web.OutcomeRejected, web.OutcomeRejectedYAML, web.OutcomeRejectedSchema, web.OutcomeEmpty, web.OutcomeRefused, web.OutcomeNamespace} {
			if w := words[o]; w == "" || w == "page.js."+o {
				t.Errorf("%s: no words for the outcome %q", code, o)
			}
		}
	}
}

// TestFragment: the page script's requests get only the regions that change, the same as in the
// full page.
func TestFragment(t *testing.T) {
	h := newServer(t)
	link := stateLink(t, api.State{Manifest: testkit.Deployment, Steps: []input.Step{{Key: "sidecar.istio.io/proxyCPU", Value: "200m"}}})
	full := get(t, h, link)
	req := httptest.NewRequest(http.MethodGet, link, nil)
	req.Header.Set(partialHeader, "1")
	frag := do(t, h, req)
	if frag.status != http.StatusOK || frag.doc.Find("#fragment").Length() != 1 {
		t.Fatalf("fragment: status %d", frag.status)
	}
	if testid(frag, "annotations").Length() != 0 || frag.doc.Find("#playground").Length() != 0 {
		t.Fatal("the fragment carries what never changes")
	}
	frag.doc.Find("[data-swap]").Each(func(_ int, s *goquery.Selection) {
		id := s.AttrOr("id", "")
		a, _ := s.Html()
		b, _ := full.doc.Find("#" + id).Html()
		if id == "results-body" {
			// Only the selected tab has content in a fragment.
			a, _ = s.Find(`[data-panel="diff"]`).Html()
			b, _ = full.doc.Find(`[data-panel="diff"]`).Html()
			if s.Find(`[data-panel="yaml"][data-empty]`).Length() != 1 || full.doc.Find(`[data-panel="yaml"][data-empty]`).Length() != 0 {
				t.Error("the fragment should leave other tabs empty, the page should not")
			}
		}
		if a != b {
			t.Errorf("region #%s differs between the fragment and the page", id)
		}
	})
	if n := frag.doc.Find("[data-swap]").Length(); n != full.doc.Find("[data-swap]").Length() || n < 5 {
		t.Fatalf("%d regions in the fragment", n)
	}
	if frag.doc.Find("#fragment").AttrOr("data-permalink", "") != testid(full, "permalink").AttrOr("href", "") {
		t.Fatal("the fragment's permalink differs")
	}
	if !strings.Contains(strings.Join(frag.header.Values("Vary"), ", "), partialHeader) {
		t.Fatal("responses differ by the partial header but do not say so")
	}
}

// TestPartialPostAnswersInPlace: the script's POST gets the fragment directly, with the same
// permalink a redirect would have given.
func TestPartialPostAnswersInPlace(t *testing.T) {
	h := newServer(t)
	form := url.Values{"manifest": {testkit.Deployment}, "add": {"sidecar.istio.io/proxyCPU"}, "v:sidecar.istio.io/proxyCPU": {"200m"}}
	plain := postForm(t, h, form)
	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set(partialHeader, "1")
	frag := do(t, h, req)
	if plain.status != http.StatusSeeOther || frag.status != http.StatusOK {
		t.Fatalf("statuses %d and %d", plain.status, frag.status)
	}
	if got := frag.doc.Find("#fragment").AttrOr("data-permalink", ""); got != plain.header.Get("Location") {
		t.Fatalf("fragment permalink %q, redirect %q", got, plain.header.Get("Location"))
	}
	if !contains(changes(frag), "changed spec.template.spec.containers[istio-proxy].resources.requests.cpu") {
		t.Fatal("the fragment lacks the new diff")
	}
}

func TestOversizedBody(t *testing.T) {
	h := newServer(t)
	big := strings.Repeat("# padding\n", 300000)
	r := postForm(t, h, url.Values{"manifest": {big}})
	if r.status != http.StatusRequestEntityTooLarge || !strings.Contains(testid(r, "error-message").Text(), "1 MiB") {
		t.Fatalf("form: status %d %q", r.status, testid(r, "error-message").Text())
	}
	req := httptest.NewRequest(http.MethodPost, "/api/v1/inject", strings.NewReader(`{"manifest":"`+strings.Repeat("x", 2<<20)+`"}`))
	req.Header.Set("Content-Type", "application/json")
	r = do(t, h, req)
	if r.status != http.StatusRequestEntityTooLarge || !strings.Contains(r.body, `"status": 413`) {
		t.Fatalf("api: status %d %s", r.status, r.body[:min(len(r.body), 200)])
	}
}

func TestHostileInputIsEscaped(t *testing.T) {
	h := newServer(t)
	evil := strings.Replace(testkit.Deployment, "app: web\n    spec", "app: web\n        note: \"<script>alert(1)</script>\"\n    spec", 1)
	r := get(t, h, stateLink(t, api.State{Manifest: evil, Steps: []input.Step{{Key: "example.com/x", Value: "<img src=x onerror=alert(2)>"}}}))
	if r.status != http.StatusOK {
		t.Fatalf("status %d", r.status)
	}
	if strings.Contains(r.body, "<script>alert(1)") || strings.Contains(r.body, "<img src=x") {
		t.Fatal("hostile input came back unescaped")
	}
	if !strings.Contains(testid(r, "manifest").Text(), "<script>alert(1)</script>") {
		t.Fatal("the manifest lost the text instead of escaping it")
	}
	if r.doc.Find("script").FilterFunction(func(_ int, s *goquery.Selection) bool { return strings.Contains(s.Text(), "alert") }).Length() != 0 {
		t.Fatal("a script element carries the input")
	}
}

func TestOlderStateVersion(t *testing.T) {
	h := newServer(t)
	b, err := os.ReadFile("testdata/state-v1.txt")
	if err != nil {
		t.Fatal(err)
	}
	st, err := decodeState(string(b))
	if err != nil {
		t.Fatal(err)
	}
	want := api.State{Version: 1, Istio: "1.31", Manifest: "apiVersion: v1\nkind: Pod\nmetadata:\n  name: v1-link\nspec:\n  containers:\n  - name: app\n    image: nginx\n",
		Steps:    []input.Step{{Key: "sidecar.istio.io/proxyCPU", Value: "300m"}, {Key: "proxy.istio.io/config", Value: "holdApplicationUntilProxyStarts: true"}},
		Settings: engine.Settings{Mode: engine.ModeWebhook, KubernetesVersion: "1.30"}}
	if d := cmp.Diff(want, st); d != "" {
		t.Fatalf("v1 link decodes differently (-want +got)\n%s", d)
	}
	r := get(t, h, "/?s="+strings.TrimSpace(string(b)))
	if r.status != http.StatusOK || testid(r, "diff-step-2").Length() != 1 {
		t.Fatalf("v1 link: status %d", r.status)
	}
	// A link from another Istio says so.
	other := st
	other.Istio = "1.29"
	r = get(t, h, stateLink(t, other))
	if banner := testid(r, "banner").Text(); !strings.Contains(banner, "Istio 1.29") || !strings.Contains(banner, "Istio "+engine.Version().Istio) {
		t.Fatalf("banner %q", banner)
	}
	if testid(get(t, h, stateLink(t, st)), "banner").Length() != 0 {
		t.Fatal("banner on a link of this Istio")
	}
	// A newer or broken link is a clear 400.
	for _, bad := range []string{"/?s=not-a-state!", "/?s=" + permalink.Encode(api.State{Manifest: testkit.Deployment})[:20], newerState()} {
		r := get(t, h, bad)
		if r.status != http.StatusBadRequest || !strings.Contains(testid(r, "error-message").Text(), "this link cannot be read") {
			t.Errorf("%s: status %d %q", bad[:min(30, len(bad))], r.status, testid(r, "error-message").Text())
		}
	}
}

// newerState is a link written by a future sidecarlab (state version + 1).
func newerState() string {
	var buf bytes.Buffer
	zw, _ := flate.NewWriter(&buf, flate.BestCompression)
	_ = json.NewEncoder(zw).Encode(map[string]any{"v": permalink.Version + 1, "manifest": "x"})
	_ = zw.Close()
	return "/?s=" + base64.RawURLEncoding.EncodeToString(buf.Bytes())
}

func TestActions(t *testing.T) {
	h := newServer(t)
	steps := []input.Step{{Key: "sidecar.istio.io/proxyCPU", Value: "200m"}, {Key: "sidecar.istio.io/logLevel", Value: "debug"}}
	js, _ := json.Marshal(steps)
	follow := func(form url.Values) response {
		p := postForm(t, h, form)
		if p.status != http.StatusSeeOther {
			t.Fatalf("status %d: %s", p.status, p.body)
		}
		return get(t, h, p.header.Get("Location"))
	}
	r := follow(url.Values{"manifest": {testkit.Deployment}, "steps": {string(js)}, "remove": {"1"}})
	if testid(r, "timeline-1").Text() == "" || !strings.Contains(testid(r, "timeline-1").Text(), "logLevel") || testid(r, "timeline-2").Length() != 0 {
		t.Fatalf("remove step 1: timeline %q", testid(r, "timeline").Text())
	}
	r = follow(url.Values{"manifest": {testkit.Deployment}, "steps": {string(js)}, "unset": {"sidecar.istio.io/proxyCPU"}})
	if !strings.Contains(testid(r, "timeline-3").Text(), "remove sidecar.istio.io/proxyCPU") {
		t.Fatalf("unset: timeline %q", testid(r, "timeline").Text())
	}
	r = follow(url.Values{"manifest": {testkit.Deployment}, "action": {"preset"}, "preset": {"job"}})
	if !strings.Contains(testid(r, "manifest").Text(), "kind: Job") {
		t.Fatal("preset not loaded")
	}
	r = follow(url.Values{"manifest": {testkit.Deployment}, "mode": {"webhook"}, "kubernetesVersion": {"1.34"}})
	if !strings.Contains(testid(r, "injected-yaml").Text(), "restartPolicy: Always") {
		t.Fatal("webhook mode on 1.34 did not go native")
	}
	r = follow(url.Values{"manifest": {testkit.Deployment}, "set": {"values.global.proxy.holdApplicationUntilProxyStarts=true\n"}})
	if !strings.Contains(testid(r, "injected-yaml").Text(), "- wait") {
		t.Fatal("install option not applied")
	}
	if p := postForm(t, h, url.Values{"manifest": {testkit.Deployment}, "steps": {"[oops"}}); p.status != http.StatusBadRequest {
		t.Fatalf("bad steps field: %d", p.status)
	}
	if p := postForm(t, h, url.Values{"manifest": {testkit.Deployment}, "remove": {"9"}}); p.status != http.StatusBadRequest {
		t.Fatalf("remove of a missing step: %d", p.status)
	}
}

func TestTabsStepsAndDownload(t *testing.T) {
	h := newServer(t)
	link := stateLink(t, api.State{Manifest: testkit.Deployment, Steps: []input.Step{{Key: "sidecar.istio.io/proxyCPU", Value: "200m"}}})
	r := get(t, h, link+"&tab=yaml&step=0")
	if _, hidden := testid(r, "panel-yaml").Attr("hidden"); hidden {
		t.Fatal("yaml panel hidden on tab=yaml")
	}
	if _, hidden := testid(r, "panel-diff").Attr("hidden"); !hidden {
		t.Fatal("diff panel shown on tab=yaml")
	}
	if strings.Contains(testid(r, "injected-yaml").Text(), "cpu: 200m") {
		t.Fatal("step 0 output shows step 1's change")
	}
	if testid(r, "diff-step-1").Length() != 0 {
		t.Fatal("step=0 still lists step 1's diff")
	}
	dl := get(t, h, testid(r, "download-yaml").AttrOr("href", ""))
	if dl.status != http.StatusOK || !strings.Contains(dl.header.Get("Content-Disposition"), "attachment") || !strings.HasSuffix(dl.body, "---\n") {
		t.Fatalf("download: %d %v", dl.status, dl.header)
	}
	if r := get(t, h, link+"&step=x"); r.status != http.StatusBadRequest {
		t.Fatalf("bad step: %d", r.status)
	}
	if r := get(t, h, "/nowhere"); r.status != http.StatusNotFound || testid(r, "error").Length() != 1 {
		t.Fatalf("404: %d", r.status)
	}
}

func TestAPI(t *testing.T) {
	h := newServer(t)
	post := func(body string) response {
		req := httptest.NewRequest(http.MethodPost, "/api/v1/inject", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		return do(t, h, req)
	}
	body, _ := json.Marshal(api.InjectRequest{Manifest: testkit.Deployment, Steps: []input.Step{{Key: "sidecar.istio.io/nativeSidecar", Value: "true"}}})
	r := post(string(body))
	if r.status != http.StatusOK {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	var resp apiAnswer
	if err := json.Unmarshal([]byte(r.body), &resp); err != nil {
		t.Fatal(err)
	}
	if len(resp.Timeline.Steps) != 2 || resp.Output == nil || !strings.Contains(*resp.Output, "restartPolicy: Always") || resp.Istio != engine.Version() || !strings.HasPrefix(resp.Permalink, "/?s=") {
		t.Fatalf("response: %d steps, permalink %q", len(resp.Timeline.Steps), resp.Permalink)
	}
	found := false
	for _, c := range resp.Timeline.Steps[1].Changes {
		found = found || (c.Path == "spec.template.spec.initContainers[istio-proxy].restartPolicy" && c.Kind == diff.Added && c.Cause == "sidecar.istio.io/nativeSidecar=true")
	}
	if !found {
		t.Fatal("the API diff lacks the native sidecar's restartPolicy")
	}
	errCases := []struct {
		name, body string
		status     int
		want       string
	}{
		{"not JSON", "{", 400, "not valid JSON"},
		{"unknown field", `{"manifest":"x","bogus":1}`, 400, "bogus"},
		{"empty manifest", `{"manifest":""}`, 422, "empty"},
		{"bad YAML", `{"manifest":"kind: Pod\n  x: : y\n"}`, 422, `"line": 2`},
		{"an unclosed quote, at its column", `{"manifest":"kind: Pod\nmetadata:\n  name: \"x\n"}`, 422, `"line": 3,
    "column": 9,`},
		{"bad annotation", `{"manifest":"kind: Pod\n","steps":[{"key":"sidecar.istio.io/proxyCPU","value":"x"}]}`, 422, `"field": "annotation \"sidecar.istio.io/proxyCPU\""`},
		{"bad mode", `{"manifest":"kind: Pod\n","settings":{"mode":"nope"}}`, 422, "unknown mode"},
	}
	for _, c := range errCases {
		r := post(c.body)
		if r.status != c.status || !strings.Contains(r.body, c.want) || !strings.Contains(r.header.Get("Content-Type"), "application/json") {
			t.Errorf("%s: status %d body %s", c.name, r.status, r.body)
		}
	}
	// Several bad documents are all named.
	r = post(`{"manifest":"kind: Pod\nmetadata: [\n---\nkind: Pod\nspec: 1\n"}`)
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, `"documents"`) || !strings.Contains(r.body, `"doc": 2`) {
		t.Errorf("document errors: %d %s", r.status, r.body)
	}
	r = get(t, h, "/api/v1/annotations")
	var cat []catalog.Annotation
	if err := json.Unmarshal([]byte(r.body), &cat); err != nil || len(cat) < 40 {
		t.Fatalf("annotations: %v, %d", err, len(cat))
	}
	r = get(t, h, "/api/v1/version")
	if !strings.Contains(r.body, engine.Version().Module) {
		t.Fatalf("version: %s", r.body)
	}
}

func TestReadiness(t *testing.T) {
	var ready *engine.Engine
	h := New(slog.New(slog.NewTextHandler(io.Discard, nil)), func() Engine {
		if ready == nil {
			return nil
		}
		return ready
	}, testConfig(Config{}))
	if r := get(t, h, "/readyz"); r.status != http.StatusServiceUnavailable {
		t.Fatalf("readyz before the engine: %d", r.status)
	}
	// What needs the engine says it is starting: pages as a page, the API as its JSON error.
	link := stateLink(t, api.State{Manifest: testkit.Deployment})
	for _, target := range []string{"/", link, "/compare?a=x&b=y", "/embed", "/download", "/state.json" + link[1:], "/batch.csv", "/s/0000000000000000"} {
		r := get(t, h, target)
		if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" || !strings.Contains(testid(r, "error-message").Text(), "starting") {
			t.Errorf("%s before the engine: %d %q %q", target, r.status, r.header.Get("Retry-After"), r.body[:min(200, len(r.body))])
		}
	}
	for _, req := range []*http.Request{formRequest(url.Values{"manifest": {testkit.Deployment}}), shareRequest(url.Values{"manifest": {testkit.Deployment}})} {
		if r := do(t, h, req); r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" {
			t.Errorf("POST %s before the engine: %d", req.URL.Path, r.status)
		}
	}
	r := do(t, h, rawAPI(`{"manifest":"kind: Pod\n"}`))
	var body api.Error
	if err := json.Unmarshal([]byte(r.body), &body); err != nil || r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" ||
		body.Error.Status != http.StatusServiceUnavailable || !strings.Contains(body.Error.Message, "starting") {
		t.Errorf("the API before the engine: %d %s", r.status, r.body)
	}
	// What does not need it answers at once.
	for _, target := range []string{"/healthz", "/metrics", "/static/app.css", "/api/v1/version", "/api/v1/annotations"} {
		if r := get(t, h, target); r.status != http.StatusOK {
			t.Errorf("%s before the engine: %d", target, r.status)
		}
	}
	newServer(t)
	ready = eng
	if r := get(t, h, "/readyz"); r.status != http.StatusOK {
		t.Fatalf("readyz after: %d", r.status)
	}
	if r := get(t, h, "/"); r.status != http.StatusOK {
		t.Fatalf("page after: %d", r.status)
	}
}

func TestStaticAssets(t *testing.T) {
	h := newServer(t)
	for _, p := range []string{"/static/app.css", "/static/dist/app.js", "/static/favicon.svg"} {
		r := get(t, h, p)
		if r.status != http.StatusOK || len(r.body) < 100 {
			t.Errorf("%s: %d, %d bytes", p, r.status, len(r.body))
		}
	}
}

const jobYAML = `apiVersion: batch/v1
kind: Job
metadata:
  name: once
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: work
        image: busybox
`

func verdict(r response, id string) string {
	return testid(r, "verdict-"+id).First().AttrOr("data-answer", "")
}

// TestPitfallFixAndLifecycle: a Job shows its pitfall with a fix button; the fix turns the proxy
// native, and the Job-completion verdict flips.
func TestPitfallFixAndLifecycle(t *testing.T) {
	h := newServer(t)
	link := stateLink(t, api.State{Manifest: jobYAML})
	r := get(t, h, link+"&tab=pitfalls")
	f := testid(r, "finding-job-classic-sidecar")
	if f.Length() != 1 || !strings.Contains(f.Text(), "quitquitquit") {
		t.Fatalf("no job-classic-sidecar finding: %q", testid(r, "findings").Text())
	}
	if testid(r, "tab-pitfalls").Find(".count").Text() != "1" {
		t.Fatal("the Pitfalls tab does not count its findings")
	}
	if verdict(r, "job-completes") != "no" || testid(r, "lifecycle-svg").Find("rect").Length() < 4 {
		t.Fatalf("lifecycle: job-completes %q", verdict(r, "job-completes"))
	}
	fix := testid(r, "fix-job-classic-sidecar").AttrOr("value", "")
	js, _ := json.Marshal(api.State{}.Steps)
	p := postForm(t, h, url.Values{"manifest": {jobYAML}, "steps": {string(js)}, "fix": {fix}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("fix: %d", p.status)
	}
	r = get(t, h, p.header.Get("Location"))
	if testid(r, "finding-job-classic-sidecar").Length() != 0 || verdict(r, "job-completes") != "yes" {
		t.Fatalf("after the fix: finding %d, job-completes %q", testid(r, "finding-job-classic-sidecar").Length(), verdict(r, "job-completes"))
	}
	if !strings.Contains(testid(r, "steps").AttrOr("value", ""), "sidecar.istio.io/nativeSidecar") {
		t.Fatal("the fix did not add its step")
	}
	// A clean Deployment has no pitfall.
	if r := get(t, h, stateLink(t, api.State{Manifest: testkit.Deployment})+"&tab=pitfalls"); testid(r, "no-pitfalls").Length() != 1 {
		t.Fatal("a clean Deployment shows pitfalls")
	}
}

func TestCapacity(t *testing.T) {
	h := newServer(t)
	fleet := strings.Replace(testkit.Deployment, "spec:\n  selector", "spec:\n  replicas: 2000\n  selector", 1)
	r := get(t, h, stateLink(t, api.State{Manifest: fleet})+"&tab=lifecycle")
	if got := testid(r, "capacity-total").Text(); !strings.Contains(got, "2000 pods") || !strings.Contains(got, "cpu=200 memory=250Gi") {
		t.Fatalf("capacity: %q", got)
	}
	p := postForm(t, h, url.Values{"manifest": {testkit.Deployment}, "action": {"capacity"}, "replicas": {"50"}})
	r = get(t, h, p.header.Get("Location"))
	if got := testid(r, "capacity-total").Text(); !strings.Contains(got, "50 pods") || !strings.Contains(got, "cpu=5 ") {
		t.Fatalf("typed pods: %q", got)
	}
	if r := get(t, h, stateLink(t, api.State{Manifest: testkit.Deployment})+"&replicas=0"); r.status != http.StatusBadRequest {
		t.Fatalf("replicas=0: %d", r.status)
	}
}

func TestCompare(t *testing.T) {
	h := newServer(t)
	r := get(t, h, stateLink(t, api.State{Manifest: jobYAML})+"&tab=lifecycle")
	var href string
	testid(r, "compare-link").Each(func(_ int, s *goquery.Selection) {
		if strings.Contains(s.Text(), "classic vs native") {
			href = s.AttrOr("href", "")
		}
	})
	if href == "" {
		t.Fatal("no classic-vs-native link on a Job")
	}
	c := get(t, h, href)
	if c.status != http.StatusOK {
		t.Fatalf("compare: %d", c.status)
	}
	a := c.doc.Find(`[data-testid="side-a"] [data-testid="verdict-job-completes"]`).AttrOr("data-answer", "")
	b := c.doc.Find(`[data-testid="side-b"] [data-testid="verdict-job-completes"]`).AttrOr("data-answer", "")
	if a != "no" || b != "yes" {
		t.Fatalf("job-completes: classic %q, native %q", a, b)
	}
	if !contains(changes(c), "moved spec.template.spec.initContainers[istio-proxy]") {
		t.Fatalf("compare changes: %v", changes(c))
	}
	if get(t, h, "/compare?a=bad&b=bad").status != http.StatusBadRequest {
		t.Fatal("a bad compare link is not a 400")
	}
	// A Deployment has no Job comparison, but has the hold one and the one with ambient.
	r = get(t, h, stateLink(t, api.State{Manifest: testkit.Deployment})+"&tab=lifecycle")
	if n := testid(r, "compare-link").Length(); n != 2 || !strings.Contains(testid(r, "compare-link").First().Text(), "hold") || !strings.Contains(testid(r, "compare-link").Last().Text(), "ambient") {
		t.Fatalf("Deployment compare links: %d", n)
	}
}

func TestBatchDownloads(t *testing.T) {
	h := newServer(t)
	multi := testkit.Deployment + "---\n" + jobYAML + "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: s\n"
	link := stateLink(t, api.State{Manifest: multi})
	r := get(t, h, link+"&tab=batch")
	if n := testid(r, "batch-row").Length(); n != 3 {
		t.Fatalf("%d batch rows", n)
	}
	js := get(t, h, testid(r, "batch-json").AttrOr("href", ""))
	var rows []engine.BatchRow
	if err := json.Unmarshal([]byte(js.body), &rows); err != nil || len(rows) != 3 || rows[1].Pitfalls[0] != "job-classic-sidecar" || rows[2].Result != "passed through" {
		t.Fatalf("json: %v %+v", err, rows)
	}
	csv := get(t, h, testid(r, "batch-csv").AttrOr("href", ""))
	back, err := report.ParseBatchCSV([]byte(csv.body))
	if err != nil || len(back) != 3 || back[0].Name != "web" || back[0].Requests != rows[0].Requests {
		t.Fatalf("csv: %v %+v", err, back)
	}
	md := get(t, h, testid(r, "batch-md").AttrOr("href", ""))
	if !strings.HasPrefix(md.body, "| doc | kind |") || strings.Count(md.body, "\n") != 5 {
		t.Fatalf("markdown:\n%s", md.body)
	}
	// The API gives the same rows.
	body, _ := json.Marshal(api.InjectRequest{Manifest: multi})
	req := httptest.NewRequest(http.MethodPost, "/api/v1/inject", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	got := do(t, h, req)
	var resp api.InjectResponse
	if err := json.Unmarshal([]byte(got.body), &resp); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(string(report.BatchJSON(rows)), string(report.BatchJSON(resp.Batch))); d != "" {
		t.Fatalf("API rows differ from the download (-web +api)\n%s", d)
	}
	if len(resp.Findings) != 1 || len(resp.Lifecycles) != 2 {
		t.Fatalf("API: %d findings, %d lifecycles", len(resp.Findings), len(resp.Lifecycles))
	}
}

func TestUpload(t *testing.T) {
	h := newServer(t)
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for name, body := range map[string]string{"a.yaml": testkit.Deployment, "b.yaml": jobYAML} {
		fw, _ := mw.CreateFormFile("files", name)
		_, _ = fw.Write([]byte(body))
	}
	_ = mw.WriteField("manifest", "ignored")
	_ = mw.WriteField("action", "upload")
	_ = mw.Close()
	req := httptest.NewRequest(http.MethodPost, "/", &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	p := do(t, h, req)
	if p.status != http.StatusSeeOther {
		t.Fatalf("upload: %d %s", p.status, p.body)
	}
	r := get(t, h, p.header.Get("Location"))
	if n := testid(r, "batch-row").Length(); n != 2 {
		t.Fatalf("%d batch rows after uploading two files", n)
	}
	if !strings.Contains(testid(r, "manifest").Text(), "kind: Job") {
		t.Fatal("the uploaded files are not the manifest")
	}
	// Without files the action says what to do.
	var empty bytes.Buffer
	mw = multipart.NewWriter(&empty)
	_ = mw.WriteField("action", "upload")
	_ = mw.Close()
	req = httptest.NewRequest(http.MethodPost, "/", &empty)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if p := do(t, h, req); p.status != http.StatusBadRequest {
		t.Fatalf("upload without files: %d", p.status)
	}
}

// TestSecurityHeaders: every response carries the headers; the policy allows no inline script,
// inline style only by the response's own nonce, and nothing from elsewhere.
func TestSecurityHeaders(t *testing.T) {
	h := newServer(t)
	for _, path := range []string{"/", "/healthz", "/static/app.css", "/api/v1/version", "/nowhere"} {
		r := get(t, h, path)
		csp := r.header.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'self'", "script-src 'self';", "style-src 'self' 'nonce-", "frame-ancestors 'none'", "object-src 'none'", "base-uri 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s: CSP %q lacks %q", path, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
			t.Errorf("%s: CSP allows unsafe code: %q", path, csp)
		}
		if r.header.Get("X-Content-Type-Options") != "nosniff" || r.header.Get("Referrer-Policy") != "same-origin" || r.header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s: headers %v", path, r.header)
		}
	}
	r := get(t, h, "/")
	nonce := r.doc.Find(`meta[name="csp-nonce"]`).AttrOr("content", "")
	if nonce == "" || !strings.Contains(r.header.Get("Content-Security-Policy"), "'nonce-"+nonce+"'") {
		t.Fatalf("the page's nonce %q is not the policy's", nonce)
	}
	if other := get(t, h, "/").doc.Find(`meta[name="csp-nonce"]`).AttrOr("content", ""); other == nonce {
		t.Fatal("the nonce does not change per response")
	}
	// The one script without src is the script's words: data (type application/json), never run.
	r.doc.Find(`script:not(#i18n-js[type="application/json"])`).Each(func(_ int, s *goquery.Selection) {
		if _, ok := s.Attr("src"); !ok {
			t.Errorf("an inline script: %q", s.Text())
		}
	})
	if r.doc.Find("[style]").Length() != 0 || r.doc.Find("style").Length() != 0 {
		t.Error("inline style in the page")
	}
}
