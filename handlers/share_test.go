package handlers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/PuerkitoBio/goquery"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
	"github.com/sidecarlab/sidecarlab/permalink"
)

func serverWith(t *testing.T, links LinkStore) http.Handler {
	t.Helper()
	return serverConfig(t, Config{Links: links})
}

// memLinks is a LinkStore in memory that keeps the contract of the real one (package store,
// behind cmd/sidecarlab's adapter, tested there): the id comes from the state, a stored link is
// never overwritten, and an unknown id is ErrLinkNotFound. failGet makes Get fail.
type memLinks struct {
	mu      sync.Mutex
	links   map[string]Link
	failGet bool
}

func newMemLinks() *memLinks { return &memLinks{links: map[string]Link{}} }

func (m *memLinks) Put(_ context.Context, l Link) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	sum := sha256.Sum256(l.State)
	id := hex.EncodeToString(sum[:8])
	if _, ok := m.links[id]; !ok {
		m.links[id] = l
	}
	return id, nil
}

func (m *memLinks) Get(_ context.Context, id string) (Link, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.failGet {
		return Link{}, errors.New("the database is down")
	}
	l, ok := m.links[id]
	if !ok {
		return Link{}, ErrLinkNotFound
	}
	return l, nil
}

func share(t *testing.T, h http.Handler, manifest string, steps string) string {
	t.Helper()
	r := do(t, h, shareRequest(url.Values{"manifest": {manifest}, "steps": {steps}}))
	if r.status != http.StatusSeeOther || !strings.HasPrefix(r.header.Get("Location"), "/s/") {
		t.Fatalf("share: %d %q", r.status, r.header.Get("Location"))
	}
	return r.header.Get("Location")
}

func TestShareAndShortLinks(t *testing.T) {
	links := newMemLinks()
	h := serverWith(t, links)
	steps := `[{"key":"sidecar.istio.io/proxyCPU","value":"200m"}]`
	a := share(t, h, testkit.Deployment, steps)
	if b := share(t, h, testkit.Deployment, steps); b != a {
		t.Fatalf("same state, ids %s and %s", a, b)
	}
	if c := share(t, h, testkit.Deployment, `[{"key":"sidecar.istio.io/proxyCPU","value":"300m"}]`); c == a {
		t.Fatal("different states, same id")
	}
	r := get(t, h, a)
	if r.status != http.StatusOK || !contains(changes(r), "changed spec.template.spec.containers[istio-proxy].resources.requests.cpu") {
		t.Fatalf("short link: %d %v", r.status, changes(r))
	}
	if got := testid(r, "short-link").AttrOr("href", ""); got != a {
		t.Fatalf("short link shown as %q", got)
	}
	// The same result as the long permalink of the same state.
	long := get(t, h, stateLink(t, api.State{Istio: engine.Version().Istio, Manifest: testkit.Deployment, Steps: []input.Step{{Key: "sidecar.istio.io/proxyCPU", Value: "200m"}}}))
	x, _ := testid(r, "results").Html()
	y, _ := testid(long, "results").Html()
	if x != y {
		t.Fatal("the short link renders differently from the permalink")
	}
	// Another server on the same store (a restart, a second replica) has it, and its raw outputs.
	h2 := serverWith(t, links)
	if r := get(t, h2, a); r.status != http.StatusOK || testid(r, "diff-step-1").Length() != 1 {
		t.Fatalf("from a second server: %d", r.status)
	}
	if r := get(t, h2, a+"/injected.yaml"); r.status != http.StatusOK || !strings.Contains(r.body, "cpu: 200m") {
		t.Fatalf("raw output of a short link: %d", r.status)
	}
	// Hostile ids are 404s.
	for _, bad := range []string{"/s/..%2F..%2Fetc%2Fpasswd", "/s/1'%20OR%20'1'='1", "/s/" + strings.Repeat("a", 10240), "/s/0000000000000000", "/s/"} {
		if r := get(t, h, bad); r.status != http.StatusNotFound {
			t.Errorf("%s: %d", bad[:min(40, len(bad))], r.status)
		}
	}
	// Unknown ids on the raw outputs are 404s too.
	if r := get(t, h, "/s/0000000000000000/state.json"); r.status != http.StatusNotFound {
		t.Errorf("raw output of an unknown link: %d", r.status)
	}
	// A failing store is a 503 that says so, with Retry-After (never the store's own message,
	// never the generic 500), and is counted.
	links.failGet = true
	for _, target := range []string{a, a + "/state.json"} {
		if r := get(t, h, target); r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" ||
			!strings.Contains(r.body, "link store does not answer") || strings.Contains(r.body, "database") {
			t.Errorf("%s with a failing store: %d %v", target, r.status, r.header)
		}
	}
	if r := get(t, h, "/metrics"); !strings.Contains(r.body, "sidecarlab_store_errors_total 2") {
		t.Error("store errors are not counted")
	}
	links.failGet = false
	// Without a store, sharing is off, and says so.
	if r := do(t, newServer(t), shareRequest(url.Values{"manifest": {testkit.Deployment}})); r.status != http.StatusNotFound {
		t.Fatalf("share without a store: %d", r.status)
	}
	if r := get(t, newServer(t), a+"/state.json"); r.status != http.StatusNotFound {
		t.Fatalf("a raw output without a store: %d", r.status)
	}
}

func shareRequest(form url.Values) *http.Request {
	req, _ := http.NewRequest(http.MethodPost, "/share", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return req
}

// TestShortLinkFromAnotherIstio: a link stored under another Istio shows the banner, and says
// whether the output changed.
func TestShortLinkFromAnotherIstio(t *testing.T) {
	links := newMemLinks()
	h := serverWith(t, links)
	st := api.State{Version: permalink.Version, Istio: "1.29", Manifest: testkit.Deployment}
	tl, err := eng.Timeline(context.Background(), []byte(testkit.Deployment), nil, engine.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	same, err := links.Put(context.Background(), Link{State: permalink.JSON(st), Istio: "1.29", OutputHash: outputHash(tl)})
	if err != nil {
		t.Fatal(err)
	}
	st.Manifest = strings.Replace(testkit.Deployment, "name: web", "name: web2", 1)
	changed, err := links.Put(context.Background(), Link{State: permalink.JSON(st), Istio: "1.29", OutputHash: "not-the-output-of-today"})
	if err != nil {
		t.Fatal(err)
	}
	r := get(t, h, "/s/"+same)
	if b := testid(r, "banner").Text(); !strings.Contains(b, "made with Istio 1.29") || !strings.Contains(b, "the output is the same") {
		t.Fatalf("banner %q", b)
	}
	r = get(t, h, "/s/"+changed)
	if b := testid(r, "banner").Text(); !strings.Contains(b, "the output differs") {
		t.Fatalf("banner %q", b)
	}
}

func TestPresenterEmbedAndDeepLinks(t *testing.T) {
	h := newServer(t)
	st := api.State{Manifest: testkit.Deployment, Steps: []input.Step{{Key: "sidecar.istio.io/proxyCPU", Value: "200m"}, {Key: "proxy.istio.io/config", Value: "holdApplicationUntilProxyStarts: true"}}}
	page := get(t, h, stateLink(t, st))
	present := get(t, h, testid(page, "present").AttrOr("href", ""))
	// Presenter mode opens at step 1 (the first annotation), not the manifest's step 0, which
	// stays one slide back; after the last step comes the lifecycle slide.
	if !present.doc.Find("main").HasClass("present") || testid(present, "slide-n").Text() != "step 1 of 2" || testid(present, "diff-step-1").Length() != 1 {
		t.Fatalf("presenter mode opens at %q", testid(present, "slide-n").Text())
	}
	if prev := get(t, h, testid(present, "slide-prev").AttrOr("href", "")); testid(prev, "slide-n").Text() != "step 0 of 2" || testid(prev, "slide-prev").Length() != 0 {
		t.Fatalf("the slide before step 1 is %q", testid(prev, "slide-n").Text())
	}
	next := get(t, h, testid(present, "slide-next").AttrOr("href", ""))
	if testid(next, "slide-n").Text() != "step 2 of 2" || testid(next, "diff-step-2").Length() != 1 || testid(next, "diff-step-1").Length() != 0 {
		t.Fatal("the next slide is not step 2 alone")
	}
	life := get(t, h, testid(next, "slide-next").AttrOr("href", ""))
	if testid(life, "slide-n").Text() != "lifecycle after step 2" || life.doc.Find(`[data-testid="panel-lifecycle"]:not([hidden]) [data-testid="lifecycle"]`).Length() == 0 || testid(life, "slide-next").Length() != 0 {
		t.Fatalf("the slide after the last step is %q, not the lifecycle", testid(life, "slide-n").Text())
	}
	if back := get(t, h, testid(life, "slide-prev").AttrOr("href", "")); testid(back, "slide-n").Text() != "step 2 of 2" {
		t.Fatal("← from the lifecycle slide does not go back to the last step")
	}
	noSteps := get(t, h, testid(get(t, h, stateLink(t, api.State{Manifest: testkit.Deployment})), "present").AttrOr("href", ""))
	// Without steps, the workload as injected is the slide (step 0's changes), then its lifecycle.
	if testid(noSteps, "slide-n").Text() != "the workload as injected (step 0)" || testid(noSteps, "diff-step-0").Find(`[data-testid="change"]`).Length() == 0 ||
		testid(noSteps, "slide-prev").Length() != 0 {
		t.Fatalf("presenter mode without steps: %q", testid(noSteps, "slides").Text())
	}
	if life := get(t, h, testid(noSteps, "slide-next").AttrOr("href", "")); testid(life, "slide-n").Text() != "lifecycle after step 0" {
		t.Fatalf("without steps, the slide after the workload is %q", testid(life, "slide-n").Text())
	}
	// Deep links: one per change row, naming its step and its path.
	var found bool
	testid(page, "change").Each(func(_ int, s *goquery.Selection) {
		a := s.Find(`[data-testid="deep-link"]`).AttrOr("href", "")
		step := strings.TrimPrefix(s.ParentsFiltered("details.step").AttrOr("data-testid", ""), "diff-step-")
		if a != "#step="+step+"&path="+url.PathEscape(s.AttrOr("data-path", "")) {
			t.Errorf("row %s of step %s links %q", s.AttrOr("data-path", ""), step, a)
		}
		found = true
	})
	if !found {
		t.Fatal("no change rows")
	}
	// Only /embed may be framed.
	if page.header.Get("X-Frame-Options") != "DENY" || !strings.HasSuffix(page.header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
		t.Fatalf("the playground may be framed: %v", page.header)
	}
	embed := get(t, h, testid(page, "embed").AttrOr("href", ""))
	if embed.status != http.StatusOK || embed.header.Get("X-Frame-Options") != "" || !strings.HasSuffix(embed.header.Get("Content-Security-Policy"), "frame-ancestors * file:") {
		t.Fatalf("embed: %d %v", embed.status, embed.header)
	}
	if testid(embed, "embed-page").Length() != 1 || testid(embed, "diff-step-2").Length() != 1 || embed.doc.Find("form").Length() != 0 || embed.doc.Find(`input[form="why-form"]`).Length() != 0 {
		t.Fatal("the embed view is not the read-only diff")
	}
}
