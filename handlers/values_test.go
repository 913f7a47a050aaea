package handlers

import (
	"net/http"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/PuerkitoBio/goquery"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

func changeRow(r response, path string) *goquery.Selection {
	return testid(r, "change").FilterFunction(func(_ int, s *goquery.Selection) bool { return s.AttrOr("data-path", "") == path })
}

// TestReadableValues: the field diff shows flags, YAML and quoted scalars, not escaped JSON.
func TestReadableValues(t *testing.T) {
	h := newServer(t)
	const p = "spec.template.spec."
	r := get(t, h, stateLink(t, api.State{Manifest: testkit.Deployment, Steps: []input.Step{
		{Key: "traffic.sidecar.istio.io/excludeOutboundPorts", Value: "3306,6379"},
		{Key: "proxy.istio.io/config", Value: "holdApplicationUntilProxyStarts: true\nconcurrency: 2"},
		{Key: "sidecar.istio.io/nativeSidecar", Value: "false"},
		{Key: "sidecar.istio.io/proxyCPU", Value: "200m"},
	}}))
	if r.status != http.StatusOK {
		t.Fatalf("status %d", r.status)
	}
	flag := changeRow(r, p+"initContainers[istio-init].args[-o]")
	if got := flag.Find(`[data-testid="value"]`).Text(); got != "-o 3306,6379" {
		t.Errorf("flag row shows %q", got)
	}
	if got := flag.Find(`[data-testid="flag-meaning"]`).Text(); !strings.Contains(got, "excludeOutboundPorts") {
		t.Errorf("flag meaning %q", got)
	}
	// Other rows carry no flag meaning.
	if n := testid(r, "flag-meaning").Length(); n != 1 {
		t.Errorf("%d flag meanings, want 1", n)
	}
	pc := changeRow(r, p+"containers[istio-proxy].env[PROXY_CONFIG].value")
	if got := pc.Find(`pre.new[data-testid="value-yaml"]`).Text(); got != "concurrency: 2\nholdApplicationUntilProxyStarts: true" {
		t.Errorf("PROXY_CONFIG shows %q", got)
	}
	if strings.Contains(pc.Text(), `\"`) {
		t.Errorf("PROXY_CONFIG row still escapes JSON: %q", pc.Text())
	}
	// The hold's postStart: YAML lines, not compact JSON.
	if got := changeRow(r, p+"containers[istio-proxy].lifecycle").Find(`[data-testid="value-yaml"]`).Text(); !strings.Contains(got, "- pilot-agent\n") {
		t.Errorf("lifecycle shows %q", got)
	}
	ann := `spec.template.metadata.annotations["sidecar.istio.io/nativeSidecar"]`
	if got := changeRow(r, ann).Find(`[data-testid="value"]`).Text(); got != `"false"` {
		t.Errorf("a bool-looking string shows %q", got)
	}
	if got := changeRow(r, p+"containers[istio-proxy].resources.requests.cpu").Find(`code.new`).Text(); got != "200m" {
		t.Errorf("a plain string shows %q", got)
	}
	// Row 0: the whole istio-proxy container, folded; the status annotation decoded.
	proxy := changeRow(r, p+"containers[istio-proxy]").First()
	if got := proxy.Find(`[data-testid="value-fold"] summary`).Text(); !strings.HasPrefix(got, "istio-proxy (") {
		t.Errorf("istio-proxy added shows %q", got)
	}
	status := changeRow(r, "spec.template.metadata.annotations").Find(`[data-testid="value-yaml"]`).Text()
	if !strings.Contains(status, "sidecar.istio.io/status:\n  containers:\n  - istio-proxy") {
		t.Errorf("status annotation shows %q", status)
	}
}

// TestSerializerGroup: row 0 puts what kube-inject's serializer writes apart, folded, so that
// injection's own changes stand out; later steps have no such group.
func TestSerializerGroup(t *testing.T) {
	h := newServer(t)
	r := get(t, h, stateLink(t, api.State{Manifest: testkit.Deployment, Steps: []input.Step{{Key: "sidecar.istio.io/proxyCPU", Value: "200m"}}}))
	s0 := testid(r, "diff-step-0")
	group := s0.Find(`[data-testid="serializer-changes"]`)
	if group.Length() != 1 || group.AttrOr("open", "none") != "none" {
		t.Fatalf("row 0: %d serializer groups (open=%q)", group.Length(), group.AttrOr("open", "none"))
	}
	var got []string
	group.Find(`[data-testid="change"]`).Each(func(_ int, s *goquery.Selection) { got = append(got, s.AttrOr("data-path", "")) })
	for _, want := range []string{"spec.strategy", "status", "spec.template.spec.containers[web].resources"} {
		if !contains(got, want) {
			t.Errorf("serializer group lacks %s: %v", want, got)
		}
	}
	if contains(got, "spec.template.spec.containers[istio-proxy]") {
		t.Error("istio-proxy listed as the serializer's")
	}
	if s0.Find(`table[data-testid=""] [data-path="status"]`).Length() != 0 {
		t.Error("status: {} also among injection's own changes")
	}
	if n := testid(r, "diff-step-1").Find(`[data-testid="serializer-changes"]`).Length(); n != 0 {
		t.Errorf("step 1 has %d serializer groups", n)
	}
}

// TestHonestStates: a rejected document says injection failed, with Istio's message, not "0
// changes"; a Service says Istio does not inject it; a skipped workload says why at step 0; an
// injected one has no note.
func TestHonestStates(t *testing.T) {
	h := newServer(t)
	rejected := strings.Replace(testkit.Deployment, "    metadata:\n      labels:", "    metadata:\n      annotations:\n        proxy.istio.io/config: \"concurrency: [2\"\n      labels:", 1)
	if rejected == testkit.Deployment {
		t.Fatal("the test manifest has no pod template labels to annotate")
	}
	service := "apiVersion: v1\nkind: Service\nmetadata:\n  name: db\nspec:\n  ports:\n  - port: 3306\n"
	skipped := strings.Replace(testkit.Deployment, "    metadata:\n      labels:", "    metadata:\n      annotations:\n        sidecar.istio.io/inject: \"false\"\n      labels:", 1)
	cases := []struct {
		name, manifest string
		status         string // data-status of the note, "" for none
		text, detail   string
		noChange       bool
	}{
		{"rejected", rejected, "error", "Injection failed for document 1.", "proxy", false},
		{"service", service, "passed through", "Istio does not inject a Service; it passes through unchanged (document 1).", "", false},
		{"skipped", skipped, "skipped", "Istio skipped document 1 (Deployment web): it injected nothing.", "inject", false},
		{"injected", testkit.Deployment, "", "", "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := get(t, h, stateLink(t, api.State{Manifest: c.manifest}))
			s0 := testid(r, "diff-step-0")
			if s0.Length() != 1 {
				t.Fatalf("no step 0 (status %d)", r.status)
			}
			note := s0.Find(`[data-testid="doc-note"]`)
			if c.status == "" {
				if note.Length() != 0 {
					t.Fatalf("note on an injected workload: %q", note.Text())
				}
				return
			}
			if note.AttrOr("data-status", "") != c.status || note.Find("strong").Text() != c.text || !strings.Contains(note.Find(".reason").Text(), c.detail) {
				t.Fatalf("note %q %q (status %q)", note.Find("strong").Text(), note.Find(".reason").Text(), note.AttrOr("data-status", ""))
			}
			if n := s0.Find(`[data-testid="no-change"]`).Length(); n != 0 {
				t.Error(`says "No field changed."`)
			}
			failed := s0.Find(`[data-testid="step-failed"]`).Length() == 1
			if failed != (c.status == "error") {
				t.Errorf("heading says injection failed: %v", failed)
			}
		})
	}
}
