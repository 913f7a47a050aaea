package handlers

import (
	"encoding/json"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

// TestStateSizeCountsOwnMesh: a link's state is bounded by --max-body with its mesh's own
// configuration counted (each of its texts), as a POST carrying it would be.
func TestStateSizeCountsOwnMesh(t *testing.T) {
	small := New(testLogger(), func() Engine { return eng }, testConfig(Config{MaxBodyBytes: 1000}))
	big := strings.Repeat("# padding\n", 100)
	for name, mesh := range map[string]engine.OwnMesh{
		"injector config": {InjectorConfig: big},
		"values":          {Values: big},
		"mesh config":     {MeshConfig: big},
		"webhooks":        {Webhooks: big},
	} {
		st := api.State{Manifest: testkit.Deployment, Settings: engine.Settings{Install: engine.InstallOptions{Mesh: mesh}}}
		if r := do(t, small, httptest.NewRequest(http.MethodGet, stateLink(t, st), nil)); r.status != http.StatusRequestEntityTooLarge {
			t.Errorf("%s of %d bytes: %d, want 413", name, len(big), r.status)
		}
	}
	// Without it, the same link is small enough.
	if r := do(t, small, httptest.NewRequest(http.MethodGet, stateLink(t, api.State{Manifest: testkit.Deployment}), nil)); r.status == http.StatusRequestEntityTooLarge {
		t.Errorf("the manifest alone: %d", r.status)
	}
}

// canaryConfigMaps is a revisioned mesh's ConfigMaps as kubectl prints them (a List), rendered
// by the engine with custom values and mesh config.
func canaryConfigMaps(t *testing.T, edit func(string) string, labels ...string) string {
	t.Helper()
	in, err := eng.Install(t.Context(), engine.InstallOptions{Set: []string{"revision=canary", "values.global.proxy.resources.requests.cpu=50m",
		"meshConfig.defaultConfig.holdApplicationUntilProxyStarts=true"}})
	if err != nil {
		t.Fatal(err)
	}
	config := in.InjectorConfig
	if edit != nil {
		config = edit(config)
	}
	return testkit.MeshList(t, "canary", config, in.Values, in.MeshConfigYAML, pairs(labels))
}

// pairs is a map of key, value, key, value….
func pairs(kv []string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// TestAPIOwnMesh: the API takes a mesh as kubectl prints its ConfigMaps and injects with it (its
// revision, values and mesh config); the permalink keeps only what is not Istio's own templates
// (a link of a few kilobytes, not the ~100 KB paste) and shows the same output. A mesh whose
// templates differ is refused by a server that does not run custom templates, naming them.
func TestAPIOwnMesh(t *testing.T) {
	h := newServer(t)
	cms := canaryConfigMaps(t, nil)
	status, body, top := postAPI(t, h, "?include=output", api.InjectRequest{Manifest: testkit.Deployment, MeshConfigMaps: cms})
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, body)
	}
	var out, link string
	_ = json.Unmarshal(top["output"], &out)
	_ = json.Unmarshal(top["permalink"], &link)
	for _, s := range []string{"istio.io/rev: canary", "cpu: 50m", "holdApplicationUntilProxyStarts"} {
		if !strings.Contains(out, s) {
			t.Errorf("no %q in the output", s)
		}
	}
	var said api.Mesh
	if err := json.Unmarshal(top["mesh"], &said); err != nil || !reflect.DeepEqual(said, api.Mesh{Revision: "canary", Templates: "istio", InjectedBy: engine.Version().Istio}) {
		t.Errorf("the answer's mesh: %s (%v)", top["mesh"], err)
	}
	if len(link) > 8<<10 || len(cms) < 50<<10 {
		t.Errorf("a permalink of %d bytes for %d bytes of ConfigMaps", len(link), len(cms))
	}
	st, err := decodeState(link[strings.Index(link, "s=")+2:])
	if err != nil {
		t.Fatal(err)
	}
	if !st.Settings.Install.Mesh.IstioTemplates || st.Settings.Install.Revision != "canary" {
		t.Fatalf("the link's mesh: templates left out %v, revision %q", st.Settings.Install.Mesh.IstioTemplates, st.Settings.Install.Revision)
	}
	status, body, top = postAPI(t, h, "?include=output", api.InjectRequest{Manifest: st.Manifest, Settings: st.Settings})
	var again string
	_ = json.Unmarshal(top["output"], &again)
	if status != http.StatusOK || again != out {
		t.Fatalf("the link's state injects differently (%d):\n%s", status, body)
	}

	custom := canaryConfigMaps(t, func(c string) string {
		return strings.Replace(c, "security.istio.io/tlsMode: {{", `team: "x"`+"\n        security.istio.io/tlsMode: {{", 1)
	})
	status, body, _ = postAPI(t, h, "", api.InjectRequest{Manifest: testkit.Deployment, MeshConfigMaps: custom})
	if status != http.StatusUnprocessableEntity || !strings.Contains(body, `templates \"sidecar\" are not`) || !strings.Contains(body, "+++ sidecar (yours)") {
		t.Fatalf("a changed template: %d %.600s", status, body)
	}
	if _, _, plain := postAPI(t, h, "?include=output", api.InjectRequest{Manifest: testkit.Deployment}); plain["mesh"] != nil {
		t.Errorf("an answer without a mesh of one's own says %s", plain["mesh"])
	}
	status, _, _ = postAPI(t, h, "", api.InjectRequest{Manifest: testkit.Deployment, MeshConfigMaps: cms, Settings: engine.Settings{Install: engine.InstallOptions{Mesh: engine.OwnMesh{Values: "{}"}}}})
	if status != http.StatusBadRequest {
		t.Fatalf("a mesh sent twice: %d", status)
	}
	status, body, _ = postAPI(t, h, "", api.InjectRequest{Manifest: testkit.Deployment, MeshConfigMaps: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: istio}\ndata: {mesh: '{}'}\n"})
	if status != http.StatusUnprocessableEntity || !strings.Contains(body, "no istio-sidecar-injector ConfigMap") {
		t.Fatalf("no injector ConfigMap: %d %s", status, body)
	}
}

// TestMeshEmbeddedParts: a mesh given in parts (settings.install.mesh) injects with the embedded
// Istio's for the parts it leaves out, and says which, in the API's answer (mesh.embedded) and
// on the page (the settings' line on the mesh, en and ja); a whole mesh says none.
func TestMeshEmbeddedParts(t *testing.T) {
	h := newServer(t)
	def, err := eng.Install(t.Context(), engine.InstallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		mesh     engine.OwnMesh
		embedded []string
		page     string
	}{
		{"mesh config alone", engine.OwnMesh{MeshConfig: "defaultConfig:\n  holdApplicationUntilProxyStarts: true\n"}, []string{"injectorConfig", "values"},
			"your mesh gives no injector config, values, so Istio " + engine.Version().Istio + "'s were used"},
		{"values alone", engine.OwnMesh{Values: def.Values}, []string{"injectorConfig", "meshConfig"},
			"your mesh gives no injector config, mesh config, so Istio " + engine.Version().Istio + "'s were used"},
		{"whole", engine.OwnMesh{InjectorConfig: def.InjectorConfig, Values: def.Values, MeshConfig: def.MeshConfigYAML, Istio: "1.29.1"}, nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := api.State{Manifest: testkit.Deployment, Settings: engine.Settings{Install: engine.InstallOptions{Mesh: c.mesh}}}
			status, body, top := postAPI(t, h, "", api.InjectRequest{Manifest: st.Manifest, Settings: st.Settings})
			var said api.Mesh
			if err := json.Unmarshal(top["mesh"], &said); status != http.StatusOK || err != nil {
				t.Fatalf("%d %v: %.500s", status, err, body)
			}
			if !reflect.DeepEqual(said.Embedded, c.embedded) || said.Templates != "istio" {
				t.Errorf("the answer's mesh: %s, want embedded %q and Istio's templates", top["mesh"], c.embedded)
			}
			page := html.UnescapeString(do(t, h, httptest.NewRequest(http.MethodGet, stateLink(t, st), nil)).body)
			if got := strings.Contains(page, "gives no"); got != (c.page != "") || c.page != "" && !strings.Contains(page, c.page) {
				t.Errorf("the page's settings do not say %q (said: %v)", c.page, got)
			}
			// The results say it too, in view: which mesh injected, who installed it (or that
			// nothing says), and the parts that were the embedded Istio's.
			r := do(t, h, httptest.NewRequest(http.MethodGet, stateLink(t, st), nil))
			line := strings.Join(strings.Fields(r.doc.Find(`[data-testid="results-mesh"]`).Text()), " ")
			installed := "which Istio installed it is unknown"
			if c.mesh.Istio != "" {
				installed = "installed by Istio " + c.mesh.Istio
			}
			if !strings.HasPrefix(line, "Injected with your mesh: revision default") || !strings.Contains(line, installed) || !strings.Contains(line, c.page) {
				t.Errorf("the results' mesh line %q does not say %q and %q", line, installed, c.page)
			}
		})
	}
	// Without a mesh of one's own, no such line.
	if n := do(t, h, httptest.NewRequest(http.MethodGet, stateLink(t, api.State{Manifest: testkit.Deployment}), nil)).doc.Find(`[data-testid="results-mesh"]`).Length(); n != 0 {
		t.Errorf("the results of the embedded Istio say %d mesh lines", n)
	}
	// In Japanese, the same sentence from the catalog.
	st := api.State{Manifest: testkit.Deployment, Settings: engine.Settings{Install: engine.InstallOptions{Mesh: engine.OwnMesh{Values: def.Values}}}}
	req := httptest.NewRequest(http.MethodGet, stateLink(t, st)+"&lang=ja", nil)
	if page := do(t, h, req).body; !strings.Contains(page, "お使いのメッシュにはインジェクター設定、メッシュ設定がないため") {
		t.Errorf("the Japanese page does not say which parts were the embedded Istio's")
	}
}

// TestShareOwnMeshSecrets: a share whose mesh holds a secret is refused, naming where (never the
// value), and stored redacted when asked.
func TestShareOwnMeshSecrets(t *testing.T) {
	links := newMemLinks()
	h := serverWith(t, links)
	mesh := engine.OwnMesh{MeshConfig: "defaultConfig:\n  proxyMetadata:\n    DB_PASSWORD: hunter2\n"}
	req := api.ShareRequest{InjectRequest: api.InjectRequest{Manifest: testkit.Deployment, Settings: engine.Settings{Install: engine.InstallOptions{Mesh: mesh}}}}
	r := postShareAPI(t, h, req, nil)
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, `"setting": "install.mesh"`) || strings.Contains(r.body, "hunter2") {
		t.Fatalf("%d %s", r.status, r.body)
	}
	req.Redact = true
	if r = postShareAPI(t, h, req, nil); r.status != http.StatusCreated {
		t.Fatalf("redacted: %d %s", r.status, r.body)
	}
	links.mu.Lock()
	defer links.mu.Unlock()
	if len(links.links) != 1 {
		t.Fatalf("%d links stored", len(links.links))
	}
	for _, l := range links.links {
		if strings.Contains(string(l.State), "hunter2") || !strings.Contains(string(l.State), "DB_PASSWORD") {
			t.Fatalf("stored: %s", l.State)
		}
	}
}

// TestShareRefusesWhatItWillNotRun: a locked-down server does not store a state whose mesh has
// templates of its own, which it refuses to run (422, nothing stored); a state Istio rejects is
// still stored, as it shows the same error. Before: a link to the refusal.
func TestShareRefusesWhatItWillNotRun(t *testing.T) {
	links := newMemLinks()
	h := serverWith(t, links)
	mine := canaryConfigMaps(t, func(config string) string {
		return strings.Replace(config, "templates:\n", "templates:\n  mine: |\n    metadata:\n      labels:\n        mine: \"yes\"\n", 1)
	})
	r := postShareAPI(t, h, api.ShareRequest{InjectRequest: api.InjectRequest{Manifest: testkit.Deployment, MeshConfigMaps: mine}}, nil)
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, `templates \"mine\" are not`) {
		t.Fatalf("a mesh of templates this server does not run: %d %s", r.status, r.body)
	}
	bad := api.ShareRequest{InjectRequest: api.InjectRequest{Manifest: testkit.Deployment, Steps: []input.Step{{Key: "proxy.istio.io/config", Value: "{bad"}}}}
	if r := postShareAPI(t, h, bad, nil); r.status != http.StatusCreated {
		t.Fatalf("a state Istio rejects: %d %s", r.status, r.body)
	}
	links.mu.Lock()
	defer links.mu.Unlock()
	if len(links.links) != 1 {
		t.Fatalf("%d links stored, want only the one Istio rejects", len(links.links))
	}
}

// TestFormOwnMesh: the settings take a mesh as kubectl prints its ConfigMaps; the link keeps it
// compacted with its revision, the page says which mesh injects and injects with it, and the form
// carries it on (its box unticked, it is dropped). A paste that is not a mesh's ConfigMaps is a
// 422 naming it.
func TestFormOwnMesh(t *testing.T) {
	h := newServer(t)
	r := postForm(t, h, url.Values{"manifest": {testkit.Deployment}, "meshConfigMaps": {canaryConfigMaps(t, nil)}})
	st := decodeLocation(t, r)
	if loc := r.header.Get("Location"); len(loc) > 8<<10 || !st.Settings.Install.Mesh.IstioTemplates || st.Settings.Install.Revision != "canary" {
		t.Fatalf("a link of %d bytes; mesh compacted %v, revision %q", len(loc), st.Settings.Install.Mesh.IstioTemplates, st.Settings.Install.Revision)
	}
	page := do(t, h, httptest.NewRequest(http.MethodGet, r.header.Get("Location"), nil))
	used := strings.Join(strings.Fields(testid(page, "install-mesh-used").Text()), " ")
	if page.status != http.StatusOK || !strings.Contains(used, "revision canary, Istio "+engine.Version().Istio+"'s own templates") {
		t.Fatalf("%d; the page says %q", page.status, used)
	}
	if !strings.Contains(page.body, "istio.io/rev: canary") || !strings.Contains(page.body, "cpu: 50m") {
		t.Fatal("the page does not inject with the mesh")
	}
	field, ok := page.doc.Find(`input[name="mesh"]`).Attr("value")
	if !ok || field == "" {
		t.Fatal("the form does not carry the mesh")
	}
	kept := decodeLocation(t, postForm(t, h, url.Values{"manifest": {testkit.Deployment}, "mesh": {field}, "meshKeep": {"1"}}))
	if kept.Settings.Install.Mesh != st.Settings.Install.Mesh || kept.Settings.Install.Revision != "canary" {
		t.Fatal("the form's mesh is not the link's")
	}
	dropped := decodeLocation(t, postForm(t, h, url.Values{"manifest": {testkit.Deployment}, "mesh": {field}}))
	if !dropped.Settings.Install.Mesh.IsZero() || dropped.Settings.Install.Revision != "" {
		t.Fatalf("unticked, the mesh stays: %+v", dropped.Settings.Install)
	}
	bad := postForm(t, h, url.Values{"manifest": {testkit.Deployment}, "meshConfigMaps": {"kind: ConfigMap\nmetadata: {name: istio}\ndata: {mesh: '{}'}\n"}})
	if bad.status != http.StatusUnprocessableEntity || !strings.Contains(bad.body, "no istio-sidecar-injector ConfigMap") {
		t.Fatalf("%d: %.400s", bad.status, bad.body)
	}
}

// TestFormOwnMeshOtherIstio: the settings say when the pasted mesh was installed by another
// Istio than the one whose injector code runs it, and say nothing of the kind for the same one.
func TestFormOwnMeshOtherIstio(t *testing.T) {
	h := newServer(t)
	for _, c := range []struct {
		version string
		said    bool
	}{{"1.27.3", true}, {engine.Version().Istio + ".2", false}} {
		r := postForm(t, h, url.Values{"manifest": {testkit.Deployment}, "meshConfigMaps": {canaryConfigMaps(t, nil, "app.kubernetes.io/version", c.version)}})
		page := do(t, h, httptest.NewRequest(http.MethodGet, r.header.Get("Location"), nil))
		used := strings.Join(strings.Fields(testid(page, "install-mesh-used").Text()), " ")
		want := "installed by Istio " + c.version + ", injected here by Istio " + engine.Version().Istio + "'s injector code"
		if strings.Contains(used, want) != c.said || !strings.Contains(used, "revision canary") {
			t.Errorf("%s: the settings say %q", c.version, used)
		}
	}
}

// TestDevImageSaid: where the output has the embedded Istio's development image
// (registry.istio.io/testing/proxyv2:latest), the results say whose it is and that a release
// injects its own; an installation with a hub and tag of its own, or a pod Istio does not inject,
// gets no such note.
func TestDevImageSaid(t *testing.T) {
	h := newServer(t)
	img := engine.EmbeddedProxyImage()
	for _, c := range []struct {
		name string
		st   api.State
		want bool
	}{
		{"the default installation", api.State{Manifest: testkit.Deployment}, true},
		{"a hub and tag of one's own", api.State{Manifest: testkit.Deployment, Settings: engine.Settings{Install: engine.InstallOptions{Set: []string{"hub=docker.io/istio", "tag=1.31.0"}}}}, false},
		{"a pod Istio skips", api.State{Manifest: testkit.Deployment, Steps: []input.Step{{Key: "sidecar.istio.io/inject", Value: "false"}}}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := do(t, h, httptest.NewRequest(http.MethodGet, stateLink(t, c.st), nil))
			note := html.UnescapeString(r.doc.Find(`[data-testid="dev-image"]`).Text())
			if (note != "") != c.want || c.want && (!strings.Contains(note, img) || !strings.Contains(note, "development-build")) {
				t.Errorf("the note: %q, want one: %v", note, c.want)
			}
		})
	}
}
