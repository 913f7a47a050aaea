package handlers

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/clustermesh"
	"github.com/sidecarlab/sidecarlab/clustermesh/clustermeshtest"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

// shopLabels are the labels of namespace shop in clusterServer's cluster: it selects revision
// canary, and Pod Security enforces baseline.
var shopLabels = map[string]string{"istio.io/rev": "canary", "pod-security.kubernetes.io/enforce": "baseline"}

// clusterServer is a server that reads a cluster (serve --cluster-read) holding two revisions
// (clustermeshtest.Installed) and namespace shop; forbid, when set, refuses the client's
// requests of that verb and resource.
func clusterServer(t *testing.T, forbid ...string) http.Handler {
	t.Helper()
	newServer(t)
	objs := append(clustermeshtest.Installed(t, eng), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop", Labels: shopLabels}})
	client := fake.NewClientset(objs...)
	for i := 0; i+1 < len(forbid); i += 2 {
		resource := forbid[i+1]
		client.PrependReactor(forbid[i], resource, func(k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: resource}, "", errors.New("RBAC says no"))
		})
	}
	cluster := &clustermesh.Cached{Reader: clustermesh.Reader{Client: client}, TTL: time.Minute}
	return New(testLogger(), func() Engine { return eng }, testConfig(Config{Cluster: cluster}))
}

// options are a select's options' values and texts.
func options(r response, testID string) (values, texts []string) {
	testid(r, testID).Find("option").Each(func(_ int, o *goquery.Selection) {
		values = append(values, o.AttrOr("value", ""))
		texts = append(texts, o.Text())
	})
	return values, texts
}

// TestFormClusterMesh: a server that reads its cluster offers the cluster's revisions (with
// their tags) and namespaces (with their labels) in the settings; choosing a revision injects
// with its mesh, read into the link (compacted: its values, mesh config and webhooks), and
// choosing a namespace sets the Cluster tab's namespace to its name and labels. A server that
// reads none offers nothing and refuses both.
func TestFormClusterMesh(t *testing.T) {
	h := clusterServer(t)
	page := get(t, h, "/")
	revs, revTexts := options(page, "cluster-mesh")
	nss, nsTexts := options(page, "cluster-namespace")
	if strings.Join(revs, ",") != ",canary,default" || revTexts[2] != "default (tags: prod)" {
		t.Fatalf("revisions %q %q", revs, revTexts)
	}
	if strings.Join(nss, ",") != ",shop" || !strings.Contains(nsTexts[1], "shop (istio.io/rev=canary, pod-security.kubernetes.io/enforce=baseline)") {
		t.Fatalf("namespaces %q %q", nss, nsTexts)
	}
	if testid(get(t, newServer(t), "/"), "cluster-mesh").Length() != 0 {
		t.Fatal("a server that reads no cluster offers its mesh")
	}

	st := decodeLocation(t, postForm(t, h, url.Values{"manifest": {testkit.Deployment}, "clusterMesh": {"canary"}, "clusterNamespace": {"shop"}}))
	in := st.Settings.Install
	if in.Revision != "canary" || !in.Mesh.IstioTemplates || !strings.Contains(in.Mesh.Webhooks, "istio-sidecar-injector-canary") || strings.Contains(in.Mesh.Webhooks, "name: istio-sidecar-injector\n") {
		t.Fatalf("revision %q, compacted %v, webhooks:\n%.300s", in.Revision, in.Mesh.IstioTemplates, in.Mesh.Webhooks)
	}
	if st.Settings.Namespace.Name != "shop" || st.Settings.Namespace.Labels["istio.io/rev"] != "canary" || st.Settings.Namespace.Labels["pod-security.kubernetes.io/enforce"] != "baseline" {
		t.Fatalf("namespace %+v", st.Settings.Namespace)
	}
	// Nothing of it reads as a secret (the cluster's CA bundle is left out): the link warns of none.
	if found := scanSettings(st.Settings); len(found) > 0 {
		t.Fatalf("the cluster's mesh reads as secrets: %+v", found)
	}
	linked := get(t, h, stateLink(t, st))
	if !strings.Contains(linked.body, "cpu: "+clustermeshtest.CanaryCPU) || !strings.Contains(strings.Join(strings.Fields(testid(linked, "install-mesh-used").Text()), " "), "revision canary") {
		t.Fatal("the link does not inject with revision canary's mesh")
	}
	// A tag is its revision's mesh.
	if st := decodeLocation(t, postForm(t, h, url.Values{"manifest": {testkit.Deployment}, "clusterMesh": {"prod"}})); st.Settings.Install.Revision != "" || st.Settings.Install.Mesh.IsZero() {
		t.Fatalf("tag prod: %+v", st.Settings.Install)
	}
	for _, c := range []struct {
		h      http.Handler
		field  string
		status int
		want   string
	}{
		{h, "clusterMesh=nope", http.StatusUnprocessableEntity, `no revision or revision tag &#34;nope&#34;`},
		{h, "clusterNamespace=gone", http.StatusUnprocessableEntity, "get namespaces gone found nothing"},
		{newServer(t), "clusterMesh=canary", http.StatusNotFound, "This server does not read its cluster"},
		{newServer(t), "clusterNamespace=shop", http.StatusNotFound, "This server does not read its cluster"},
		{clusterServer(t, "get", "configmaps"), "clusterMesh=canary", http.StatusBadGateway, "get configmaps istio-sidecar-injector-canary in namespace istio-system was refused"},
	} {
		k, v, _ := strings.Cut(c.field, "=")
		r := postForm(t, c.h, url.Values{"manifest": {testkit.Deployment}, k: {v}})
		if r.status != c.status || !strings.Contains(r.body, c.want) {
			t.Errorf("%s: %d, want %d with %q", c.field, r.status, c.status, c.want)
		}
	}
	// A cluster that cannot be listed is said where the choices would be; the page still works.
	r := get(t, clusterServer(t, "list", "namespaces"), "/")
	if r.status != http.StatusOK || !strings.Contains(testid(r, "cluster-error").Text(), "list namespaces was refused") || testid(r, "cluster-mesh").Length() != 0 {
		t.Fatalf("%d: %q", r.status, testid(r, "cluster-error").Text())
	}
}

// TestClusterUnreachable: an API server that never answers is said as "cannot reach the
// cluster's API server" on the page, the form's answer and the API, "refused" only when the
// connection was, and never with its address (which the server's log keeps); a refusal by the
// API server itself still names the request.
func TestClusterUnreachable(t *testing.T) {
	newServer(t)
	const addr = "10.0.0.9:6443"
	dial := func(err error) error {
		return &url.Error{Op: "Get", URL: "https://" + addr + "/api/v1/namespaces",
			Err: &net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(10, 0, 0, 9), Port: 6443}, Err: err}}
	}
	for _, c := range []struct {
		name    string
		err     error
		says    string
		refused bool
	}{
		{"connection refused", dial(os.NewSyscallError("connect", syscall.ECONNREFUSED)), "cannot reach the cluster's API server: the connection was refused", true},
		{"no route", dial(os.NewSyscallError("connect", syscall.EHOSTUNREACH)), "cannot reach the cluster's API server", false},
		{"a timeout", dial(os.ErrDeadlineExceeded), "cannot reach the cluster's API server", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			client := fake.NewClientset(clustermeshtest.Installed(t, eng)...)
			client.PrependReactor("*", "*", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, c.err })
			var log bytes.Buffer
			cluster := &clustermesh.Cached{Reader: clustermesh.Reader{Client: client}, TTL: time.Minute}
			h := New(slog.New(slog.NewTextHandler(&log, nil)), func() Engine { return eng }, testConfig(Config{Cluster: cluster}))
			page := testid(get(t, h, "/"), "cluster-error").Text()
			form := postForm(t, h, url.Values{"manifest": {testkit.Deployment}, "clusterMesh": {"canary"}})
			api := get(t, h, "/api/v1/cluster")
			for what, text := range map[string]string{"the page": page, "the form's answer": testid(form, "error-message").Text(), "the API": api.body} {
				if !strings.Contains(text, c.says) {
					t.Errorf("%s does not say %q: %.400s", what, c.says, text)
				}
				if strings.Contains(text, "refused") != c.refused {
					t.Errorf("%s says refused (%v, want %v): %.400s", what, !c.refused, c.refused, text)
				}
				for _, leak := range []string{"10.0.0.9", "6443", "dial"} {
					if strings.Contains(text, leak) {
						t.Errorf("%s shows %q: %.400s", what, leak, text)
					}
				}
			}
			for _, leak := range []string{"10.0.0.9", "6443"} {
				if strings.Contains(form.body, leak) {
					t.Errorf("the form's answer shows %q", leak)
				}
			}
			if form.status != http.StatusBadGateway || api.status != http.StatusBadGateway {
				t.Errorf("form %d, API %d, want 502", form.status, api.status)
			}
			if !strings.Contains(log.String(), addr) {
				t.Errorf("the log does not keep the address:\n%s", log.String())
			}
		})
	}
}

// TestAPIClusterMesh: GET /api/v1/cluster lists what clusterMesh and clusterNamespace may name;
// an injection with them injects with that revision's mesh and admits into that namespace
// through that revision's webhooks. Each is refused with its twin, and by a server that reads
// no cluster.
func TestAPIClusterMesh(t *testing.T) {
	h := clusterServer(t)
	r := get(t, h, "/api/v1/cluster")
	var cat api.Cluster
	if err := json.Unmarshal([]byte(r.body), &cat); err != nil || r.status != http.StatusOK {
		t.Fatalf("%d %s: %v", r.status, r.body, err)
	}
	if len(cat.Revisions) != 2 || cat.Revisions[1].Name != "default" || strings.Join(cat.Revisions[1].Tags, ",") != "prod" || len(cat.Namespaces) != 1 || cat.Namespaces[0].Labels["istio.io/rev"] != "canary" {
		t.Fatalf("%+v", cat)
	}
	status, body, top := postAPI(t, h, "?include=output,admission", api.InjectRequest{Manifest: testkit.Deployment, ClusterMesh: "canary", ClusterNamespace: "shop"})
	if status != http.StatusOK {
		t.Fatalf("%d: %s", status, body)
	}
	var out string
	var mesh api.Mesh
	var adm []struct{ Injected, Admitted bool }
	_ = json.Unmarshal(top["output"], &out)
	_ = json.Unmarshal(top["mesh"], &mesh)
	_ = json.Unmarshal(top["admission"], &adm)
	if !strings.Contains(out, "cpu: "+clustermeshtest.CanaryCPU) || mesh.Revision != "canary" || mesh.Templates != "istio" {
		t.Fatalf("mesh %+v; output:\n%.400s", mesh, out)
	}
	if len(adm) != 1 || !adm[0].Injected {
		t.Fatalf("admission into shop through canary's webhooks: %+v", adm)
	}
	for _, c := range []struct {
		h      http.Handler
		req    api.InjectRequest
		status int
		want   string
	}{
		{h, api.InjectRequest{Manifest: testkit.Deployment, ClusterMesh: "canary", MeshConfigMaps: canaryConfigMaps(t, nil)}, http.StatusBadRequest, "not both"},
		{h, api.InjectRequest{Manifest: testkit.Deployment, ClusterNamespace: "shop", Settings: engine.Settings{Namespace: engine.Namespace{Name: "shop"}}}, http.StatusBadRequest, "not both"},
		{newServer(t), api.InjectRequest{Manifest: testkit.Deployment, ClusterMesh: "canary"}, http.StatusNotFound, "serve --cluster-read"},
		{clusterServer(t, "list", "mutatingwebhookconfigurations"), api.InjectRequest{Manifest: testkit.Deployment, ClusterMesh: "canary"}, http.StatusBadGateway, "list mutatingwebhookconfigurations was refused"},
	} {
		if status, body, _ := postAPI(t, c.h, "", c.req); status != c.status || !strings.Contains(body, c.want) {
			t.Errorf("%+v: %d %s, want %d with %q", c.req, status, body, c.status, c.want)
		}
	}
	if r := get(t, newServer(t), "/api/v1/cluster"); r.status != http.StatusNotFound {
		t.Fatalf("no cluster: %d %s", r.status, r.body)
	}
}
