package clustermesh

import (
	"context"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"

	"github.com/sidecarlab/sidecarlab/engine"
)

// installed renders two revisions as the test cluster installs them (the default one with a
// tag prod, and canary) and returns their objects as a cluster holds them: the webhook
// configurations and the ConfigMaps.
func installed(t *testing.T) []runtime.Object {
	t.Helper()
	e, err := engine.New(context.Background(), engine.Options{InstallPolicy: engine.TrustedInstalls()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var objs []runtime.Object
	for _, rev := range []struct {
		suffix string
		set    []string
	}{{"", []string{"values.revisionTags[0]=prod"}}, {"-canary", []string{"revision=canary"}}} {
		in, err := e.Install(context.Background(), engine.InstallOptions{Set: rev.set})
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(in.Webhooks, "\n---\n") {
			var c admissionregistrationv1.MutatingWebhookConfiguration
			if err := yaml.Unmarshal([]byte(doc), &c); err != nil {
				t.Fatal(err)
			}
			objs = append(objs, &c)
		}
		meta := metav1.ObjectMeta{Namespace: "istio-system", Labels: map[string]string{"istio.io/rev": "default"}}
		if rev.suffix != "" {
			meta.Labels["istio.io/rev"] = rev.suffix[1:]
		}
		injector, mesh := meta, meta
		injector.Name, mesh.Name = "istio-sidecar-injector"+rev.suffix, "istio"+rev.suffix
		objs = append(objs,
			&corev1.ConfigMap{ObjectMeta: injector, Data: map[string]string{"config": in.InjectorConfig, "values": in.Values}},
			&corev1.ConfigMap{ObjectMeta: mesh, Data: map[string]string{"mesh": in.MeshConfigYAML}})
	}
	return objs
}

func TestRead(t *testing.T) {
	objs := installed(t)
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
		via                 string
	}{
		{namespace: "enabled", want: "", via: "webhook namespace.sidecar-injector.istio.io"},
		{namespace: "tagged", want: "", via: "of istio-revision-tag-prod"},
		{namespace: "canary", want: "canary", via: "of istio-sidecar-injector-canary"},
		{namespace: "both", want: "", via: "of istio-sidecar-injector"},
		{namespace: "plain", want: "", via: "the default revision"},
		{namespace: "unknown", want: "", via: "the default revision"},
		{revision: "prod", want: "", via: "revision tag prod"},
		{revision: "canary", want: "canary", via: "revision canary"},
		{revision: "default", want: "", via: "revision default"},
		{want: "", via: "a namespace labelled istio-injection=enabled"},
		{revision: "nope", want: `no revision or revision tag "nope"; the cluster's Istio webhooks are of revisions canary, default`},
		{namespace: "missing", want: `get namespaces missing found nothing`},
	} {
		m, err := r.Read(context.Background(), c.namespace, c.revision)
		if err != nil {
			if !strings.Contains(err.Error(), c.want) || c.via != "" {
				t.Errorf("%s/%s: %v, want %q", c.namespace, c.revision, err, c.want)
			}
			continue
		}
		if m.Revision != c.want || !strings.Contains(m.Via, c.via) {
			t.Errorf("%s/%s: revision %q via %q, want %q via …%s…", c.namespace, c.revision, m.Revision, m.Via, c.want, c.via)
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
		if !strings.Contains(m.Own.Values, `"revision": "`+m.Revision+`"`) || m.Own.InjectorConfig == "" || m.Own.MeshConfig == "" {
			t.Errorf("%s/%s: not revision %q's ConfigMaps", c.namespace, c.revision, m.Revision)
		}
	}
}
