package handlers

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/sidecarlab/sidecarlab/admission"
	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
	"github.com/sidecarlab/sidecarlab/permalink"
	"github.com/sidecarlab/sidecarlab/web"
	"github.com/sidecarlab/sidecarlab/wording"
)

var shop = engine.Namespace{Name: "shop"}

func withNamespace(ns engine.Namespace, set ...string) api.State {
	return api.State{Istio: engine.Version().Istio, Manifest: testkit.Deployment,
		Settings: engine.Settings{Namespace: ns, Install: engine.InstallOptions{Set: set}}}
}

// decodeLocation reads the state of a redirect's permalink.
func decodeLocation(t *testing.T, r response) api.State {
	t.Helper()
	if r.status != http.StatusSeeOther {
		t.Fatalf("status %d, want 303: %s", r.status, testid(r, "namespace-error").Text())
	}
	u, err := url.Parse(r.header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := decodeState(u.Query().Get("s"))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestStateV2Namespace: the namespace is part of the permalink (state v2): it round-trips through
// a link and a short link, and the form shows it again.
func TestStateV2Namespace(t *testing.T) {
	st := withNamespace(engine.Namespace{Name: "shop", Labels: map[string]string{"istio-injection": "enabled", "team": "a"}})
	got, err := decodeState(permalink.Encode(st))
	if err != nil {
		t.Fatal(err)
	}
	st.Version = 2
	if d := cmp.Diff(st, got); d != "" {
		t.Fatalf("v2 round trip (-want +got)\n%s", d)
	}
	r := get(t, newServer(t), stateLink(t, st))
	if r.status != http.StatusOK || testid(r, "ns-name").AttrOr("value", "") != "shop" ||
		testid(r, "ns-injection").AttrOr("checked", "no") == "no" || testid(r, "ns-labels").Text() != "team=a" {
		t.Fatalf("the form does not show the link's namespace: %d", r.status)
	}
	// A short link stores the state with it.
	links := newMemLinks()
	h := serverWith(t, links)
	sr := do(t, h, shareRequest(url.Values{"manifest": {testkit.Deployment}, "nsName": {"shop"}, "nsInjection": {"enabled"}, "nsEnforce": {"baseline"}}))
	if sr.status != http.StatusSeeOther {
		t.Fatalf("share: %d", sr.status)
	}
	r = get(t, h, sr.header.Get("Location"))
	if r.status != http.StatusOK || testid(r, "ns-name").AttrOr("value", "") != "shop" ||
		r.doc.Find(`[data-testid="ns-enforce"] option[selected]`).AttrOr("value", "") != "baseline" {
		t.Fatalf("short link: %d, namespace not kept", r.status)
	}
	// A short link refuses a namespace that cannot be read, naming the field.
	sr = do(t, h, shareRequest(url.Values{"manifest": {testkit.Deployment}, "nsLabels": {"no-equals"}}))
	if sr.status != http.StatusUnprocessableEntity || !strings.Contains(sr.body, "namespace labels") {
		t.Fatalf("share with bad labels: %d", sr.status)
	}
	// The API refuses such a namespace too, naming the field (its answer's permalink would not
	// load otherwise).
	req := httptest.NewRequest(http.MethodPost, "/api/v1/inject?include=admission", strings.NewReader(
		`{"manifest":"apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n  containers:\n  - name: a\n    image: b\n","settings":{"namespace":{"name":"shop","labels":{"pod-security.kubernetes.io/enforce":"strict"}}}}`))
	req.Header.Set("Content-Type", "application/json")
	if r := do(t, newServer(t), req); r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, `"field": "namespace labels"`) {
		t.Fatalf("API with a bad enforce level: %d %s", r.status, r.body)
	}
	// So does the share API (a stored link with it would not load).
	req = httptest.NewRequest(http.MethodPost, "/api/v1/share", strings.NewReader(
		`{"manifest":"apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n  containers:\n  - name: a\n    image: b\n","settings":{"namespace":{"name":"Shop"}}}`))
	req.Header.Set("Content-Type", "application/json")
	if r := do(t, h, req); r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, `"field": "namespace name"`) {
		t.Fatalf("share API with a bad namespace name: %d %s", r.status, r.body)
	}
	// A link whose namespace the API server would refuse is a 422 naming it.
	bad := withNamespace(engine.Namespace{Name: "Shop_1"})
	if r := get(t, newServer(t), stateLink(t, bad)); r.status != http.StatusUnprocessableEntity || !strings.Contains(testid(r, "error-message").Text(), "namespace name") {
		t.Fatalf("link with a bad namespace: %d %q", r.status, testid(r, "error-message").Text())
	}
}

// TestNamespaceSettings: the settings' namespace group becomes the state's namespace; what the
// API server would refuse comes back in the form with an error naming the field.
func TestNamespaceSettings(t *testing.T) {
	h := newServer(t)
	for _, tc := range []struct {
		name string
		form url.Values
		want engine.Namespace
	}{
		{"none", url.Values{}, engine.Namespace{}},
		{"toggles", url.Values{"nsName": {" shop "}, "nsInjection": {"enabled"}, "nsRev": {"canary"}, "nsEnforce": {"restricted"}},
			engine.Namespace{Name: "shop", Labels: map[string]string{"istio-injection": "enabled", "istio.io/rev": "canary", "pod-security.kubernetes.io/enforce": "restricted"}}},
		{"lines", url.Values{"nsLabels": {"team=a\r\n\r\nexample.com/tier = web\n"}},
			engine.Namespace{Labels: map[string]string{"team": "a", "example.com/tier": "web"}}},
		{"same twice", url.Values{"nsLabels": {"istio-injection=enabled"}, "nsInjection": {"enabled"}},
			engine.Namespace{Labels: map[string]string{"istio-injection": "enabled"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.form.Set("manifest", testkit.Deployment)
			st := decodeLocation(t, postForm(t, h, tc.form))
			if d := cmp.Diff(tc.want, st.Settings.Namespace); d != "" {
				t.Fatalf("namespace (-want +got)\n%s", d)
			}
		})
	}
	for _, tc := range []struct {
		name      string
		form      url.Values
		wantError string
	}{
		{"no equals", url.Values{"nsLabels": {"team=a\nteam"}}, "line 2, namespace labels: write each label as KEY=VALUE"},
		{"bad key", url.Values{"nsLabels": {"-team=a"}}, `namespace labels: "-team" is not a label key`},
		{"bad value", url.Values{"nsLabels": {"team=a b"}}, "not a label value"},
		{"bad level", url.Values{"nsLabels": {"pod-security.kubernetes.io/warn=strict"}}, "Pod Security's levels are"},
		{"bad enforce", url.Values{"nsEnforce": {"<script>"}}, "Pod Security enforce level: Pod Security's levels are"},
		{"bad name", url.Values{"nsName": {"Shop"}}, "namespace name: Shop is not a namespace name"},
		{"bad revision", url.Values{"nsRev": {"can ary"}}, "not a label value"},
		{"conflict", url.Values{"nsLabels": {"istio-injection=disabled"}, "nsInjection": {"enabled"}}, "given twice"},
		{"too many", url.Values{"nsLabels": {strings.Repeat("a=b\n", 1) + manyLabels(70)}}, "at most 64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.form.Set("manifest", testkit.Deployment)
			r := postForm(t, h, tc.form)
			if r.status != http.StatusUnprocessableEntity {
				t.Fatalf("status %d, want 422", r.status)
			}
			if got := testid(r, "namespace-error").Text(); !strings.Contains(got, tc.wantError) {
				t.Fatalf("error %q, want %q", got, tc.wantError)
			}
			// The person's text comes back, escaped; the editor keeps the manifest.
			if got := testid(r, "ns-labels").Text(); got != strings.ReplaceAll(tc.form.Get("nsLabels"), "\r\n", "\n") {
				t.Fatalf("labels come back as %q", got)
			}
			if strings.Contains(r.body, "<script>") || !strings.Contains(testid(r, "manifest").Text(), "name: web") {
				t.Fatal("the form is not kept, or not escaped")
			}
		})
	}
}

func manyLabels(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString("k" + itoa(int64(i)) + "=v\n")
	}
	return b.String()
}

// clusterPage is the Cluster tab of a state.
func clusterPage(t *testing.T, h http.Handler, st api.State) response {
	t.Helper()
	r := get(t, h, stateLink(t, st)+"&tab=cluster")
	if r.status != http.StatusOK {
		t.Fatalf("status %d", r.status)
	}
	return r
}

func fixes(r response) []string {
	var out []string
	testid(r, "settings-fixes").Find("button").Each(func(_ int, s *goquery.Selection) { out = append(out, s.AttrOr("value", "")) })
	return out
}

// TestClusterTab: the verdicts, the trace, Pod Security's words and the webhooks of the three
// situations the lab walks through, with the fixes each one offers.
func TestClusterTab(t *testing.T) {
	h := newServer(t)
	baseline := engine.Namespace{Name: "shop", Labels: map[string]string{"istio-injection": "enabled", "pod-security.kubernetes.io/enforce": "baseline"}}
	for _, tc := range []struct {
		name               string
		st                 api.State
		injected, admitted bool
		fixes              []string
		violation          string
	}{
		{"no label", withNamespace(shop), false, true, []string{fixLabelInjection + ":istio-injection=enabled"}, ""},
		{"baseline", withNamespace(baseline), true, false, []string{fixCNI}, `container "istio-init" must not include "NET_ADMIN", "NET_RAW"`},
		{"baseline with CNI", withNamespace(baseline, cniOption), true, true, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := clusterPage(t, h, tc.st)
			docs := testid(r, "cluster-doc")
			if docs.Length() != 1 {
				t.Fatalf("%d documents", docs.Length())
			}
			if got := testid(r, "verdict-injected").Length() == 1; got != tc.injected || testid(r, "verdict-not-injected").Length() == 1 == tc.injected {
				t.Errorf("injected %v, want %v", got, tc.injected)
			}
			if got := testid(r, "verdict-admitted").Length() == 1; got != tc.admitted || testid(r, "verdict-rejected").Length() == 1 == tc.admitted {
				t.Errorf("admitted %v, want %v", got, tc.admitted)
			}
			if d := cmp.Diff(tc.fixes, fixes(r)); d != "" {
				t.Errorf("fixes (-want +got)\n%s", d)
			}
			if got := testid(r, "cluster-violations").Text(); !strings.Contains(got, tc.violation) || (tc.violation == "") != (got == "") {
				t.Errorf("violations %q, want %q", got, tc.violation)
			}
			// The admitted Pod's lifecycle, with istio-proxy when it was injected; none for a
			// rejected Pod.
			lc := testid(r, "cluster-lifecycle")
			if (lc.Length() == 1) != tc.admitted {
				t.Errorf("lifecycle shown %v, want %v (admitted)", lc.Length() == 1, tc.admitted)
			}
			if tc.admitted && strings.Contains(lc.Text(), "istio-proxy") != tc.injected {
				t.Errorf("the admitted Pod's lifecycle mentions istio-proxy: %v, want %v", strings.Contains(lc.Text(), "istio-proxy"), tc.injected)
			}
			// The trace starts with the namespace, in the cluster's order, in words.
			first := testid(r, "cluster-trace").Find("li").First()
			if first.AttrOr("data-rule", "") != "namespace" || !strings.Contains(first.Text(), "namespace shop") {
				t.Errorf("first rule %q %q", first.AttrOr("data-rule", ""), first.Text())
			}
			if got := testid(r, "cluster-pod").Text(); got != "web-<hash>-" || !strings.Contains(testid(r, "cluster-pod-note").Text(), "placeholder") {
				t.Errorf("pod %q, note %q", got, testid(r, "cluster-pod-note").Text())
			}
			called := r.doc.Find(`[data-testid="cluster-webhook"][data-called="true"]`).Length()
			if (called > 0) != tc.injected {
				t.Errorf("%d webhooks called, injected %v", called, tc.injected)
			}
			if testid(r, "cluster-webhooks").Find("th[scope=col]").Length() != 5 {
				t.Error("the webhooks table has no column headers")
			}
		})
	}
}

// TestClusterAmbient: the Cluster tab says whether the admitted Pod joins ambient, by which rule,
// and what happens at run time (code quoted as code), in the page's language; nothing when the
// installation has no ambient and nothing asks for it.
func TestClusterAmbient(t *testing.T) {
	h := newServer(t)
	ambientNS := engine.Namespace{Name: "shop", Labels: map[string]string{"istio.io/dataplane-mode": "ambient"}}
	r := clusterPage(t, h, withNamespace(ambientNS, "profile=ambient"))
	a := testid(r, "cluster-ambient")
	if a.AttrOr("data-joins", "") != "true" || a.AttrOr("data-rule", "") != "selector" || !strings.Contains(a.Text(), "rule 2 of its enablementSelectors") {
		t.Fatalf("ambient namespace, ambient profile: %q joins=%q rule=%q", a.Text(), a.AttrOr("data-joins", ""), a.AttrOr("data-rule", ""))
	}
	if a.Find("code").First().Text() != "istio.io/dataplane-mode notin (none)" {
		t.Errorf("the selector is not shown as code: %q", a.Find("code").First().Text())
	}
	if n := testid(r, "cluster-ambient-runtime").Find("li").Length(); n != 3 {
		t.Errorf("%d run-time facts, want 3", n)
	}
	if testid(r, "verdict-not-injected").Length() != 1 || testid(r, "verdict-admitted").Length() != 1 {
		t.Error("the Pod of an ambient namespace is not shown admitted as written")
	}
	// A Pod that joins ambient is not offered the injection label, which would take it out.
	if got := fixes(r); len(got) != 0 {
		t.Errorf("fixes offered to a Pod that joins ambient: %q", got)
	}
	r = clusterPage(t, h, withNamespace(ambientNS))
	if a := testid(r, "cluster-ambient"); a.AttrOr("data-rule", "") != "not-installed" || testid(r, "cluster-ambient-runtime").Length() != 0 {
		t.Errorf("the default profile: rule %q", a.AttrOr("data-rule", ""))
	}
	if got := fixes(r); !slices.Contains(got, fixLabelInjection+":istio-injection=enabled") {
		t.Errorf("without ambient installed the injection label is the way into the mesh: fixes %q", got)
	}
	if r = clusterPage(t, h, withNamespace(shop)); testid(r, "cluster-ambient").Length() != 0 {
		t.Error("an ambient answer without ambient installed or asked for")
	}
	ja := get(t, h, stateLink(t, withNamespace(ambientNS, "profile=ambient"))+"&tab=cluster&lang=ja")
	if got := testid(ja, "cluster-ambient").Text(); !strings.Contains(got, "アンビエントに参加します") {
		t.Errorf("ja: %q", got)
	}
	// The API answers the same in its admission part.
	st := withNamespace(ambientNS, "profile=ambient")
	status, body, parts := postAPI(t, h, "?include=admission", api.InjectRequest{Manifest: st.Manifest, Settings: st.Settings})
	var adm []wording.Admission
	if status != http.StatusOK || json.Unmarshal(parts["admission"], &adm) != nil || len(adm) != 1 || adm[0].Ambient == nil ||
		!adm[0].Ambient.Joins || adm[0].Ambient.Selector != 2 || len(adm[0].Ambient.RunTime) != 3 {
		t.Errorf("API: %d %.600s", status, body)
	}
}

// TestClusterShowsTheFirstDocuments: a large manifest's Cluster tab shows the first documents,
// as the other tabs, with the link that shows more.
func TestClusterShowsTheFirstDocuments(t *testing.T) {
	h := newServer(t)
	st := withNamespace(shop)
	st.Manifest = strings.Repeat(testkit.Deployment+"---\n", 3)
	r := get(t, h, stateLink(t, st)+"&tab=cluster&limit=2")
	if n := testid(r, "cluster-doc").Length(); n != 2 || !strings.Contains(testid(r, "cluster-more").Text(), "1 more document is not shown") {
		t.Fatalf("%d documents shown, more: %q", n, testid(r, "cluster-more").Text())
	}
	more := testid(r, "cluster-more").Find("a").AttrOr("href", "")
	if r := get(t, h, more); testid(r, "cluster-doc").Length() != 3 || testid(r, "cluster-more").Length() != 0 {
		t.Fatalf("show more (%s): %d documents", more, testid(r, "cluster-doc").Length())
	}
}

// TestClusterVersion: the Cluster tab runs at the settings' Kubernetes version in every mode, and
// the form keeps the version outside webhook mode.
func TestClusterVersion(t *testing.T) {
	h := newServer(t)
	st := withNamespace(shop)
	st.Settings.KubernetesVersion = "1.30"
	if r := clusterPage(t, h, st); !strings.Contains(testid(r, "cluster").Text(), "on Kubernetes 1.30") {
		t.Fatal("the Cluster tab does not say the settings' version")
	}
	got := decodeLocation(t, postForm(t, h, url.Values{"manifest": {testkit.Deployment}, "mode": {"kube-inject"}, "kubernetesVersion": {"1.30"}}))
	if got.Settings.KubernetesVersion != "1.30" {
		t.Fatalf("kube-inject mode drops the version: %+v", got.Settings)
	}
}

// TestClusterIsLazy: a page on another tab does not compute the admission: the Cluster panel is
// empty (the script fetches it when chosen), and so is the batch table once a namespace is set.
func TestClusterIsLazy(t *testing.T) {
	newServer(t)
	ce := &countingEngine{Engine: eng}
	h := New(slog.New(slog.NewTextHandler(io.Discard, nil)), func() Engine { return ce }, testConfig(Config{}))
	for _, tab := range []string{"", "diff", "lifecycle", "pitfalls", "batch"} {
		st := withNamespace(shop)
		if tab == "batch" {
			st.Settings.Namespace = engine.Namespace{} // the batch tab admits only with a namespace
		}
		if r := get(t, h, stateLink(t, st)+"&tab="+tab); r.status != http.StatusOK || ce.admissions.Load() != 0 {
			t.Fatalf("tab %q: %d, %d admissions", tab, r.status, ce.admissions.Load())
		}
	}
	for i, tab := range []string{"cluster", "batch"} {
		if r := get(t, h, stateLink(t, withNamespace(shop))+"&tab="+tab); r.status != http.StatusOK || ce.admissions.Load() != int32(i+1) {
			t.Fatalf("tab %q: %d, %d admissions", tab, r.status, ce.admissions.Load())
		}
	}
	r := get(t, h, stateLink(t, withNamespace(shop)))
	if p := testid(r, "panel-cluster"); p.AttrOr("data-empty", "") != "1" || testid(r, "cluster-doc").Length() != 0 {
		t.Fatal("the Cluster panel is rendered on the diff tab")
	}
	if testid(r, "panel-batch").AttrOr("data-empty", "") != "1" {
		t.Fatal("the batch table (with its admission column) is rendered on the diff tab")
	}
	// Without a namespace the batch table has no admission column and stays on every page.
	r = get(t, h, stateLink(t, withNamespace(engine.Namespace{})))
	if testid(r, "panel-batch").AttrOr("data-empty", "") == "1" || testid(r, "batch-row").Length() != 1 {
		t.Fatal("the batch table is lazy without a namespace")
	}
	if r.doc.Find(`[data-col="admission"]`).Length() != 0 {
		t.Fatal("an admission column without a namespace")
	}
}

// countingEngine counts the admissions run on it (each asks for the workloads once), and the
// timelines asked of it (one per page rendered).
type countingEngine struct {
	Engine
	admissions, timelines atomic.Int32
}

func (c *countingEngine) Timeline(ctx context.Context, manifest []byte, steps []input.Step, s engine.Settings) (*engine.Timeline, error) {
	c.timelines.Add(1)
	return c.Engine.Timeline(ctx, manifest, steps, s)
}

func (c *countingEngine) Workloads(ctx context.Context, manifest []byte, steps []input.Step, s engine.Settings) (*engine.Install, []engine.Workload, error) {
	c.admissions.Add(1)
	return c.Engine.Workloads(ctx, manifest, steps, s)
}

// TestBatchAdmissionColumn: with a namespace set, the batch tab has each workload's admission.
func TestBatchAdmissionColumn(t *testing.T) {
	h := newServer(t)
	baseline := engine.Namespace{Name: "shop", Labels: map[string]string{"istio-injection": "enabled", "pod-security.kubernetes.io/enforce": "baseline"}}
	for _, tc := range []struct {
		ns   engine.Namespace
		want string
	}{
		{shop, "not injected in shop, admitted"},
		{baseline, "injected in shop, rejected under baseline"},
	} {
		st := withNamespace(tc.ns)
		st.Manifest = testkit.Deployment + "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: svc\nspec:\n  ports:\n  - port: 80\n"
		r := get(t, h, stateLink(t, st)+"&tab=batch")
		if r.doc.Find(`th[data-col="admission"]`).Length() != 1 {
			t.Fatalf("%v: no admission column", tc.ns)
		}
		var cells []string
		testid(r, "batch-row").Each(func(_ int, s *goquery.Selection) {
			cells = append(cells, strings.TrimSpace(s.Find("td").Last().Text()))
		})
		if len(cells) < 1 || !strings.HasPrefix(cells[0], tc.want) {
			t.Fatalf("%v: cells %q, want %q first", tc.ns, cells, tc.want)
		}
	}
}

// TestSettingsFixes: which fixes the admission's results call for, each on a case that trips it
// and cases that do not.
func TestSettingsFixes(t *testing.T) {
	nsOnly := admission.WebhookMatch{ObjectMatch: true, NamespaceSelector: "istio-injection in (enabled)"}
	revOnly := admission.WebhookMatch{ObjectMatch: true, NamespaceSelector: "!istio-injection,istio.io/rev in (canary)"}
	podOptOut := admission.WebhookMatch{NamespaceMatch: true}
	called := admission.WebhookMatch{NamespaceMatch: true, ObjectMatch: true, Called: true}
	initCaps := `violates PodSecurity "baseline:latest": non-default capabilities (container "istio-init" must not include "NET_ADMIN", "NET_RAW" in securityContext.capabilities.add)`
	other := `violates PodSecurity "baseline:latest": hostPath volumes (volume "x")`
	istioSeccomp := `violates PodSecurity "restricted:latest": runAsNonRoot != true (pod or container "web" must set securityContext.runAsNonRoot=true), seccompProfile (pod or containers "istio-validation", "istio-proxy", "web" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`
	appSeccomp := `violates PodSecurity "restricted:latest": seccompProfile (pod or container "web" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"), unrestricted capabilities (container "istio-proxy" must set securityContext.capabilities.drop=["ALL"])`
	for _, tc := range []struct {
		name string
		r    admission.Result
		set  engine.Settings
		want []string
	}{
		{"namespace unlabelled", admission.Result{Admitted: true, Webhooks: []admission.WebhookMatch{podOptOut, nsOnly}}, engine.Settings{}, []string{fixLabelInjection + ":istio-injection=enabled"}},
		{"a revision's namespace unlabelled", admission.Result{Admitted: true, Webhooks: []admission.WebhookMatch{revOnly}}, engine.Settings{}, []string{fixLabelInjection + ":istio.io/rev=canary"}},
		{"a revision's, labelled for the default", admission.Result{Admitted: true, Webhooks: []admission.WebhookMatch{revOnly}},
			engine.Settings{Namespace: engine.Namespace{Labels: map[string]string{"istio-injection": "enabled"}}}, nil},
		{"a webhook was called", admission.Result{Admitted: true, Webhooks: []admission.WebhookMatch{nsOnly, called}}, engine.Settings{}, nil},
		{"the pod opts out", admission.Result{Admitted: true, Webhooks: []admission.WebhookMatch{podOptOut}}, engine.Settings{}, nil},
		{"already labelled", admission.Result{Admitted: true, Webhooks: []admission.WebhookMatch{nsOnly}},
			engine.Settings{Namespace: engine.Namespace{Labels: map[string]string{"istio-injection": "enabled"}}}, nil},
		{"not a workload", admission.Result{Error: "Service is not a kind that makes Pods", Webhooks: []admission.WebhookMatch{nsOnly}}, engine.Settings{}, nil},
		{"istio-init's capabilities", admission.Result{Injected: true, Webhooks: []admission.WebhookMatch{called}, Violations: []string{initCaps}}, engine.Settings{}, []string{fixCNI}},
		{"another violation", admission.Result{Injected: true, Webhooks: []admission.WebhookMatch{called}, Violations: []string{other}}, engine.Settings{}, nil},
		{"CNI already on", admission.Result{Injected: true, Webhooks: []admission.WebhookMatch{called}, Violations: []string{initCaps}},
			engine.Settings{Install: engine.InstallOptions{Set: []string{cniOption}}}, nil},
		{"asks with the annotation", admission.Result{Admitted: true, Pod: &corev1.Pod{}, Webhooks: []admission.WebhookMatch{podOptOut}, Trace: []admission.Step{{ID: "not-injected-no-webhook"}, {ID: "hint-annotation-not-label"}}}, engine.Settings{}, []string{fixLabel}},
		{"asks with the annotation, a revision's webhook", admission.Result{Admitted: true, Pod: &corev1.Pod{},
			Webhooks: []admission.WebhookMatch{{NamespaceMatch: true, ObjectSelector: "istio.io/rev in (canary),sidecar.istio.io/inject notin (false)"}},
			Trace:    []admission.Step{{ID: "not-injected-no-webhook"}, {ID: "hint-annotation-not-label"}}}, engine.Settings{}, nil},
		{"not injected, no annotation", admission.Result{Admitted: true, Webhooks: []admission.WebhookMatch{podOptOut}, Trace: []admission.Step{{ID: "not-injected-no-webhook"}}}, engine.Settings{}, nil},
		{"istio-proxy's seccomp profile", admission.Result{Injected: true, Webhooks: []admission.WebhookMatch{called}, Violations: []string{istioSeccomp}}, engine.Settings{}, []string{fixSeccomp}},
		{"only the app's seccomp profile", admission.Result{Injected: true, Webhooks: []admission.WebhookMatch{called}, Violations: []string{appSeccomp}}, engine.Settings{}, nil},
		{"seccomp already set", admission.Result{Injected: true, Webhooks: []admission.WebhookMatch{called}, Violations: []string{istioSeccomp}},
			engine.Settings{Install: engine.InstallOptions{Set: []string{seccompOption}}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, f := range settingsFixes([]admission.Result{tc.r}, tc.set, func(string) bool { return true }) {
				got = append(got, f.Value)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Fatalf("fixes (-want +got)\n%s", d)
			}
		})
	}
}

// TestSettingsFixButtons: a fix button posts the settings changed (POST, 303, a link of the new
// state; or, for the page's script, the fragment with the settings' fields changed).
func TestSettingsFixButtons(t *testing.T) {
	h := newServer(t)
	// The label instead of the annotation: the manifest changes, and the Pod is injected.
	annotated := strings.Replace(testkit.Deployment, "    metadata:\n      labels:\n", "    metadata:\n      annotations:\n        sidecar.istio.io/inject: \"true\"\n      labels:\n", 1)
	if annotated == testkit.Deployment {
		t.Fatal("the test manifest has no pod template labels to annotate beside")
	}
	lf := url.Values{"manifest": {annotated}, "nsName": {"shop"}, "clusterfix": {fixLabel}}
	lst := decodeLocation(t, postForm(t, h, lf))
	if !strings.Contains(lst.Manifest, "sidecar.istio.io/inject: \"true\"") || strings.Contains(lst.Manifest, "annotations") {
		t.Fatalf("the manifest after the label fix:\n%s", lst.Manifest)
	}
	if r := clusterPage(t, h, lst); testid(r, "verdict-injected").Length() != 1 {
		t.Fatal("the Pod is not injected after the label fix")
	}
	lf.Set("manifest", testkit.Deployment)
	if r := postForm(t, h, lf); r.status != http.StatusUnprocessableEntity {
		t.Fatalf("the label fix with nothing to move: %d", r.status)
	}

	form := url.Values{"manifest": {testkit.Deployment}, "nsName": {"shop"}, "nsEnforce": {"baseline"}, "set": {"values.global.proxy.holdApplicationUntilProxyStarts=true"}, "clusterfix": {fixLabelInjection}}
	st := decodeLocation(t, postForm(t, h, form))
	want := engine.Namespace{Name: "shop", Labels: map[string]string{"istio-injection": "enabled", "pod-security.kubernetes.io/enforce": "baseline"}}
	if d := cmp.Diff(want, st.Settings.Namespace); d != "" {
		t.Fatalf("namespace after the label fix (-want +got)\n%s", d)
	}
	form.Set("clusterfix", fixCNI)
	form.Set("nsInjection", "enabled")
	st = decodeLocation(t, postForm(t, h, form))
	if d := cmp.Diff([]string{"values.global.proxy.holdApplicationUntilProxyStarts=true", cniOption}, st.Settings.Install.Set); d != "" {
		t.Fatalf("install options after the CNI fix (-want +got)\n%s", d)
	}
	// The page's script gets the Cluster tab with the settings' new fields.
	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set(partialHeader, "1")
	r := do(t, h, req)
	if r.status != http.StatusOK || !strings.Contains(testid(r, "install-set").Text(), cniOption) || testid(r, "verdict-admitted").Length() != 1 {
		t.Fatalf("fragment: %d, set %q", r.status, testid(r, "install-set").Text())
	}
	form.Set("clusterfix", "rm -rf")
	if r := postForm(t, h, form); r.status != http.StatusBadRequest {
		t.Fatalf("an unknown fix: %d", r.status)
	}
}

// TestNamespaceForm: a namespace's labels are split between the toggles and the lines, and
// read back the same.
func TestNamespaceForm(t *testing.T) {
	ns := engine.Namespace{Name: "shop", Labels: map[string]string{"istio-injection": "enabled", "istio.io/rev": "canary",
		"pod-security.kubernetes.io/enforce": "baseline", "pod-security.kubernetes.io/warn": "restricted", "team": "a"}}
	nf := namespaceForm(ns)
	want := web.NamespaceForm{Name: "shop", Injection: true, Rev: "canary", Enforce: "baseline",
		Labels: "pod-security.kubernetes.io/warn=restricted\nteam=a", Enforces: enforceOptions("baseline")}
	if d := cmp.Diff(want, nf); d != "" {
		t.Fatalf("form (-want +got)\n%s", d)
	}
	f := url.Values{"nsName": {nf.Name}, "nsInjection": {"enabled"}, "nsRev": {nf.Rev}, "nsEnforce": {nf.Enforce}, "nsLabels": {nf.Labels}}
	back, err := readNamespace(f)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(ns, back); d != "" {
		t.Fatalf("read back (-want +got)\n%s", d)
	}
	// istio-injection=disabled is no toggle: it stays a line.
	if nf := namespaceForm(engine.Namespace{Labels: map[string]string{"istio-injection": "disabled"}}); nf.Injection || nf.Labels != "istio-injection=disabled" {
		t.Fatalf("disabled: %+v", nf)
	}
}

// TestClusterHeaderNamespace: the Cluster tab's header names the namespace the Pods are created
// in: the one the documents name when they all name the same, else the settings' (default when
// unset). Before: "default" above documents that all ran in shop.
func TestClusterHeaderNamespace(t *testing.T) {
	h := newServer(t)
	inShop := strings.Replace(testkit.Deployment, "metadata:\n  name: web\n", "metadata:\n  name: web\n  namespace: shop\n", 1)
	inWeb := strings.Replace(inShop, "namespace: shop", "namespace: web", 1)
	for _, c := range []struct {
		name, manifest, want string
	}{
		{"documents in shop, settings unset", inShop, "shop (no labels) — the documents name it; the settings' namespace is default"},
		{"no namespace named, settings unset", testkit.Deployment, "default"},
		{"documents in two namespaces", inShop + "---\n" + inWeb, "default"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := clusterPage(t, h, api.State{Manifest: c.manifest})
			got := testid(r, "cluster-namespace").Text()
			if !strings.HasPrefix(got, c.want) {
				t.Errorf("the header names %q, want %q", got, c.want)
			}
		})
	}
}
