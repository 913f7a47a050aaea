package upgrade

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

var (
	sharedOnce sync.Once
	shared     *engine.Engine
	sharedErr  error
)

// testEngine is one engine for the package's tests, trusting every installation (a mesh's own templates).
func testEngine(t testing.TB) *engine.Engine {
	t.Helper()
	sharedOnce.Do(func() {
		shared, sharedErr = engine.New(context.Background(), engine.Options{InstallPolicy: engine.TrustedInstalls()})
	})
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return shared
}

// olderMesh is an "old" revisioned installation's ConfigMaps: today's render with non-default
// values (a proxy CPU request, a registry and tag of its own, hold in the mesh's defaultConfig)
// and the older Istio's template files in place of today's (a template the older chart does not
// have is left out, as its render would).
func olderMesh(t *testing.T, e *engine.Engine) engine.InstallOptions {
	t.Helper()
	in, err := e.Install(t.Context(), engine.InstallOptions{Set: []string{"revision=canary", "values.global.proxy.resources.requests.cpu=300m",
		"values.global.hub=registry.example.com/istio", "values.global.tag=1.31.0-alpha.1",
		"meshConfig.defaultConfig.holdApplicationUntilProxyStarts=true"}})
	if err != nil {
		t.Fatal(err)
	}
	return engine.InstallOptions{Mesh: engine.OwnMesh{InjectorConfig: testkit.WithOlderTemplates(t, in.InjectorConfig), Values: in.Values, MeshConfig: in.MeshConfigYAML}, Revision: "canary"}
}

// upgradeDeployment is a Deployment whose app label is app.
func upgradeDeployment(app string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels:
      app: %[1]q
  template:
    metadata:
      labels:
        app: %[1]q
    spec:
      containers:
      - name: web
        image: nginx
`, app)
}

// TestUpgradePreview: an older Istio's mesh (testkit.OlderIstio's real templates of April 2026's 1.31 snapshot, with
// a CPU request, an image of its own and hold) carried to the embedded Istio: the plan lists the
// CPU as carried and the registry and tag as not, and the two sides differ exactly where the
// templates do — the canonical-name label of an app whose name ends in "_" (trimSuffix "-" then,
// trimAll "-_." now) — and in the proxy image the new release sets; the CPU and the hold are the
// same on both sides.
func TestUpgradePreview(t *testing.T) {
	e := testEngine(t)
	old := olderMesh(t, e)
	up, err := NewPlan(t.Context(), e, old, nil)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, k := range up.Keys {
		keys = append(keys, fmt.Sprintf("%s=%v carried=%v", k.Path, k.Yours, k.Carried))
	}
	want := []string{"global.hub=registry.example.com/istio carried=false", "global.proxy.resources.requests.cpu=300m carried=true", "global.tag=1.31.0-alpha.1 carried=false"}
	if !slices.Equal(keys, want) || len(up.MeshUnknown) > 0 {
		t.Fatalf("keys %q, want %q; mesh unknown %v", keys, want, up.MeshUnknown)
	}
	if up.New.Revision != "canary" {
		t.Fatalf("new side's revision %q", up.New.Revision)
	}
	for _, c := range []struct {
		app  string
		want []string
	}{
		{"web_", []string{
			`spec.template.metadata.labels["service.istio.io/canonical-name"]`,
			"spec.template.spec.containers[istio-proxy].image",
			"spec.template.spec.initContainers[istio-init].image",
		}},
		{"web", []string{
			"spec.template.spec.containers[istio-proxy].image",
			"spec.template.spec.initContainers[istio-init].image",
		}},
	} {
		manifest := []byte(upgradeDeployment(c.app))
		before, err := e.Inject(t.Context(), manifest, nil, engine.Settings{Install: old})
		if err != nil {
			t.Fatal(err)
		}
		after, err := e.Inject(t.Context(), manifest, nil, engine.Settings{Install: up.New})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		changes, err := engine.DiffDocuments(t.Context(), before.Documents, after.Documents, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, ch := range changes {
			got = append(got, ch.Path)
		}
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("app %q: the upgrade changes %q, want %q\nold:\n%s\nnew:\n%s", c.app, got, c.want, before.Output(), after.Output())
		}
		for _, s := range []string{"cpu: 300m", "postStart:", "istio.io/rev: canary"} { // postStart: the hold
			if !strings.Contains(before.Output(), s) || !strings.Contains(after.Output(), s) {
				t.Errorf("app %q: %q is not on both sides", c.app, s)
			}
		}
	}
}

// TestPlanKeys: what is carried — every differing key the reader keeps, unknown keys and
// mesh fields listed and left out, a free-form map as one key, a message the defaults lack key by
// key, and of those the keys Istio's charts refuse as removed left behind — on a mesh of today's
// Istio with an older one's tracer settings (Istio 1.9–1.14's values have global.tracer, which
// failed every upgrade preview from them: "global.tracer.stackdriver.debug is removed").
func TestPlanKeys(t *testing.T) {
	e := testEngine(t)
	in, err := e.Install(t.Context(), engine.InstallOptions{Set: []string{"values.global.proxy.resources.requests.cpu=50m",
		"values.global.podDNSSearchNamespaces[0]=shop.svc", "values.sidecarInjectorWebhook.injectedAnnotations.team/owner=shop"}})
	if err != nil {
		t.Fatal(err)
	}
	var values map[string]any
	if err := json.Unmarshal([]byte(in.Values), &values); err != nil {
		t.Fatal(err)
	}
	values["global"].(map[string]any)["retiredKnob"] = true
	values["global"].(map[string]any)["tracer"] = map[string]any{"stackdriver": map[string]any{"debug": false}, "zipkin": map[string]any{"address": "zipkin.tracing:9411"}}
	// Istio ≤ 1.23's CNI switch, which today's Istio reads from components.cni.enabled, and a
	// setting the istiod chart passes on to nothing injection reads.
	values["istio_cni"] = map[string]any{"enabled": true, "chained": true}
	values["pilot"].(map[string]any)["autoscaleMin"] = 3
	v, _ := json.Marshal(values)
	old := engine.InstallOptions{Mesh: engine.OwnMesh{Values: string(v), MeshConfig: "defaultConfig:\n  holdApplicationUntilProxyStarts: true\n  retiredProxyField: 1\nretiredMeshField: x\n"}}
	up, err := NewPlan(t.Context(), e, old, func(path string) bool { return path != "global.podDNSSearchNamespaces" })
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, k := range up.Keys {
		keys = append(keys, fmt.Sprintf("%s carried=%v unknown=%v removed=%v noEffect=%v%s", k.Path, k.Carried, k.Unknown, k.Removed, k.NoEffect, strings.TrimSuffix(" to "+k.MovedTo, " to ")))
	}
	want := []string{
		"global.podDNSSearchNamespaces carried=false unknown=false removed=false noEffect=false",
		"global.proxy.resources.requests.cpu carried=true unknown=false removed=false noEffect=false",
		"global.retiredKnob carried=false unknown=true removed=false noEffect=false",
		"global.tracer.stackdriver.debug carried=false unknown=false removed=true noEffect=false",
		"global.tracer.zipkin.address carried=true unknown=false removed=false noEffect=false",
		"istio_cni.chained carried=false unknown=false removed=false noEffect=true",
		"istio_cni.enabled carried=true unknown=false removed=false noEffect=false to components.cni.enabled",
		"pilot.autoscaleMin carried=false unknown=false removed=false noEffect=true",
		"sidecarInjectorWebhook.injectedAnnotations carried=true unknown=false removed=false noEffect=false",
	}
	if !slices.Equal(keys, want) {
		t.Fatalf("keys:\n%s\nwant:\n%s", strings.Join(keys, "\n"), strings.Join(want, "\n"))
	}
	if !slices.Equal(up.MeshUnknown, []string{"defaultConfig.retiredProxyField", "retiredMeshField"}) {
		t.Fatalf("mesh unknown %q", up.MeshUnknown)
	}
	// The new side renders: the carried keys and the known mesh config, nothing unknown.
	newIn, err := e.Install(t.Context(), up.New)
	if err != nil {
		t.Fatalf("the new side: %v\n%s", err, up.New.Overlay)
	}
	for _, s := range []string{`"cpu": "50m"`, `"team/owner": "shop"`, `"address": "zipkin.tracing:9411"`} {
		if !strings.Contains(newIn.Values, s) {
			t.Errorf("the new side's values lack %s", s)
		}
	}
	var newValues map[string]any
	if err := json.Unmarshal([]byte(newIn.Values), &newValues); err != nil {
		t.Fatal(err)
	}
	if cni, _ := getPath(newValues, []string{"pilot", "cni", "enabled"}); cni != true {
		t.Errorf("istio_cni.enabled moved to components.cni.enabled: the new side's pilot.cni.enabled is %v", cni)
	}
	if strings.Contains(newIn.Values, "shop.svc") || strings.Contains(newIn.Values, "stackdriver") || !strings.Contains(newIn.MeshConfigYAML, "holdApplicationUntilProxyStarts: true") {
		t.Errorf("the new side: an unticked key carried, or the mesh config lost:\n%s", newIn.MeshConfigYAML)
	}
	if _, err := NewPlan(t.Context(), e, engine.InstallOptions{}, nil); err == nil {
		t.Error("a plan without a mesh")
	}
}

// TestCovers: a value holds another when equal, or, for maps, when it has each of its keys with a
// value it holds.
func TestCovers(t *testing.T) {
	for _, c := range []struct {
		got, want any
		ok        bool
	}{
		{"100m", "100m", true},
		{"100m", "200m", false},
		{map[string]any{"a": "1", "chart": "x"}, map[string]any{"a": "1"}, true},
		{map[string]any{"a": "2"}, map[string]any{"a": "1"}, false},
		{map[string]any{"b": map[string]any{"c": true, "d": 1.0}}, map[string]any{"b": map[string]any{"c": true}}, true},
		{"x", map[string]any{"a": "1"}, false},
		{[]any{"a", "b"}, []any{"a"}, false},
	} {
		if got := covers(c.got, c.want); got != c.ok {
			t.Errorf("covers(%v, %v) = %v, want %v", c.got, c.want, got, c.ok)
		}
	}
}

// TestUpgradePreviewOneSideFails: a document one side cannot inject and the other can is a
// change, though no field of it can be compared: here the old side's own template reads a field
// the embedded injector code does not give it.
func TestUpgradePreviewOneSideFails(t *testing.T) {
	e := testEngine(t)
	def, err := e.Install(t.Context(), engine.InstallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	broken := "policy: enabled\ntemplates:\n  sidecar: |\n    {{ .NoSuchField }}\n"
	old := engine.InstallOptions{Mesh: engine.OwnMesh{InjectorConfig: broken, Values: def.Values, MeshConfig: def.MeshConfigYAML}}
	p, err := NewPreview(t.Context(), e, []byte(upgradeDeployment("web")), nil, engine.Settings{Install: old}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Documents) != 1 {
		t.Fatalf("%d documents", len(p.Documents))
	}
	if d := p.Documents[0]; d.OldError == "" || d.NewError != "" || len(d.Changes) != 0 || !d.Changed {
		t.Fatalf("old error %q, new error %q, %d changes, changed %v: want the old side's error, a change", d.OldError, d.NewError, len(d.Changes), d.Changed)
	}
}

// TestUpgradeWhy: an upgrade's changed fields are said by the lines that differ between the two
// sides' templates — the canonical-name label of "web_" by the older template's trimSuffix line
// and the newer's trimAll line, each side's line its own template's — and a field the same lines
// wrote on both sides (the proxy image, which the new release's values change) by none, with the
// image Istio computed from them on each side.
func TestUpgradeWhy(t *testing.T) {
	e := testEngine(t)
	s := engine.Settings{Install: olderMesh(t, e)}
	manifest := []byte(upgradeDeployment("web_"))
	p, err := NewPreview(t.Context(), e, manifest, nil, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	whys, err := p.Explain(t.Context(), e, manifest, nil, s)
	if err != nil {
		t.Fatal(err)
	}
	old, err := e.Install(t.Context(), s.Install)
	if err != nil {
		t.Fatal(err)
	}
	next, err := e.Install(t.Context(), p.Plan.New)
	if err != nil {
		t.Fatal(err)
	}
	line := func(in *engine.Install, n int) string { return strings.Split(in.TemplateText("sidecar"), "\n")[n-1] }
	byPath := map[string]Why{}
	for _, w := range whys {
		byPath[w.Path] = w
	}
	if len(whys) != 3 || len(byPath) != 3 {
		t.Fatalf("%d explanations of the 3 changes: %+v", len(whys), whys)
	}
	label := byPath[`spec.template.metadata.labels["service.istio.io/canonical-name"]`]
	if len(label.Old) != 1 || len(label.New) != 1 || len(label.OldDiffer["sidecar"]) == 0 || len(label.NewDiffer["sidecar"]) == 0 {
		t.Fatalf("the label: %+v", label)
	}
	for _, n := range label.OldDiffer["sidecar"] {
		if l := line(old, n); !strings.Contains(l, "trimSuffix") || strings.Contains(line(next, n), l) {
			t.Errorf("the older template's line %d differs: %q", n, l)
		}
	}
	for _, n := range label.NewDiffer["sidecar"] {
		if l := line(next, n); !strings.Contains(l, "trimAll") {
			t.Errorf("the newer template's line %d differs: %q", n, l)
		}
	}
	if !slices.Contains(label.OldDiffer["sidecar"], label.Old[0].Line) || !slices.Contains(label.NewDiffer["sidecar"], label.New[0].Line) {
		t.Errorf("the label's own lines %d and %d are not among those that differ: %v %v", label.Old[0].Line, label.New[0].Line, label.OldDiffer, label.NewDiffer)
	}
	image := byPath["spec.template.spec.containers[istio-proxy].image"]
	if len(image.Old) != 1 || len(image.New) != 1 || image.OldDiffer != nil || image.NewDiffer != nil {
		t.Fatalf("the image: %+v", image)
	}
	computed := func(pr engine.Provenance) string {
		for _, in := range pr.Inputs {
			if in.Name == "ProxyImage" {
				return in.Value
			}
		}
		return ""
	}
	if o, n := computed(image.Old[0]), computed(image.New[0]); !strings.HasPrefix(o, "registry.example.com/istio/proxyv2:1.31.0-alpha.1") || n == "" || o == n {
		t.Errorf("the image Istio computed: old %q, new %q", o, n)
	}
}
