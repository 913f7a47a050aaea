package handlers

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/go-cmp/cmp"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
	"github.com/sidecarlab/sidecarlab/web"
)

// TestShowValue: values read as YAML; strings that would read as another type are quoted, others
// are not; JSON in a string is decoded and says so; long values fold; sizes stay sizes.
func TestShowValue(t *testing.T) {
	long := map[string]any{"name": "istio-proxy"}
	for _, k := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		long[k] = k
	}
	cases := []struct {
		name    string
		v       any
		omitted int
		want    web.Value
	}{
		{"plain string", "200m", 0, web.Value{Text: "200m"}},
		{"a string that reads as a bool is quoted", "false", 0, web.Value{Text: `"false"`}},
		{"a string that reads as a number is quoted", "8080", 0, web.Value{Text: `"8080"`}},
		{"a number is not", float64(8080), 0, web.Value{Text: "8080"}},
		{"JSON in a string", "{\"concurrency\":2,\"terminationDrainDuration\":\"30s\"}\n", 0,
			web.Value{Text: "concurrency: 2\nterminationDrainDuration: 30s", Block: true, Lines: 2, Note: "JSON in a string, shown as YAML"}},
		{"empty JSON object in a string", "{}\n", 0, web.Value{Text: "{}", Note: "JSON in a string, shown as YAML"}},
		{"not JSON", "{not json", 0, web.Value{Text: "'{not json'"}},
		{"a map", map[string]any{"postStart": map[string]any{"exec": map[string]any{"command": []any{"pilot-agent", "wait"}}}}, 0,
			web.Value{Text: "postStart:\n  exec:\n    command:\n    - pilot-agent\n    - wait", Block: true, Lines: 5}},
		{"JSON nested in a map", map[string]any{"sidecar.istio.io/status": `{"containers":["istio-proxy"]}`}, 0,
			web.Value{Text: "sidecar.istio.io/status:\n  containers:\n  - istio-proxy", Block: true, Lines: 3, Note: "JSON in strings shown as YAML"}},
		{"a long map folds", long, 0, web.Value{Text: "a: a\nb: b\nc: c\nd: d\ne: e\nf: f\ng: g\nname: istio-proxy", Block: true, Fold: true, Lines: 8, Name: "istio-proxy"}},
		{"an empty map", map[string]any{}, 0, web.Value{Text: "{}"}},
		{"left out for size", nil, 20000, web.Value{Text: "(20000 bytes of JSON, too large or too deeply nested to show here: see the YAML)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if d := cmp.Diff(c.want, showValue(c.v, c.omitted)); d != "" {
				t.Fatalf("(-want +got)\n%s", d)
			}
		})
	}
	// Huge values are cut: a line at maxValue characters, a block at maxBlockLines lines.
	if got := showValue(strings.Repeat("x", 1000), 0).Text; !strings.HasSuffix(got, "… (600 more characters: see the injected YAML)") {
		t.Errorf("long line: %q", got[len(got)-60:])
	}
	many := make([]any, 500)
	for i := range many {
		many[i] = "v"
	}
	if got := showValue(many, 0).Text; strings.Count(got, "\n") != maxBlockLines || !strings.HasSuffix(got, "… (420 more lines: see the injected YAML)") {
		t.Errorf("long block ends %q", got[len(got)-60:])
	}
	// A long map (a whole container): its largest fields give way, not the ones after them.
	env := make([]any, 60)
	for i := range env {
		env[i] = map[string]any{"name": fmt.Sprintf("E%d", i), "value": "v"}
	}
	container := map[string]any{"args": []any{"proxy", "sidecar"}, "env": env, "image": "proxyv2", "name": "istio-proxy",
		"resources": map[string]any{"requests": map[string]any{"cpu": "100m"}}, "volumeMounts": env[:30]}
	got := showValue(container, 0).Text
	for _, want := range []string{"args:\n- proxy\n- sidecar\n", "env:\n  … (120 more lines: see the injected YAML)\n", "image: proxyv2\n", "resources:\n  requests:\n    cpu: 100m\n", "volumeMounts:\n- name: E0"} {
		if !strings.Contains(got, want) {
			t.Errorf("a long container: %q is not shown whole in\n%s", want, got)
		}
	}
	if n := strings.Count(got, "\n") + 1; n > maxBlockLines {
		t.Errorf("a long container is shown in %d lines, more than %d", n, maxBlockLines)
	}
	// One that fits is shown whole.
	container["env"] = env[:3]
	if got := showValue(container, 0).Text; strings.Contains(got, "more lines") || !strings.Contains(got, "name: E2") {
		t.Errorf("a container that fits is cut:\n%s", got)
	}
}

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
