package clustermesh

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"
	"sigs.k8s.io/yaml"

	"github.com/sidecarlab/sidecarlab/clustermesh/clustermeshtest"
	"github.com/sidecarlab/sidecarlab/engine"
)

// mustEngine is an engine that renders the install options the objects are made of.
func mustEngine(t *testing.T) *engine.Engine {
	t.Helper()
	e, err := engine.New(context.Background(), engine.Options{InstallPolicy: engine.TrustedInstalls()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

func TestRead(t *testing.T) {
	objs := clustermeshtest.Installed(t, mustEngine(t))
	for _, ns := range []struct {
		name   string
		labels map[string]string
	}{
		{"enabled", map[string]string{"istio-injection": "enabled"}},
		{"tagged", map[string]string{"istio.io/rev": "prod"}},
		{"canary", map[string]string{"istio.io/rev": "canary"}},
		{"both", map[string]string{"istio-injection": "enabled", "istio.io/rev": "canary"}},
		{"plain", nil},
		{"unknown", map[string]string{"istio.io/rev": "nope"}},
	} {
		objs = append(objs, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns.name, Labels: ns.labels}})
	}
	r := Reader{Client: fake.NewClientset(objs...)}
	for _, c := range []struct {
		namespace, revision string
		want                string // the revision read, or the error's text
		via                 Choice
	}{
		{namespace: "enabled", want: "", via: Choice{By: "webhook", Namespace: "enabled", Webhook: "namespace.sidecar-injector.istio.io", Configuration: "istio-sidecar-injector"}},
		{namespace: "tagged", want: "", via: Choice{By: "webhook", Namespace: "tagged", Webhook: "rev.namespace.sidecar-injector.istio.io", Configuration: "istio-revision-tag-prod"}},
		{namespace: "canary", want: "canary", via: Choice{By: "webhook", Namespace: "canary", Webhook: "rev.namespace.sidecar-injector.istio.io", Configuration: "istio-sidecar-injector-canary"}},
		{namespace: "both", want: "", via: Choice{By: "webhook", Namespace: "both", Webhook: "namespace.sidecar-injector.istio.io", Configuration: "istio-sidecar-injector"}},
		{namespace: "plain", want: "", via: Choice{By: "default"}},
		{namespace: "unknown", want: "", via: Choice{By: "default"}},
		{revision: "prod", want: "", via: Choice{By: "tag", Tag: "prod", Configuration: "istio-revision-tag-prod"}},
		{revision: "canary", want: "canary", via: Choice{By: "revision", Revision: "canary"}},
		{revision: "default", want: "", via: Choice{By: "revision", Revision: "default"}},
		{want: "", via: Choice{By: "webhook", Webhook: "namespace.sidecar-injector.istio.io", Configuration: "istio-sidecar-injector"}},
		{revision: "nope", want: `no revision or revision tag "nope"; the cluster's Istio webhooks are of revisions canary, default`},
		{namespace: "missing", want: `get namespaces missing found nothing`},
	} {
		m, err := r.Read(context.Background(), c.namespace, c.revision)
		if err != nil {
			if !strings.Contains(err.Error(), c.want) || c.via != (Choice{}) {
				t.Errorf("%s/%s: %v, want %q", c.namespace, c.revision, err, c.want)
			}
			continue
		}
		if m.Revision != c.want || m.Via != c.via {
			t.Errorf("%s/%s: revision %q via %+v, want %q via %+v", c.namespace, c.revision, m.Revision, m.Via, c.want, c.via)
		}
		// The webhooks are the revision's own (and its tags'), and its ConfigMaps' data.
		for _, doc := range strings.Split(m.Own.Webhooks, "\n---\n") {
			var wc admissionregistrationv1.MutatingWebhookConfiguration
			if err := yaml.Unmarshal([]byte(doc), &wc); err != nil {
				t.Fatal(err)
			}
			if got := engine.RevisionOf(wc.Labels["istio.io/rev"]); got != m.Revision {
				t.Errorf("%s/%s: webhook configuration %s of revision %q", c.namespace, c.revision, wc.Name, got)
			}
		}
		// Without the cluster's bookkeeping and CA bundle.
		for _, noise := range []string{"caBundle", "resourceVersion", "uid:", "creationTimestamp"} {
			if strings.Contains(m.Own.Webhooks, noise) {
				t.Errorf("%s/%s: the webhooks keep %s", c.namespace, c.revision, noise)
			}
		}
		if !strings.Contains(m.Own.Values, `"revision": "`+m.Revision+`"`) || m.Own.InjectorConfig == "" || m.Own.MeshConfig == "" {
			t.Errorf("%s/%s: not revision %q's ConfigMaps", c.namespace, c.revision, m.Revision)
		}
	}
}

// TestCatalog: the revisions (each with its tags) and the namespaces with their labels, the
// first MaxNamespaces of a cluster with more.
func TestCatalog(t *testing.T) {
	objs := clustermeshtest.Installed(t, mustEngine(t))
	objs = append(objs, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop", Labels: map[string]string{"istio.io/rev": "canary"}}})
	cat, err := Reader{Client: fake.NewClientset(objs...)}.Catalog(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []Revision{{Name: "canary", Tags: []string{}}, {Name: "default", Tags: []string{"prod"}}}
	if diff := cmp.Diff(want, cat.Revisions); diff != "" || cat.More {
		t.Fatalf("revisions (-want +got):\n%s; more %v", diff, cat.More)
	}
	if len(cat.Namespaces) != 1 || cat.Namespaces[0].Name != "shop" || cat.Namespaces[0].Labels["istio.io/rev"] != "canary" {
		t.Fatalf("namespaces %+v", cat.Namespaces)
	}
	for i := range MaxNamespaces {
		objs = append(objs, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("team-%03d", i)}})
	}
	cat, err = Reader{Client: fake.NewClientset(objs...)}.Catalog(context.Background())
	if err != nil || len(cat.Namespaces) != MaxNamespaces || !cat.More {
		t.Fatalf("%d namespaces listed of %d, more %v: %v", len(cat.Namespaces), MaxNamespaces+1, cat.More, err)
	}
	// Without the permission to list webhooks, the error names the request.
	client := fake.NewClientset(objs...)
	client.PrependReactor("list", "mutatingwebhookconfigurations", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "mutatingwebhookconfigurations"}, "", errors.New("no"))
	})
	if _, err := (Reader{Client: client}).Catalog(context.Background()); err == nil || !strings.Contains(err.Error(), "list mutatingwebhookconfigurations was refused") {
		t.Fatalf("refused: %v", err)
	}
}

// TestCached: the catalog is read once per TTL, however many ask, and again after it; a
// refusal too is kept that long.
func TestCached(t *testing.T) {
	client := fake.NewClientset(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}})
	var lists atomic.Int32
	refuse := false
	client.PrependReactor("list", "namespaces", func(k8stesting.Action) (bool, runtime.Object, error) {
		lists.Add(1)
		if refuse {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "namespaces"}, "", errors.New("no"))
		}
		return false, nil, nil
	})
	now := time.Unix(1e9, 0)
	c := &Cached{Reader: Reader{Client: client}, TTL: 30 * time.Second, Now: func() time.Time { return now }}
	for range 5 {
		if cat, err := c.Catalog(context.Background()); err != nil || len(cat.Namespaces) != 1 {
			t.Fatalf("%+v, %v", cat, err)
		}
	}
	if n := lists.Load(); n != 1 {
		t.Fatalf("%d lists within the TTL, want 1", n)
	}
	now = now.Add(30 * time.Second)
	refuse = true
	for range 3 {
		if _, err := c.Catalog(context.Background()); err == nil {
			t.Fatal("the refusal after the TTL was not read")
		}
	}
	if n := lists.Load(); n != 2 {
		t.Fatalf("%d lists, want 2 (one after the TTL, the refusal kept)", n)
	}
}

// TestRefusedUnreachable: a read the API server never answered is Unreachable (connection
// refused only when nothing listens), and one it refused or found nothing for is not, through a
// real client: a closed port, a server that hangs up at once, and one that answers 403 and 404.
func TestRefusedUnreachable(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()
	// Not HTTP (a hang-up at once would do too, but client-go retries that for seconds).
	notHTTP, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer notHTTP.Close()
	go func() {
		for {
			c, err := notHTTP.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("SSH-2.0-OpenSSH\r\n\r\n"))
			c.Close()
		}
	}()
	status := func(code int, reason metav1.StatusReason) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(code)
			fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":%q,"code":%d}`, reason, code)
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	for _, c := range []struct {
		name                                     string
		host                                     string
		unreachable, connectionRefused, notFound bool
		says                                     string
	}{
		{"nothing listens", "http://" + closedAddr, true, true, false, "could not connect to the API server (connection refused)"},
		{"the server speaks no HTTP", "http://" + notHTTP.Addr().String(), true, false, false, "could not reach the API server"},
		{"forbidden", status(http.StatusForbidden, metav1.StatusReasonForbidden), false, false, false, "was refused"},
		{"not found", status(http.StatusNotFound, metav1.StatusReasonNotFound), false, false, true, "found nothing"},
	} {
		t.Run(c.name, func(t *testing.T) {
			client, err := kubernetes.NewForConfig(&rest.Config{Host: c.host})
			if err != nil {
				t.Fatal(err)
			}
			_, err = Reader{Client: client}.Namespace(context.Background(), "default")
			var r *Refused
			if !errors.As(err, &r) {
				t.Fatalf("%v, want a *Refused", err)
			}
			if r.Unreachable() != c.unreachable || r.ConnectionRefused() != c.connectionRefused || r.NotFound() != c.notFound {
				t.Fatalf("%v: unreachable %v, connection refused %v, not found %v", err, r.Unreachable(), r.ConnectionRefused(), r.NotFound())
			}
			if !strings.Contains(err.Error(), c.says) {
				t.Fatalf("%v, want it to say %q", err, c.says)
			}
		})
	}
}

// TestCachedCancelled: a read that failed because its request ended is not kept: the next
// request reads again, and gets the catalog.
func TestCachedCancelled(t *testing.T) {
	client := fake.NewClientset(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}})
	var lists atomic.Int32
	client.PrependReactor("list", "namespaces", func(k8stesting.Action) (bool, runtime.Object, error) {
		if lists.Add(1) == 1 {
			return true, nil, context.Canceled
		}
		return false, nil, nil
	})
	now := time.Unix(1e9, 0)
	c := &Cached{Reader: Reader{Client: client}, TTL: time.Minute, Now: func() time.Time { return now }}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Catalog(ctx); err == nil {
		t.Fatal("the cancelled read succeeded")
	}
	if cat, err := c.Catalog(context.Background()); err != nil || len(cat.Namespaces) != 1 {
		t.Fatalf("after a cancelled read: %+v, %v", cat, err)
	}
	if n := lists.Load(); n != 2 {
		t.Fatalf("%d lists, want 2 (the cancelled one not kept)", n)
	}
}

// TestReadVersionUnderContext: an API server that never answers the version read (discovery's,
// which takes no context) does not hold the read past its request: it ends with the request.
func TestReadVersionUnderContext(t *testing.T) {
	client := fake.NewClientset()
	release := make(chan struct{})
	defer close(release)
	asked := make(chan struct{})
	client.PrependReactor("get", "version", func(k8stesting.Action) (bool, runtime.Object, error) {
		close(asked)
		<-release
		return false, nil, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := Reader{Client: client}.Read(ctx, "", "")
		done <- err
	}()
	<-asked
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("the read ended with %v, want the request's end", err)
	}
}
