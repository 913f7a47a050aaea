package handlers

import (
	"net/http"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

// TestPanelRunsLenientValues: the panel's typed controls offer only valid values, but a value
// typed or posted freely that Istio accepts runs (it used to be a 422) and the page shows what
// Istio did and the finding that says so; a value Istio refuses is still a 422 with Istio's words.
func TestPanelRunsLenientValues(t *testing.T) {
	h := newServer(t)
	const p = "spec.template.spec."
	cases := []struct {
		key, value, finding, change string
	}{
		{"sidecar.istio.io/nativeSidecar", "TRUE", "lenient-native-sidecar", "added " + p + "initContainers[istio-proxy].restartPolicy"},
		{"sidecar.istio.io/nativeSidecar", "False", "lenient-native-sidecar", "added " + p + "initContainers[istio-proxy].restartPolicy"},
		{"traffic.sidecar.istio.io/excludeOutboundPorts", "0", "lenient-port-zero", "added " + p + "initContainers[istio-init].args[-o]"},
		{"sidecar.istio.io/logLevel", "loud", "lenient-unchecked", "changed " + p + "containers[istio-proxy].args[4]"},
	}
	for _, c := range cases {
		t.Run(c.key+"="+c.value, func(t *testing.T) {
			_, r := addStep(t, h, testkit.Deployment, nil, c.key, c.value)
			if r.status != http.StatusOK {
				t.Fatalf("status %d", r.status)
			}
			if f := testid(r, "finding-"+c.finding); f.Length() != 1 || !strings.Contains(f.Text(), c.value) {
				t.Fatalf("finding-%s: %q", c.finding, f.Text())
			}
			if !contains(changes(r), c.change) {
				t.Fatalf("missing %q in %v", c.change, changes(r))
			}
		})
	}
	// inject=no changes nothing (the pod is injected either way), and says so.
	_, r := addStep(t, h, testkit.Deployment, nil, "sidecar.istio.io/inject", "no")
	if f := testid(r, "finding-inject-value"); r.status != http.StatusOK || !strings.Contains(f.Text(), "IS injected") {
		t.Fatalf("status %d, finding %q", r.status, f.Text())
	}
	// The typed control still guides: a bool is a choice of true or false.
	page := get(t, h, "/")
	if opts := page.doc.Find(`select[name="v:sidecar.istio.io/nativeSidecar"] option`); opts.Length() != 2 || opts.Text() != "truefalse" {
		t.Fatalf("the nativeSidecar control offers %q", opts.Text())
	}
	// What Istio refuses is still refused, in Istio's words.
	r = get(t, h, stateLink(t, api.State{Manifest: testkit.Deployment, Steps: []input.Step{{Key: "traffic.sidecar.istio.io/includeOutboundIPRanges", Value: "10.0.0.0"}}}))
	if msg := testid(r, "error").Text(); r.status != http.StatusUnprocessableEntity || !strings.Contains(msg, "invalid value '10.0.0.0' for annotation 'traffic.sidecar.istio.io/includeOutboundIPRanges'") {
		t.Fatalf("status %d, error %q", r.status, msg)
	}
}

// TestUnifiedTabShowsAFailedDocument: a step at which Istio rejects the document is shown as
// failed in the unified diff (its note, with Istio's message), not as its lines deleted.
func TestUnifiedTabShowsAFailedDocument(t *testing.T) {
	h := newServer(t)
	steps := []input.Step{{Key: "sidecar.istio.io/proxyCPU", Value: "200m"}, {Key: "sidecar.istio.io/userVolume", Value: `{"v":`}}
	r := get(t, h, stateLink(t, api.State{Manifest: testkit.Deployment, Steps: steps})+"&tab=unified&step=2")
	panel := testid(r, "panel-unified")
	// The page of a state whose document fails answers 422, with the results.
	if r.status != http.StatusUnprocessableEntity || panel.Length() != 1 {
		t.Fatalf("status %d, %d unified panels", r.status, panel.Length())
	}
	note := panel.Find(`[data-testid="doc-note"][data-status="error"]`)
	if note.Length() != 1 || !strings.Contains(note.Text(), "Injection failed for document 1") || !strings.Contains(note.Text(), "userVolume") {
		t.Fatalf("no failed note in the unified tab: %q", panel.Text())
	}
	if n := panel.Find(".l-del").Length(); n != 0 || strings.Contains(panel.Text(), "No line changed") {
		t.Fatalf("the failed document reads as %d deleted lines, or as unchanged: %q", n, panel.Text())
	}
}
