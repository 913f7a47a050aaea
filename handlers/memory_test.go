package handlers

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

// TestNestingIsNotEchoed: an 18 KB API request (a Pod with an extra top-level field nesting
// 9,000 lists) got a 162 MB answer: the removed value was copied into the timeline's changes and
// indented. Now the change carries only its size, and the answer stays small, also for eight at
// once. (A server refuses such nesting by default, TestWorkLimits; this one is told to read it.)
func TestNestingIsNotEchoed(t *testing.T) {
	newServer(t)
	h := New(testLogger(), func() Engine { return eng }, testConfig(Config{Work: engine.Limits{MaxDepth: 10000}}))
	pod := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: nest\nspec:\n  containers:\n  - name: a\n    image: nginx\n"
	manifest := pod + "extra: " + strings.Repeat("[", 9000) + strings.Repeat("]", 9000) + "\n"
	body, _ := json.Marshal(api.InjectRequest{Manifest: manifest})
	if len(body) > 20<<10 {
		t.Fatalf("the request is %d bytes, want about 18 KB", len(body))
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := httptest.NewRequest(http.MethodPost, "/api/v1/inject", bytes.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != http.StatusOK {
				t.Errorf("status %d: %.300s", w.Code, w.Body.String())
				return
			}
			if n := w.Body.Len(); n > 256<<10 {
				t.Errorf("the answer is %d bytes for an %d-byte request", n, len(body))
			}
			if !strings.Contains(w.Body.String(), `"oldBytes"`) {
				t.Errorf("the removed field's change does not give its size")
			}
		}()
	}
	wg.Wait()
}

// TestLinkStateObeysTheBodyLimit: a link's state inflates up to 4 MiB, which sidestepped the
// 1 MiB limit on a POST; now a state obeys the same limit however it comes: 413, and a state
// within it still works.
func TestLinkStateObeysTheBodyLimit(t *testing.T) {
	h := newServer(t)
	big := api.State{Manifest: testkit.Deployment + "# " + strings.Repeat("x", 2<<20) + "\n"}
	for _, path := range []string{"/", "/injected.yaml", "/embed", "/diff.txt"} {
		r := get(t, h, strings.Replace(stateLink(t, big), "/?", path+"?", 1))
		if r.status != http.StatusRequestEntityTooLarge || !strings.Contains(r.body, "1 MiB") {
			t.Errorf("%s: status %d, want 413 naming the limit: %.200s", path, r.status, r.body)
		}
	}
	ok := api.State{Manifest: testkit.Deployment + "# " + strings.Repeat("x", 512<<10) + "\n"}
	if r := get(t, h, stateLink(t, ok)); r.status != http.StatusOK {
		t.Fatalf("a 512 KiB state: %d", r.status)
	}
}
