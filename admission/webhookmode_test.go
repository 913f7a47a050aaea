package admission

import (
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine"
)

// selectorsOverlay gives the webhook a never and an always selector.
const selectorsOverlay = `apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
spec:
  values:
    global:
      proxy:
        autoInject: %s
    sidecarInjectorWebhook:
      neverInjectSelector:
      - matchLabels: {mesh: never}
      alwaysInjectSelector:
      - matchLabels: {mesh: always}
`

// TestWebhookModeMatchesWebhook: the engine's webhook mode injects exactly the pods Istio's real
// webhook injects (this package's path: an AdmissionReview through inject.NewWebhook, in a
// namespace labelled istio-injection=enabled) — under the injection policy enabled and disabled,
// with the installation's never and always selectors, whatever the pod says in its
// sidecar.istio.io/inject label or annotation. Before webhook mode asked the policy, it injected
// every pod of a disabled policy that did not say false.
func TestWebhookModeMatchesWebhook(t *testing.T) {
	e := adm.eng.(*engine.Engine)
	ns := engine.Namespace{Name: "shop", Labels: map[string]string{"istio-injection": "enabled"}}
	withPod := func(labels, annotations string) string {
		m := strings.Replace(deployment, "      labels: {app: web}\n", "      labels: {app: web"+labels+"}\n", 1)
		if annotations != "" {
			m = strings.Replace(m, "      labels:", "      annotations: {"+annotations+"}\n      labels:", 1)
		}
		return m
	}
	pods := []struct{ name, labels, annotations string }{
		{"says nothing", "", ""},
		{"label true", ", sidecar.istio.io/inject: \"true\"", ""},
		{"label false", ", sidecar.istio.io/inject: \"false\"", ""},
		{"annotation true", "", `sidecar.istio.io/inject: "true"`},
		{"annotation false", "", `sidecar.istio.io/inject: "false"`},
		{"annotation no (not a boolean)", "", `sidecar.istio.io/inject: "no"`},
		{"label yes over annotation true", ", sidecar.istio.io/inject: \"yes\"", `sidecar.istio.io/inject: "true"`},
		{"never selector", ", mesh: never", ""},
		{"always selector", ", mesh: always", ""},
		{"never selector, annotation true", ", mesh: never", `sidecar.istio.io/inject: "true"`},
		{"always selector, label false", ", mesh: always, sidecar.istio.io/inject: \"false\"", ""},
		// IntoObject fails on it; the webhook fails on it only when it injects.
		{"unreadable proxy config", "", `proxy.istio.io/config: "concurrency: ["`},
	}
	installs := []struct {
		name string
		opts engine.InstallOptions
	}{
		{"default", engine.InstallOptions{}},
		{"autoInject=disabled", engine.InstallOptions{Set: []string{"values.global.proxy.autoInject=disabled"}}},
		{"enabled with selectors", engine.InstallOptions{Overlay: strings.Replace(selectorsOverlay, "%s", "enabled", 1)}},
		{"disabled with selectors", engine.InstallOptions{Overlay: strings.Replace(selectorsOverlay, "%s", "disabled", 1)}},
	}
	differs := 0 // pods the policy or a selector keeps uninjected though IntoObject would inject
	for _, in := range installs {
		for _, p := range pods {
			t.Run(in.name+"/"+p.name, func(t *testing.T) {
				manifest := withPod(p.labels, p.annotations)
				s := engine.Settings{Mode: engine.ModeWebhook, Install: in.opts}
				res := admitOne(t, manifest, s, ns)
				want := res.Injected
				r, err := e.Inject(t.Context(), []byte(manifest), nil, s)
				if err != nil {
					t.Fatal(err)
				}
				d := r.Documents[0]
				status, reason := d.Status()
				if got := status == engine.StatusInjected; got != want {
					t.Fatalf("webhook mode: %s (%s); Istio's webhook injected: %v", status, reason, want)
				}
				if status == engine.StatusError && res.WebhookError == "" {
					t.Fatalf("webhook mode: %s; Istio's webhook let the pod through", reason)
				}
				kube, err := e.Inject(t.Context(), []byte(manifest), nil, engine.Settings{Install: in.opts})
				if err != nil {
					t.Fatal(err)
				}
				if st, _ := kube.Documents[0].Status(); st == engine.StatusInjected && !want {
					differs++
				}
			})
		}
	}
	// The cases that tell the webhook from kube-inject are there: the disabled policy's silent
	// pods, the never selector's.
	if differs < 5 {
		t.Errorf("only %d pods the webhook leaves that kube-inject injects; the cases lost their point", differs)
	}
}
