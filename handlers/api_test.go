package handlers

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/diff"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
	"github.com/sidecarlab/sidecarlab/permalink"
	"github.com/sidecarlab/sidecarlab/wording"
)

// apiAnswer is the API's answer as a client decodes it.
type apiAnswer struct {
	Istio     engine.VersionInfo `json:"istio"`
	Permalink string             `json:"permalink"`
	Output    *string            `json:"output"`
	Timeline  *struct {
		Steps []struct {
			Index   int           `json:"index"`
			Changes []diff.Change `json:"changes"`
			Unified string        `json:"unified"`
		} `json:"steps"`
	} `json:"timeline"`
	Changes    []diff.Change       `json:"changes"`
	Unified    *string             `json:"unified"`
	Findings   []wording.Finding   `json:"findings"`
	Lifecycles []wording.Lifecycle `json:"lifecycles"`
	Batch      []engine.BatchRow   `json:"batch"`
}

func postAPI(t *testing.T, h http.Handler, query string, req api.InjectRequest) (int, string, map[string]json.RawMessage) {
	t.Helper()
	body, _ := json.Marshal(req)
	r := httptest.NewRequest(http.MethodPost, "/api/v1/inject"+query, strings.NewReader(string(body)))
	r.Header.Set("Content-Type", "application/json")
	res := do(t, h, r)
	var top map[string]json.RawMessage
	if res.status == http.StatusOK {
		if err := json.Unmarshal([]byte(res.body), &top); err != nil {
			t.Fatal(err)
		}
	}
	return res.status, res.body, top
}

// TestAPIInclude: ?include= names the parts of the answer; without it the whole answer as
// before; the last step's own changes and unified diff on their own are a small answer.
func TestAPIInclude(t *testing.T) {
	h := newServer(t)
	req := api.InjectRequest{Manifest: testkit.Deployment, Steps: []input.Step{{Key: "sidecar.istio.io/proxyCPU", Value: "250m"}}}

	status, body, top := postAPI(t, h, "", req)
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, body)
	}
	for _, k := range []string{"istio", "permalink", "output", "timeline", "findings", "lifecycles", "batch", "admission"} {
		if _, ok := top[k]; !ok {
			t.Errorf("the default answer lacks %q", k)
		}
	}
	for _, k := range []string{"changes", "unified"} {
		if _, ok := top[k]; ok {
			t.Errorf("the default answer has %q, which only ?include= asks for", k)
		}
	}
	var full apiAnswer
	if err := json.Unmarshal([]byte(body), &full); err != nil {
		t.Fatal(err)
	}
	if len(full.Timeline.Steps) != 2 || full.Timeline.Steps[1].Unified == "" || len(full.Timeline.Steps[1].Changes) == 0 {
		t.Fatalf("the timeline lacks its rows' changes or unified diffs: %+v", full.Timeline)
	}

	status, body, top = postAPI(t, h, "?include=output,changes", req)
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, body)
	}
	for k := range top {
		if k != "istio" && k != "permalink" && k != "output" && k != "changes" {
			t.Errorf("?include=output,changes answered %q too", k)
		}
	}
	var part apiAnswer
	if err := json.Unmarshal([]byte(body), &part); err != nil {
		t.Fatal(err)
	}
	if part.Output == nil || *part.Output != *full.Output {
		t.Error("the output differs from the full answer's")
	}
	want, _ := json.Marshal(full.Timeline.Steps[1].Changes)
	if got, _ := json.Marshal(part.Changes); string(got) != string(want) {
		t.Errorf("changes are not the last step's:\n got %s\nwant %s", got, want)
	}
	// The goal for one step of a Deployment: at most 25 KB.
	if len(body) > 25<<10 {
		t.Errorf("?include=output,changes is %d bytes; the goal is ≤ 25 KB", len(body))
	}

	// A step's unified diff alone; an empty list when asked and empty, not absent.
	status, body, top = postAPI(t, h, "?include=unified&include=findings", req)
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, body)
	}
	if err := json.Unmarshal([]byte(body), &part); err != nil {
		t.Fatal(err)
	}
	if part.Unified == nil || *part.Unified != full.Timeline.Steps[1].Unified {
		t.Error("unified is not the last step's line diff")
	}
	if string(top["findings"]) == "[]" || top["findings"] == nil {
		t.Errorf("findings asked for: want proxyCPU's dropped defaults, got %s", top["findings"])
	}
	// Asked for and none found: an empty list, not absent.
	if _, _, top := postAPI(t, h, "?include=findings", api.InjectRequest{Manifest: testkit.Deployment}); string(top["findings"]) != "[]" {
		t.Errorf("findings asked for and none found: want [], got %s", top["findings"])
	}
	if _, ok := top["output"]; ok {
		t.Error("output answered though not asked for")
	}

	status, body, _ = postAPI(t, h, "?include=output,bogus", req)
	if status != http.StatusBadRequest || !strings.Contains(body, "bogus") || !strings.Contains(body, "lifecycles") {
		t.Fatalf("an unknown part: want 400 naming it and the known ones, got %d %s", status, body)
	}
}

// TestAPIAdmission: the answer's admission object per document, from the settings' namespace.
func TestAPIAdmission(t *testing.T) {
	h := newServer(t)
	req := api.InjectRequest{Manifest: testkit.Deployment, Settings: engine.Settings{Namespace: engine.Namespace{Name: "shop",
		Labels: map[string]string{"istio-injection": "enabled", "pod-security.kubernetes.io/enforce": "baseline"}}}}
	status, body, _ := postAPI(t, h, "?include=admission", req)
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, body)
	}
	var resp struct {
		Admission []wording.Admission `json:"admission"`
	}
	if err := json.Unmarshal([]byte(body), &resp); err != nil {
		t.Fatal(err)
	}
	if len(resp.Admission) != 1 {
		t.Fatalf("%d admissions", len(resp.Admission))
	}
	a := resp.Admission[0]
	if !a.Injected || a.Admitted || a.Namespace != "shop" || !strings.HasPrefix(a.Pod, "web-") {
		t.Fatalf("baseline namespace labelled for injection: %+v", a)
	}
	if len(a.Violations) != 1 || !strings.Contains(a.Violations[0], "NET_ADMIN") || len(a.InjectReasons) == 0 {
		t.Fatalf("violations %q, reasons %q", a.Violations, a.InjectReasons)
	}
	// The same workload in a namespace without the label: not injected, and the reasons say why.
	req.Settings.Namespace.Labels = nil
	_, body, _ = postAPI(t, h, "?include=admission", req)
	if err := json.Unmarshal([]byte(body), &resp); err != nil {
		t.Fatal(err)
	}
	a = resp.Admission[0]
	if a.Injected || !a.Admitted || !strings.Contains(strings.Join(a.InjectReasons, " "), "istio-injection in (enabled)") {
		t.Fatalf("unlabelled namespace: %+v", a)
	}
}

// TestEncodeStateWithPooledWriters: a state encodes to the same text whatever was encoded before
// with the same (pooled) writer, and concurrently.
func TestEncodeStateWithPooledWriters(t *testing.T) {
	a := api.State{Manifest: testkit.Deployment}
	b := api.State{Manifest: strings.Repeat("# a long comment\n", 500) + testkit.Deployment, Steps: []input.Step{{Key: "sidecar.istio.io/proxyCPU", Value: "1"}}}
	first := permalink.Encode(a)
	_ = permalink.Encode(b)
	if again := permalink.Encode(a); again != first {
		t.Fatal("the same state encoded differently after another")
	}
	if got, err := decodeState(first); err != nil || got.Manifest != a.Manifest {
		t.Fatalf("round trip: %v", err)
	}
	done := make(chan string, 16)
	for i := range 16 {
		go func() {
			if i%2 == 0 {
				done <- permalink.Encode(a)
			} else {
				_ = permalink.Encode(b)
				done <- first
			}
		}()
	}
	for range 16 {
		if got := <-done; got != first {
			t.Fatal("a concurrent encoding differs")
		}
	}
}

// TestAPIProvenance: include=provenance answers where each field of the last step's output came
// from, as the CLI's explain writes it, in webhook mode too; without it the answer has none.
func TestAPIProvenance(t *testing.T) {
	h := newServer(t)
	req := api.InjectRequest{Manifest: testkit.Deployment, Steps: []input.Step{{Key: "sidecar.istio.io/proxyCPU", Value: "250m"}}}
	status, body, top := postAPI(t, h, "?include=provenance", req)
	if status != http.StatusOK {
		t.Fatalf("%d %s", status, body)
	}
	var prs []engine.Provenance
	if err := json.Unmarshal(top["provenance"], &prs); err != nil || len(prs) < 100 {
		t.Fatalf("%v, %d fields", err, len(prs))
	}
	found := false
	for _, p := range prs {
		if p.Path == "spec.template.spec.containers[istio-proxy].resources.requests.cpu" {
			found = p.Source == "template" && p.Template == "sidecar" && p.Define == "resources" &&
				slices.Contains(p.Inputs, engine.ProvenanceInput{Kind: "annotation", Name: "sidecar.istio.io/proxyCPU", Value: "250m"})
		}
	}
	if !found {
		t.Error("the proxy's CPU request is not attributed to the resources template reading the annotation")
	}
	if _, _, top := postAPI(t, h, "", req); top["provenance"] != nil {
		t.Error("provenance without include=provenance")
	}
	req.Settings = engine.Settings{Mode: engine.ModeWebhook, KubernetesVersion: "1.34"}
	status, body, top = postAPI(t, h, "?include=provenance", req)
	var webhook []engine.Provenance
	if status != http.StatusOK || json.Unmarshal(top["provenance"], &webhook) != nil || len(webhook) < 100 {
		t.Errorf("webhook mode: %d %.300s", status, body)
	}
}
