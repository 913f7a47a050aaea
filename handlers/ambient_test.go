package handlers

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/permalink"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

// TestAmbientPage: the playground offers the comparison with ambient one click from a state; the
// page shows the workload joining ambient, the fields that go (istio-validation, never
// istio-init), both lifecycles and Pod Security verdicts, the annotations' rows with their source
// links, and the capacity on the nodes of its form. A state with a mesh of its own is not
// offered it, and a bad node count is a 422 that says what is wrong.
func TestAmbientPage(t *testing.T) {
	h := newServer(t)
	st := api.State{Manifest: jobYAML, Steps: []input.Step{{Key: "traffic.sidecar.istio.io/excludeOutboundPorts", Value: "3306"}}}
	page := get(t, h, stateLink(t, st))
	href, ok := page.doc.Find(`[data-testid="compare-link"][href^="/ambient?"]`).Attr("href")
	if !ok {
		t.Fatal("the playground offers no comparison with ambient")
	}
	r := get(t, h, href)
	if r.status != http.StatusOK {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	// The Job's one pod is "1 pod", not "1 pods".
	if c := strings.Join(strings.Fields(testid(r, "ambient-capacity").Text()), " "); !strings.Contains(c, "1 pod ×") {
		t.Errorf("the capacity says %q", c)
	}
	// ztunnel, which the page names throughout, is said once what it is.
	if d := testid(r, "ztunnel-defined").Text(); !strings.Contains(d, "each node runs one ztunnel") {
		t.Errorf("ztunnel is not defined on the page: %q", d)
	}
	if e := testid(r, "ambient-enrolment"); e.AttrOr("data-joins", "") != "true" || !strings.Contains(e.Text(), "rule 2 of its enablementSelectors") {
		t.Errorf("enrolment: %q joins=%s", e.Text(), e.AttrOr("data-joins", ""))
	}
	changes := testid(r, "ambient-changes").Text()
	if !strings.Contains(changes, "initContainers[istio-validation]") || strings.Contains(changes, "istio-init") {
		t.Errorf("the changes are not the ambient profile's sidecar's:\n%s", changes)
	}
	if n := testid(r, "lifecycle").Length(); n != 2 {
		t.Errorf("%d lifecycles, want the sidecar's and ambient's", n)
	}
	if !strings.Contains(testid(r, "ambient-facts").Text(), "The Job completes when its app exits") {
		t.Errorf("facts: %q", testid(r, "ambient-facts").Text())
	}
	for _, side := range []string{"sidecar", "ambient"} {
		if got := testid(r, "ambient-psa-"+side).Find(`li[data-level="baseline"]`).AttrOr("data-allowed", ""); got != "true" {
			t.Errorf("%s at baseline: allowed=%q", side, got)
		}
	}
	row := testid(r, "ambient-annotation")
	if row.AttrOr("data-annotation", "") != "traffic.sidecar.istio.io/excludeOutboundPorts" || row.AttrOr("data-verdict", "") != "ignored" {
		t.Errorf("annotation row: %s %s", row.AttrOr("data-annotation", ""), row.AttrOr("data-verdict", ""))
	}
	if src, _ := row.Find(`[data-testid="ambient-source"]`).First().Attr("href"); !strings.HasPrefix(src, "https://github.com/istio/istio/") {
		t.Errorf("source link %q", src)
	}
	if v := testid(r, "ambient-nodes").AttrOr("value", ""); v != "3" {
		t.Errorf("nodes %q, want the default 3", v)
	}
	u, _ := url.Parse(href)
	r = get(t, h, "/ambient?"+url.Values{"s": {u.Query().Get("s")}, "nodes": {"10"}}.Encode())
	if z := testid(r, "ambient-capacity-ztunnel").Text(); !strings.Contains(z, "cpu=2 memory=5Gi") {
		t.Errorf("ztunnel on 10 nodes: %q", z)
	}
	for _, bad := range []string{"0", "x", "100001", "-2"} {
		r := get(t, h, "/ambient?"+url.Values{"s": {u.Query().Get("s")}, "nodes": {bad}}.Encode())
		if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, "node count") {
			t.Errorf("nodes=%s: %d", bad, r.status)
		}
	}

	st.Settings.Install.Mesh = engine.OwnMesh{MeshConfig: "defaultConfig: {}"}
	if _, ok := get(t, h, stateLink(t, st)).doc.Find(`[data-testid="compare-link"][href^="/ambient?"]`).Attr("href"); ok {
		t.Error("a state with a mesh of its own offers the ambient profile")
	}
}

// TestAmbientPageEscapes: what the manifest carries comes back escaped.
func TestAmbientPageEscapes(t *testing.T) {
	h := newServer(t)
	hostile := strings.Replace(testkit.Deployment, "      labels:\n", "      annotations:\n        note: \"<script>alert(1)</script>\"\n      labels:\n", 1)
	r := get(t, h, ambientHref(api.State{Manifest: hostile}, 0))
	if r.status != http.StatusOK || strings.Contains(r.body, "<script>alert(1)") || !strings.Contains(r.body, "&lt;script&gt;alert(1)") {
		t.Fatalf("status %d; escaped: %v", r.status, strings.Contains(r.body, "&lt;script&gt;"))
	}
}

// TestAPIAmbient: POST /api/v1/ambient answers the comparison as data (the nodes given, the
// default without), with the page's address; a bad node count or a mesh of one's own is a 422.
func TestAPIAmbient(t *testing.T) {
	h := newServer(t)
	post := func(req api.AmbientRequest, lang string) (int, api.AmbientResponse, string) {
		b, _ := json.Marshal(req)
		hr := httptest.NewRequest(http.MethodPost, "/api/v1/ambient", strings.NewReader(string(b)))
		hr.Header.Set("Content-Type", "application/json")
		hr.Header.Set("Accept-Language", lang)
		r := do(t, h, hr)
		var out api.AmbientResponse
		if r.status == http.StatusOK {
			if err := json.Unmarshal([]byte(r.body), &out); err != nil {
				t.Fatal(err)
			}
		}
		return r.status, out, r.body
	}
	status, out, body := post(api.AmbientRequest{InjectRequest: api.InjectRequest{Manifest: testkit.Deployment}, Nodes: 4}, "en")
	if status != http.StatusOK || len(out.Workloads) != 1 || out.Capacity.Nodes != 4 || out.Capacity.ZtunnelsCPU != "800m" || !strings.HasPrefix(out.Compare, "/ambient?") || !strings.Contains(out.Compare, "nodes=4") {
		t.Fatalf("%d %s", status, body)
	}
	w := out.Workloads[0]
	if w.Enrolment == nil || !w.Enrolment.Joins || len(w.SidecarPodSecurity) != 2 || len(w.AmbientPodSecurity) != 2 || w.SidecarLifecycle == nil || len(w.Changes) == 0 {
		t.Fatalf("workload: %s", body)
	}
	status, ja, _ := post(api.AmbientRequest{InjectRequest: api.InjectRequest{Manifest: testkit.Deployment}}, "ja")
	if status != http.StatusOK || ja.Capacity.Nodes != engine.DefaultAmbientNodes || ja.Workloads[0].Enrolment.Text == w.Enrolment.Text {
		t.Errorf("in Japanese, default nodes: %d %d %q", status, ja.Capacity.Nodes, ja.Workloads[0].Enrolment.Text)
	}
	for _, req := range []api.AmbientRequest{
		{InjectRequest: api.InjectRequest{Manifest: testkit.Deployment}, Nodes: -1},
		{InjectRequest: api.InjectRequest{Manifest: testkit.Deployment}, Nodes: engine.MaxAmbientNodes + 1},
		{InjectRequest: api.InjectRequest{Manifest: testkit.Deployment, Settings: engine.Settings{Install: engine.InstallOptions{Mesh: engine.OwnMesh{MeshConfig: "defaultConfig: {}"}}}}},
	} {
		if status, _, body := post(req, "en"); status != http.StatusUnprocessableEntity {
			t.Errorf("nodes %d: %d %s", req.Nodes, status, body)
		}
	}
}

// TestAmbientWhy: each field a sidecar-or-ambient comparison drops asks why; the why page shows
// the field on the sidecar side, written by the ambient profile's template (istio-validation, the
// CNI node agent's check, not istio-init), and on the ambient side nothing, with the reason; the
// way back is the comparison at its node count. A bad node count is refused as the comparison
// refuses it.
func TestAmbientWhy(t *testing.T) {
	h := newServer(t)
	st := api.State{Manifest: jobYAML}
	r := get(t, h, "/ambient?"+url.Values{"s": {permalink.Encode(st)}, "nodes": {"5"}}.Encode())
	if r.status != http.StatusOK {
		t.Fatalf("%d %s", r.status, r.body)
	}
	form := url.Values{}
	r.doc.Find(`form#why-form input`).Each(func(_ int, s *goquery.Selection) { form.Add(s.AttrOr("name", ""), s.AttrOr("value", "")) })
	const path = "spec.template.spec.initContainers[istio-validation]"
	field, ok := r.doc.Find(`[data-testid="ambient-changes"] tr[data-path="` + path + `"] [data-testid="why-link"]`).Attr("value")
	if !ok || form.Get("ambient") != "1" || form.Get("nodes") != "5" {
		t.Fatalf("why button %v, form %v", ok, form)
	}
	form.Set("field", field)
	why := get(t, h, "/why?"+form.Encode())
	if why.status != http.StatusOK {
		t.Fatalf("%d %s", why.status, why.body)
	}
	if wrote := testid(why, "why-side-0").Find("tr.wrote").Text(); !strings.Contains(wrote, "istio-validation") {
		t.Errorf("the sidecar side's lines: %q", wrote)
	}
	if none := testid(why, "why-side-1").Text(); !strings.Contains(none, "does not have the field") {
		t.Errorf("the ambient side: %q", none)
	}
	if says := testid(why, "why-sides-says").Text(); !strings.Contains(says, "Istio changes nothing at admission") {
		t.Errorf("says %q", says)
	}
	if back, _ := testid(why, "why-back").Attr("href"); !strings.HasPrefix(back, "/ambient?") || !strings.Contains(back, "nodes=5") {
		t.Errorf("back to %q", back)
	}
	form.Set("nodes", "0")
	if bad := get(t, h, "/why?"+form.Encode()); bad.status != http.StatusUnprocessableEntity && bad.status != http.StatusBadRequest {
		t.Errorf("a bad node count: %d", bad.status)
	}
}
