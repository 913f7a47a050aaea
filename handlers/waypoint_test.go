package handlers

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
	"github.com/sidecarlab/sidecarlab/wording"
)

// waypointYAML is a Deployment and an AuthorizationPolicy of HTTP rules that selects it.
const waypointYAML = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx}]
---
apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: only-get, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  rules:
  - to:
    - operation: {methods: [GET]}
`

// TestWaypointFinding: with the namespace labelled for ambient, the page's pitfalls and the API's
// findings say the policy needs a waypoint, at the policy's document; without it they do not.
func TestWaypointFinding(t *testing.T) {
	h := newServer(t)
	ambient := engine.Namespace{Name: "shop", Labels: map[string]string{"istio.io/dataplane-mode": "ambient"}}
	for _, ns := range []engine.Namespace{ambient, shop} {
		want := ns.Labels != nil
		st := withNamespace(ns)
		st.Manifest = waypointYAML
		r := get(t, h, stateLink(t, st))
		if r.status != http.StatusOK {
			t.Fatalf("status %d", r.status)
		}
		f := testid(r, "finding-ambient-needs-waypoint")
		if got := f.Length() == 1; got != want {
			t.Errorf("labels %v: page finding %v, want %v", ns.Labels, got, want)
		}
		if want && !strings.Contains(f.Text(), "AuthorizationPolicy shop/only-get on Deployment shop/web needs a waypoint") {
			t.Errorf("page finding %q", f.Text())
		}
		status, body, top := postAPI(t, h, "?include=findings", api.InjectRequest{Manifest: waypointYAML, Settings: engine.Settings{Namespace: ns}})
		if status != http.StatusOK {
			t.Fatalf("API status %d: %s", status, body)
		}
		var fs []wording.Finding
		_ = json.Unmarshal(top["findings"], &fs)
		found := false
		for _, f := range fs {
			if f.Check == "ambient-needs-waypoint" {
				found = f.Doc == 2 && f.Path == "spec.rules[0].to[0].operation.methods"
			}
		}
		if found != want {
			t.Errorf("labels %v: API finding %v, want %v: %+v", ns.Labels, found, want, fs)
		}
	}
}

// TestBatchAmbientColumn: the batch table's "joins ambient" column says whether the workload's
// pods join ambient under the state's installation and namespace, with why not, and its
// "ztunnel share" column its share of ztunnel's requests; the CSV has both.
func TestBatchAmbientColumn(t *testing.T) {
	h := newServer(t)
	ambient := engine.Namespace{Name: "shop", Labels: map[string]string{"istio.io/dataplane-mode": "ambient"}}
	for _, c := range []struct {
		name      string
		st        api.State
		cell, csv string
		note      bool
	}{
		{"the ambient profile", withNamespace(ambient, "profile=ambient"), "yes", "yes", false},
		{"the default profile", withNamespace(ambient), "no", "no", true},
		{"not in play", withNamespace(shop), "", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := get(t, h, stateLink(t, c.st)+"&tab=batch&cols=ambient,ztunnel-share")
			if r.status != http.StatusOK {
				t.Fatalf("status %d", r.status)
			}
			cell := testid(r, "batch-row").First().Find("td").First()
			text := strings.TrimSpace(cell.Contents().First().Text())
			if text != c.cell || (cell.Find(".b-note").Length() == 1) != c.note {
				t.Errorf("cell %q (note %q), want %q (note %v)", text, cell.Find(".b-note").Text(), c.cell, c.note)
			}
			// The ztunnel share: the lone workload in ambient carries all of ztunnel's requests
			// on the default node count, said in the cell's note and the total.
			share := testid(r, "batch-row").First().Find("td").Eq(1)
			total := strings.Join(strings.Fields(testid(r, "batch-total").Text()), " ")
			inAmbient := c.csv == "yes"
			if got := strings.TrimSpace(share.Contents().First().Text()) != ""; got != inAmbient ||
				strings.Contains(share.Find(".b-note").Text(), "ztunnel on 3 nodes asks for") != inAmbient ||
				strings.Contains(total, "in ambient, ztunnel on 3 nodes asks for") != inAmbient {
				t.Errorf("ztunnel share %q (note %q; total %q), want one: %t", share.Text(), share.Find(".b-note").Text(), total, inAmbient)
			}
			csv := get(t, h, testid(r, "batch-csv").AttrOr("href", ""))
			lines := strings.Split(strings.TrimSpace(csv.body), "\n")
			if len(lines) < 2 || lines[0] != "kind,name,joins ambient,ztunnel share" || !strings.Contains(lines[1], ","+c.csv+",") ||
				strings.HasSuffix(lines[1], ",") == inAmbient {
				t.Errorf("CSV:\n%s", csv.body)
			}
		})
	}
}

// TestBatchNodes: the batch table's node count (nodes=) is a field of the column chooser when the
// installation has a ztunnel: the share, the total and the downloads are on that many nodes, the
// view's links and the playground's form keep it, and a count out of range is a 400 naming it.
func TestBatchNodes(t *testing.T) {
	h := newServer(t)
	ns := engine.Namespace{Name: "shop", Labels: map[string]string{"istio.io/dataplane-mode": "ambient"}}
	link := stateLink(t, withNamespace(ns, "profile=ambient")) + "&tab=batch&cols=ambient,ztunnel-share"
	three, forty := get(t, h, link), get(t, h, link+"&nodes=40")
	if three.status != http.StatusOK || forty.status != http.StatusOK {
		t.Fatalf("status %d, %d", three.status, forty.status)
	}
	if v := testid(three, "batch-nodes").AttrOr("value", ""); v != "3" {
		t.Errorf("the field says %q nodes, want the default 3", v)
	}
	if v := testid(forty, "batch-nodes").AttrOr("value", ""); v != "40" {
		t.Errorf("the field says %q nodes, want 40", v)
	}
	// The chooser submits the field, not a hidden copy of it beside.
	if n := forty.doc.Find(`input[form="batch-cols"][name="nodes"]`).Length(); n != 1 {
		t.Errorf("%d inputs named nodes in the chooser, want the field alone", n)
	}
	total := strings.Join(strings.Fields(testid(forty, "batch-total").Text()), " ")
	if !strings.Contains(total, "ztunnel on 40 nodes asks for") {
		t.Errorf("total %q", total)
	}
	// The lone workload carries all of ztunnel's requests: 40 nodes' worth, not 3.
	csv3 := get(t, h, testid(three, "batch-csv").AttrOr("href", "")).body
	csv40 := get(t, h, testid(forty, "batch-csv").AttrOr("href", "")).body
	if csv3 == csv40 || !strings.Contains(testid(forty, "batch-json").AttrOr("href", ""), "nodes=40") {
		t.Errorf("the downloads do not follow the node count:\n%s\n%s", csv3, csv40)
	}
	for _, id := range []string{"tab-diff", "batch-md", "batch-cols-default"} {
		if href := testid(forty, id).AttrOr("href", ""); !strings.Contains(href, "nodes=40") {
			t.Errorf("%s does not keep the node count: %s", id, href)
		}
	}
	if v := forty.doc.Find(`#playground input[name="nodes"]`).AttrOr("value", ""); v != "40" {
		t.Errorf("the playground form carries nodes=%q through its actions", v)
	}
	// A form post keeps it: the view it redirects to has it.
	form := url.Values{"manifest": {testkit.Deployment}, "set": {"profile=ambient"}, "nsName": {"shop"},
		"nsLabels": {"istio.io/dataplane-mode=ambient"}, "tab": {"batch"}, "nodes": {"40"}}
	if p := postForm(t, h, form); p.status != http.StatusSeeOther || !strings.Contains(p.header.Get("Location"), "nodes=40") {
		t.Errorf("a form post (status %d) loses the node count: %s", p.status, p.header.Get("Location"))
	}
	// No ztunnel in the installation: no field.
	if d := get(t, h, stateLink(t, withNamespace(ns))+"&tab=batch"); testid(d, "batch-nodes").Length() != 0 {
		t.Error("a node count field with no ztunnel to share")
	}
	for _, bad := range []string{"0", "-1", "100001", "x"} {
		if r := get(t, h, link+"&nodes="+bad); r.status != http.StatusBadRequest || !strings.Contains(r.body, "nodes must be a number of nodes from 1 to 100000") {
			t.Errorf("nodes=%s: status %d", bad, r.status)
		}
	}
}
