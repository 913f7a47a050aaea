package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

// TestShutdownUnderLoad: issue 21's heavy requests in flight when the server is told to stop —
// 2,000 Pods, 10 Pods through 100 steps, 45 Pods nested 9,000 deep, and 2,000 Pods again, each
// sent once the shutdown began — are every one answered (by their answer, a 503 past the
// request's deadline, or a 422), none cut off: the work stops at the deadline, within the
// shutdown's grace (deadline + 5 s). Before, such work outlived the grace and the clients saw
// the connection closed without a response.
func TestShutdownUnderLoad(t *testing.T) {
	srv := startServe(t, "--db", filepath.Join(t.TempDir(), "links.db"), "--request-timeout", "2s")
	pods := func(n, depth int, salt string) string {
		docs := make([]string, n)
		for i := range docs {
			docs[i] = fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p%d\nspec:\n  containers:\n  - name: app\n    image: nginx\n", i)
			if depth > 0 {
				docs[i] += "extra: " + strings.Repeat("[", depth) + strings.Repeat("]", depth) + "\n"
			}
		}
		return strings.Join(docs, "---\n") + "# " + salt + "\n"
	}
	var steps []map[string]string
	for i := range 100 {
		steps = append(steps, map[string]string{"key": "sidecar.istio.io/proxyCPU", "value": fmt.Sprintf("%dm", 150+i)})
	}
	bodies := []any{
		map[string]any{"manifest": pods(2000, 0, "a")},
		map[string]any{"manifest": pods(10, 0, "b"), "steps": steps},
		map[string]any{"manifest": pods(45, 9000, "c")},
		map[string]any{"manifest": pods(2000, 0, "d")},
	}
	var held []*heldRequest
	for _, b := range bodies {
		js, _ := json.Marshal(b)
		held = append(held, holdRequest(t, srv.base+"/api/v1/inject", js))
	}
	srv.stop() // SIGTERM, as main's signal context does
	testkit.WaitFor(t, "serve shutting down", func() bool { return strings.Contains(srv.logs.String(), "shutting down") })
	results := make(chan heldResult, len(held))
	for _, h := range held {
		go func() { results <- h.send(t) }()
	}
	for range held {
		r := <-results
		if r.err != nil {
			t.Errorf("a request in flight at shutdown got no answer: %v", r.err)
			continue
		}
		switch r.status {
		case http.StatusOK, http.StatusServiceUnavailable, http.StatusUnprocessableEntity:
		default:
			t.Errorf("a request in flight at shutdown: status %d", r.status)
		}
	}
	srv.waitStopped(t)
}
