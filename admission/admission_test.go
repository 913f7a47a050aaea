package admission

import (
	"context"
	"os"
	"strings"
	"testing"

	istiolog "istio.io/istio/pkg/log"

	"github.com/sidecarlab/sidecarlab/engine"
)

var eng *engine.Engine

func TestMain(m *testing.M) {
	o := istiolog.DefaultOptions()
	o.SetDefaultOutputLevel(istiolog.OverrideScopeName, istiolog.NoneLevel)
	_ = istiolog.Configure(o)
	e, err := engine.New(context.Background(), engine.Options{})
	if err != nil {
		panic(err)
	}
	eng = e
	code := m.Run()
	e.Close()
	os.Exit(code)
}

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx
`

func admitOne(t *testing.T, manifest string, s engine.Settings, ns Namespace) Result {
	t.Helper()
	rs, err := Admit(t.Context(), eng, []byte(manifest), nil, s, ns)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 {
		t.Fatalf("%d results", len(rs))
	}
	if rs[0].Error != "" {
		t.Fatal(rs[0].Error)
	}
	return rs[0]
}

func called(r Result) []string {
	var out []string
	for _, w := range r.Webhooks {
		if w.Called {
			out = append(out, w.Name)
		}
	}
	return out
}

func TestWebhookSelection(t *testing.T) {
	cases := []struct {
		name     string
		ns       Namespace
		podLabel string
		want     string // the webhook called, "" for none
		injected bool
	}{
		{"namespace labelled istio-injection=enabled", Namespace{Name: "shop", Labels: map[string]string{"istio-injection": "enabled"}}, "", "namespace.sidecar-injector.istio.io", true},
		{"namespace without a label", Namespace{Name: "shop"}, "", "", false},
		{"namespace with istio.io/rev=default", Namespace{Name: "shop", Labels: map[string]string{"istio.io/rev": "default"}}, "", "rev.namespace.sidecar-injector.istio.io", true},
		{"namespace with another revision", Namespace{Name: "shop", Labels: map[string]string{"istio.io/rev": "canary"}}, "", "", false},
		{"pod label inject=false in an enabled namespace", Namespace{Name: "shop", Labels: map[string]string{"istio-injection": "enabled"}}, "sidecar.istio.io/inject: \"false\"", "", false},
		{"pod label inject=true, namespace unlabelled", Namespace{Name: "shop"}, "sidecar.istio.io/inject: \"true\"", "object.sidecar-injector.istio.io", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := deployment
			if c.podLabel != "" {
				m = strings.Replace(m, "labels: {app: web}\n    spec:", "labels: {app: web, "+c.podLabel+"}\n    spec:", 1)
			}
			r := admitOne(t, m, engine.Settings{}, c.ns)
			got := strings.Join(called(r), ",")
			if got != c.want {
				t.Fatalf("webhooks called: %q, want %q", got, c.want)
			}
			if r.Injected != c.injected {
				t.Fatalf("injected %v, want %v", r.Injected, c.injected)
			}
			if !r.Admitted {
				t.Fatalf("not admitted: %v", r.Violations)
			}
		})
	}
}

func TestPodSecurity(t *testing.T) {
	baseline := Namespace{Name: "shop", Labels: map[string]string{"istio-injection": "enabled", "pod-security.kubernetes.io/enforce": "baseline"}}
	r := admitOne(t, deployment, engine.Settings{}, baseline)
	if !r.Injected || r.Admitted {
		t.Fatalf("baseline, classic injection: injected %v admitted %v, want injected and rejected", r.Injected, r.Admitted)
	}
	if len(r.Violations) == 0 || !strings.Contains(r.Violations[0], `violates PodSecurity "baseline:latest"`) || !strings.Contains(r.Violations[0], "NET_ADMIN") {
		t.Fatalf("violations: %q", r.Violations)
	}
	// With Istio CNI, istio-init is gone and baseline admits the pod.
	cni := engine.Settings{Install: engine.InstallOptions{Set: []string{"components.cni.enabled=true"}}}
	r = admitOne(t, deployment, cni, baseline)
	if !r.Injected || !r.Admitted {
		t.Fatalf("baseline with CNI: injected %v admitted %v (%q), want injected and admitted", r.Injected, r.Admitted, r.Violations)
	}
	// Not injected at all: baseline admits the plain pod.
	r = admitOne(t, deployment, engine.Settings{}, Namespace{Name: "shop", Labels: map[string]string{"pod-security.kubernetes.io/enforce": "baseline"}})
	if r.Injected || !r.Admitted {
		t.Fatalf("baseline, not injected: injected %v admitted %v", r.Injected, r.Admitted)
	}
	// restricted rejects even the CNI pod (the charts' seccompProfile is empty).
	restricted := Namespace{Name: "shop", Labels: map[string]string{"istio-injection": "enabled", "pod-security.kubernetes.io/enforce": "restricted"}}
	r = admitOne(t, deployment, cni, restricted)
	if r.Admitted {
		t.Fatal("restricted admitted the injected pod")
	}
	t.Logf("restricted, CNI: %q", r.Violations)
}
