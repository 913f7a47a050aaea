package handlers

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
	"github.com/sidecarlab/sidecarlab/permalink"
)

// TestUpgradePage: a state with a mesh of today's Istio (revision canary, a CPU request, hold)
// offers the upgrade preview; the preview lists the CPU as carried, and with it carried the new
// side (the embedded chart rendered with it) injects exactly as the mesh does. Unticked, the CPU
// is what changes.
func TestUpgradePage(t *testing.T) {
	h := newServer(t)
	st := decodeLocation(t, postForm(t, h, url.Values{"manifest": {testkit.Deployment}, "meshConfigMaps": {canaryConfigMaps(t, nil)}}))
	page := get(t, h, stateLink(t, st))
	href, ok := page.doc.Find(`a[href^="/upgrade?"]`).Attr("href")
	if !ok {
		t.Fatal("the playground offers no upgrade preview for a state with a mesh")
	}
	// Beside the results' line on which mesh injected, in view with the settings closed.
	if inLine, ok := testid(page, "results-upgrade").Attr("href"); !ok || inLine != href {
		t.Errorf("the results' mesh line offers %q, want the upgrade preview %q", inLine, href)
	}
	// In the tab bar.
	if inTabs, ok := testid(page, "tab-upgrade").Attr("href"); !ok || inTabs != href {
		t.Errorf("the tab bar offers %q, want the upgrade preview %q", inTabs, href)
	}
	// And beside the mesh in the settings.
	if inSettings, ok := testid(page, "settings-upgrade").Attr("href"); !ok || inSettings != href {
		t.Errorf("the settings offer %q, want the upgrade preview %q", inSettings, href)
	}
	if _, ok := get(t, h, stateLink(t, api.State{Manifest: testkit.Deployment})).doc.Find(`a[href^="/upgrade?"]`).Attr("href"); ok {
		t.Fatal("an upgrade preview offered without a mesh")
	}
	up := get(t, h, href)
	if up.status != http.StatusOK {
		t.Fatalf("%d: %.500s", up.status, up.body)
	}
	var keys []string
	testid(up, "upgrade-key").Each(func(_ int, s *goquery.Selection) {
		keys = append(keys, s.AttrOr("data-path", "")+"="+s.AttrOr("data-carried", ""))
	})
	if !slices.Equal(keys, []string{"global.proxy.resources.requests.cpu=true"}) {
		t.Fatalf("keys %q", keys)
	}
	// Both sides inject the embedded Istio's development image (the mesh was rendered by it):
	// each says whose it is, so the new side's image does not read as a move to a testing
	// registry.
	for _, side := range []string{"dev-image-a", "dev-image-b"} {
		if note := testid(up, side).Text(); !strings.Contains(note, engine.EmbeddedProxyImage()) || !strings.Contains(note, "development-build") {
			t.Errorf("%s: %q", side, note)
		}
	}
	if n := testid(up, "compare-changes").Find(`[data-testid="change"]`).Length(); n != 0 || testid(up, "compare-same").Length() != 1 {
		t.Fatalf("carried, the new side differs in %d fields", n)
	}
	// Unticked: the form sends chosen without carry.
	u, _ := url.Parse(href)
	again := get(t, h, "/upgrade?"+url.Values{"s": {u.Query().Get("s")}, "chosen": {"1"}}.Encode())
	var paths []string
	testid(again, "change").Each(func(_ int, s *goquery.Selection) { paths = append(paths, s.AttrOr("data-path", "")) })
	if !slices.Contains(paths, "spec.template.spec.containers[istio-proxy].resources.requests.cpu") || testid(again, "upgrade-key").AttrOr("data-carried", "") != "false" {
		t.Fatalf("the CPU left out: changes %q", paths)
	}
	// A batch: each document, changed or not.
	batch := st
	batch.Manifest += "---\napiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {ports: [{port: 80}]}\n"
	var docs []string
	testid(get(t, h, "/upgrade?"+url.Values{"s": {permalink.Encode(batch)}, "chosen": {"1"}}.Encode()), "compare-docs").Find("li").Each(func(_ int, s *goquery.Selection) {
		docs = append(docs, strings.Join(strings.Fields(s.Text()), " ")+" ("+s.AttrOr("data-changes", "")+")")
	})
	if len(docs) != 2 || docs[0] != "Document 1: Deployment web: 2 fields change (2)" || docs[1] != "Document 2: Service web: no change (0)" {
		t.Errorf("the batch's documents: %q", docs)
	}
	// In a namespace of revision canary that enforces baseline, each side says its Pod's verdict with Pod Security's
	// words: istio-init's NET_ADMIN.
	st.Settings.Namespace = engine.Namespace{Name: "shop", Labels: map[string]string{"istio.io/rev": "canary", "pod-security.kubernetes.io/enforce": "baseline"}}
	r := get(t, h, upgradeHref(st))
	for _, side := range []string{"admission-a", "admission-b"} {
		if v := testid(r, side).Find("li"); v.Length() != 1 || v.AttrOr("data-admitted", "") != "false" || !strings.Contains(v.Text(), "NET_ADMIN") {
			t.Errorf("%s: %q", side, v.Text())
		}
	}
	if v := testid(up, "admission-a").Find("li"); v.AttrOr("data-admitted", "") != "true" {
		t.Errorf("in the default namespace: %q", v.Text())
	}
	// A mesh whose templates this server does not run: its side says why, and nothing claims the
	// outputs are the same.
	read, err := engine.ParseMeshConfigMaps([]byte(canaryConfigMaps(t, func(c string) string {
		return strings.Replace(c, "security.istio.io/tlsMode: {{", `team: "x"`+"\n        security.istio.io/tlsMode: {{", 1)
	})))
	if err != nil {
		t.Fatal(err)
	}
	custom := api.State{Manifest: testkit.Deployment, Settings: engine.Settings{Install: engine.InstallOptions{Mesh: engine.CompactMesh(read.Mesh), Revision: read.Revision}}}
	r = get(t, h, upgradeHref(custom))
	if testid(up, "upgrade-old-code").Length() != 0 || testid(r, "upgrade-old-code").Length() != 1 {
		t.Errorf("the note on the older code: Istio's templates %d, others %d", testid(up, "upgrade-old-code").Length(), testid(r, "upgrade-old-code").Length())
	}
	if !strings.Contains(testid(r, "side-a").Find(".error-box").Text(), "are not the ones Istio") || testid(r, "side-b").Find(".error-box").Length() != 0 || testid(r, "compare-same").Length() != 0 {
		t.Fatalf("custom templates on a server that runs none: %d\n%.800s", r.status, testid(r, "side-a").Text())
	}
	if r := get(t, h, "/upgrade?"+url.Values{"s": {permalink.Encode(api.State{Manifest: testkit.Deployment})}}.Encode()); r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, "needs your mesh") {
		t.Fatalf("a preview without a mesh: %d", r.status)
	}
}

// TestAPIUpgrade: POST /api/v1/upgrade answers the plan and each document's changes, and the
// preview's address; "carry" chooses the keys exactly; "explain" says why each change is there.
func TestAPIUpgrade(t *testing.T) {
	h := newServer(t)
	post := func(req api.UpgradeRequest) (int, api.UpgradeResponse, string) {
		b, _ := json.Marshal(req)
		req2 := httptest.NewRequest(http.MethodPost, "/api/v1/upgrade", strings.NewReader(string(b)))
		req2.Header.Set("Content-Type", "application/json")
		r := do(t, h, req2)
		var out api.UpgradeResponse
		if r.status == http.StatusOK {
			if err := json.Unmarshal([]byte(r.body), &out); err != nil {
				t.Fatal(err)
			}
		}
		return r.status, out, r.body
	}
	status, out, body := post(api.UpgradeRequest{InjectRequest: api.InjectRequest{Manifest: testkit.Deployment, MeshConfigMaps: canaryConfigMaps(t, nil)}})
	if status != http.StatusOK || len(out.Plan.Keys) != 1 || !out.Plan.Keys[0].Carried || len(out.Documents) != 1 || out.Documents[0].Changed || !strings.HasPrefix(out.Link, "/upgrade?") {
		t.Fatalf("%d %s", status, body)
	}
	none := []string{}
	status, out, body = post(api.UpgradeRequest{InjectRequest: api.InjectRequest{Manifest: testkit.Deployment, MeshConfigMaps: canaryConfigMaps(t, nil)}, Carry: &none})
	if status != http.StatusOK || out.Plan.Keys[0].Carried || !out.Documents[0].Changed || !strings.Contains(out.Link, "chosen=1") || out.Why != nil {
		t.Fatalf("carry nothing: %d %s", status, body)
	}
	// Explained: the CPU request changed with what the same lines read.
	status, out, body = post(api.UpgradeRequest{InjectRequest: api.InjectRequest{Manifest: testkit.Deployment, MeshConfigMaps: canaryConfigMaps(t, nil)}, Carry: &none, Explain: true})
	if status != http.StatusOK || len(out.Why) != len(out.Documents[0].Changes) {
		t.Fatalf("explained: %d %.500s", status, body)
	}
	if w := out.Why[0]; w.Path != "spec.template.spec.containers[istio-proxy].resources.requests.cpu" || len(w.Old) != 1 || len(w.New) != 1 || w.OldDiffer != nil || w.Unchanged() != "same" ||
		w.Old[0].Value != "50m" || w.New[0].Value == "50m" {
		t.Errorf("explained: %+v", w)
	}
	if status, _, body := post(api.UpgradeRequest{InjectRequest: api.InjectRequest{Manifest: testkit.Deployment}}); status != http.StatusUnprocessableEntity || !strings.Contains(body, "needs your mesh") {
		t.Fatalf("without a mesh: %d %s", status, body)
	}
}

// TestUpgradeWhyPage: on an upgrade preview of a mesh whose own template adds a label (run in
// the server's workers), each change asks why, the removed label too; the why page shows both
// sides, the old side's line that the new template has not marked, and the new side without the
// field; the CPU request, left behind, changed with what the same lines read.
func TestUpgradeWhyPage(t *testing.T) {
	newServer(t) // the shared engine, which canaryConfigMaps renders with
	h := isolatedServer(t)
	read, err := engine.ParseMeshConfigMaps([]byte(canaryConfigMaps(t, func(c string) string {
		return strings.Replace(c, "security.istio.io/tlsMode: {{", `team: "x"`+"\n        security.istio.io/tlsMode: {{", 1)
	})))
	if err != nil {
		t.Fatal(err)
	}
	custom := api.State{Manifest: testkit.Deployment, Settings: engine.Settings{Install: engine.InstallOptions{Mesh: engine.CompactMesh(read.Mesh), Revision: read.Revision}}}
	up := get(t, h, "/upgrade?"+url.Values{"s": {permalink.Encode(custom)}, "chosen": {"1"}}.Encode())
	if up.status != http.StatusOK {
		t.Fatalf("%d %.500s", up.status, up.body)
	}
	form := url.Values{}
	up.doc.Find(`form#why-form input`).Each(func(_ int, s *goquery.Selection) { form.Add(s.AttrOr("name", ""), s.AttrOr("value", "")) })
	ask := func(path string) response {
		t.Helper()
		field, ok := up.doc.Find(`tr[data-path="` + path + `"] [data-testid="why-link"]`).Attr("value")
		if !ok {
			t.Fatalf("%s: no why button", path)
		}
		q := url.Values{"field": {field}}
		for k, v := range form {
			q[k] = v
		}
		r := get(t, h, "/why?"+q.Encode())
		if r.status != http.StatusOK {
			t.Fatalf("%s: %d %.500s", path, r.status, r.body)
		}
		return r
	}
	label := ask("spec.template.metadata.labels.team")
	if says := testid(label, "why-sides-says").Text(); !strings.Contains(says, "of template sidecar differ") && !strings.Contains(says, "of template sidecar differs") {
		t.Errorf("the label: %q", says)
	}
	if differs := testid(label, "why-side-0").Find("tr.differs.wrote").Text(); !strings.Contains(differs, `team: "x"`) {
		t.Errorf("the old side's line: %q\n%s\n%s", differs, testid(label, "why-side-0").Text(), testid(label, "why-sides-says").Text())
	}
	if none := testid(label, "why-side-1").Text(); !strings.Contains(none, "does not have the field") {
		t.Errorf("the new side: %q", none)
	}
	if back, _ := testid(label, "why-back").Attr("href"); !strings.HasPrefix(back, "/upgrade?") || !strings.Contains(back, "chosen=1") {
		t.Errorf("back to %q", back)
	}
	cpu := ask("spec.template.spec.containers[istio-proxy].resources.requests.cpu")
	if says := testid(cpu, "why-sides-says").Text(); !strings.Contains(says, "same in both templates") {
		t.Errorf("the CPU: %q", says)
	}
	for _, side := range []string{"why-side-0", "why-side-1"} {
		if s := testid(cpu, side); s.Find("tr.wrote").Length() == 0 || s.Find("tr.differs").Length() != 0 {
			t.Errorf("the CPU on %s: %q", side, s.Text())
		}
	}
}
