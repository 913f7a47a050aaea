package handlers

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
	"github.com/sidecarlab/sidecarlab/permalink"
)

// cpuSteps are n steps that each set the proxy's CPU request to another value.
func cpuSteps(n int) []input.Step {
	steps := make([]input.Step, n)
	for i := range steps {
		steps[i] = input.Step{Key: "sidecar.istio.io/proxyCPU", Value: fmt.Sprintf("%dm", 100+i)}
	}
	return steps
}

// holdingEngine is the real engine, except that a manifest holding "# hold" waits in Timeline
// until released, as a long injection does.
type holdingEngine struct {
	Engine
	started, release chan struct{}
}

func (h holdingEngine) Timeline(ctx context.Context, m []byte, st []input.Step, s engine.Settings) (*engine.Timeline, error) {
	if bytes.Contains(m, []byte("# hold")) {
		h.started <- struct{}{}
		<-h.release
	}
	return h.Engine.Timeline(ctx, m, st, s)
}

// TestHeavyLane: a request whose estimate is heavy runs in its own lane, so light requests are
// answered while it runs; a second heavy one waits for the heavy lane, not for the light slots;
// what cannot run at all (too deep, too costly) is refused at once with a 422, busy or not.
func TestHeavyLane(t *testing.T) {
	newServer(t)
	he := holdingEngine{Engine: eng, started: make(chan struct{}, 1), release: make(chan struct{})}
	// Heavy from 20 units (the default is 200): the heavy requests below are a tenth of what the
	// issue sent, and as heavy for this server.
	h := New(testLogger(), func() Engine { return he }, testConfig(Config{MaxConcurrent: 1, QueueWait: 50 * time.Millisecond, HeavyUnits: 20}))
	done := make(chan response)
	go func() { done <- get(t, h, stateLink(t, api.State{Manifest: testkit.Pods(30, 0) + "\n# hold\n"})) }()
	<-he.started // the heavy lane's one slot is taken

	if r := get(t, h, stateLink(t, api.State{Manifest: testkit.Deployment})); r.status != http.StatusOK {
		t.Fatalf("a light request beside a heavy one: %d, want 200", r.status)
	}
	// 10 Pods through 100 steps (a 6.4 KB POST in the issue) is heavy: it waits for the heavy
	// lane and gets 503 with Retry-After.
	if status, body, _ := postAPI(t, h, "", api.InjectRequest{Manifest: testkit.Pods(10, 0), Steps: cpuSteps(100)}); status != http.StatusServiceUnavailable {
		t.Fatalf("a second heavy request: %d, want 503: %.300s", status, body)
	}
	// 1,000 Pods (under the unit limit; 2,000, a 7.5 KB link in the issue, are over it) too.
	if r := get(t, h, stateLink(t, api.State{Manifest: testkit.Pods(1000, 0)})); r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" {
		t.Fatalf("1,000 Pods beside a heavy request: %d %v, want 503 with Retry-After", r.status, r.header)
	}
	close(he.release)
	if first := <-done; first.status != http.StatusOK {
		t.Fatalf("the heavy request: %d", first.status)
	}
	if r := get(t, h, stateLink(t, api.State{Manifest: testkit.Pods(25, 0) + "\n# another\n"})); r.status != http.StatusOK {
		t.Fatalf("a heavy request with the lane free: %d", r.status)
	}
}

// TestWorkLimits: what is deeper or costlier than the server's bounds is refused before any of
// it runs, with a 422 that names the limit (and, for a deep value, the document and line) on
// the page and in the API; what is within them runs.
func TestWorkLimits(t *testing.T) {
	h := newServer(t)
	deep := testkit.Pods(45, 9000)
	for _, c := range []struct {
		name   string
		state  api.State
		status int
		words  string
	}{
		{"45 Pods nested 9,000 deep", api.State{Manifest: deep}, http.StatusUnprocessableEntity, "nest up to 9002 levels deep; at most 100"},
		{"one Pod nested 100 deep", api.State{Manifest: testkit.Pods(1, 98)}, http.StatusOK, ""},
		{"2,000 Pods through 2 steps", api.State{Manifest: testkit.Pods(2000, 0), Steps: cpuSteps(2)}, http.StatusUnprocessableEntity, "6000 units of work; at most 1500 fit in one request: split the manifest into parts of about 500 documents"},
		// Issue 40: a List of 5,000 aliases is 1–2 units by its bytes, 5,000 objects as read.
		{"a List of 5,000 aliases", api.State{Manifest: testkit.AliasList(5000)}, http.StatusUnprocessableEntity, "4999 List items are an alias (*name) of another item"},
		{"a List of 2,000 items written out", api.State{Manifest: testkit.PodList(2000)}, http.StatusUnprocessableEntity, "2000 objects (a List's items each count) through 1 rows of the timeline"},
		{"a List of 200 items written out", api.State{Manifest: testkit.PodList(200)}, http.StatusOK, ""},
		{"10 Pods through 100 steps", api.State{Manifest: testkit.Pods(10, 0), Steps: cpuSteps(100)}, http.StatusOK, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := get(t, h, stateLink(t, c.state))
			if r.status != c.status {
				t.Fatalf("page: %d, want %d: %.300s", r.status, c.status, r.body)
			}
			if c.words != "" && !strings.Contains(r.doc.Text(), c.words) {
				t.Fatalf("the page does not say %q: %.500s", c.words, r.doc.Find(`[data-testid="error-message"]`).Text())
			}
			status, body, _ := postAPI(t, h, "?include=changes", api.InjectRequest{Manifest: c.state.Manifest, Steps: c.state.Steps})
			if status != c.status || (c.words != "" && !strings.Contains(body, c.words)) {
				t.Fatalf("API: %d, want %d saying %q: %.300s", status, c.status, c.words, body)
			}
		})
	}
	// The deep document is named with its line.
	if status, body, _ := postAPI(t, h, "", api.InjectRequest{Manifest: testkit.Pods(2, 0) + "\n---\n" + deep}); status != http.StatusUnprocessableEntity ||
		!strings.Contains(body, `"doc": 3,`) || !strings.Contains(body, `"line": 20,`) {
		t.Fatalf("the deep document's place: %d %.400s", status, body)
	}
}

// TestUnitLimitFollowsTimeout: the unit limit is what finishes within the server's request
// timeout, unless set; the aliases' bound is what a POST may carry.
func TestUnitLimitFollowsTimeout(t *testing.T) {
	d := Config{}.withDefaults()
	if d.Work.MaxUnits != Defaults().Work.MaxUnits || d.Work.MaxUnits != int64(d.RequestTimeout/unitTime) || d.Work.MaxBytes != d.MaxBodyBytes || !d.Work.WrittenOut {
		t.Fatalf("defaults: %+v", d.Work)
	}
	if long := (Config{RequestTimeout: 60 * time.Second}).withDefaults(); long.Work.MaxUnits != 4*d.Work.MaxUnits {
		t.Fatalf("a 60 s timeout admits %d units, want four times the 15 s default's %d", long.Work.MaxUnits, d.Work.MaxUnits)
	}
	if set := (Config{RequestTimeout: 60 * time.Second, Work: engine.Limits{MaxUnits: 7}, MaxBodyBytes: 5 << 20}).withDefaults(); set.Work.MaxUnits != 7 || set.Work.MaxBytes != 5<<20 {
		t.Fatalf("set limits: %+v", set.Work)
	}
}

// TestTemplatesRunHeavy: a request whose own templates run in a worker is heavy whatever its
// size (their cost is not known before they run): issue 21's looping templates, several at
// once, wait for the heavy lane while light requests are answered beside them.
func TestTemplatesRunHeavy(t *testing.T) {
	isolatedServer(t) // the shared engine with its sandbox
	h := New(testLogger(), func() Engine { return isoEng }, testConfig(Config{MaxConcurrent: 1, QueueWait: 50 * time.Millisecond}))
	const loop = `{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}`
	o := engine.InstallOptions{Overlay: withTemplate(loop)}
	// The installation is rendered first (a request that does not select the template).
	if r := get(t, h, "/injected.yaml?s="+permalink.Encode(api.State{Manifest: testkit.Deployment, Settings: engine.Settings{Install: o}})); r.status != http.StatusOK {
		t.Fatalf("rendering the installation: %d %.500s", r.status, r.body)
	}
	loopers := make(chan response, 3)
	for range 3 {
		go func() {
			st := api.State{Manifest: testkit.Deployment, Steps: selectMine, Settings: engine.Settings{Install: o}}
			loopers <- do(t, h, withDeadline(t, httptest.NewRequest(http.MethodGet, "/injected.yaml?s="+permalink.Encode(st), nil), 20*time.Second))
		}()
	}
	testkit.WaitFor(t, "a looping template holding a work slot", func() bool {
		m := get(t, h, "/metrics").body
		return strings.Contains(m, `sidecarlab_work_slots_busy{lane="heavy"} 1`) || strings.Contains(m, `sidecarlab_work_slots_busy{lane="light"} 1`)
	})
	if r := get(t, h, stateLink(t, api.State{Manifest: testkit.Deployment})); r.status != http.StatusOK {
		t.Fatalf("a light request beside looping templates: %d, want 200", r.status)
	}
	for range 3 {
		if r := <-loopers; r.status != http.StatusServiceUnavailable && r.status != http.StatusUnprocessableEntity {
			t.Errorf("a looping template: %d, want 503 or 422 (the heavy lane busy, the deadline, or the worker's CPU limit)", r.status)
		}
	}
}
