package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/diff"
	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

// probedDeployment is the lab Deployment with an HTTP probe, so what rewriteAppHTTPProbers does
// shows in the output.
var probedDeployment = strings.Replace(labDeployment, "        image: nginx\n",
	"        image: nginx\n        readinessProbe:\n          httpGet:\n            path: /ready\n            port: 8080\n", 1)

// TestLenientMatchesIstioctl: a value Istio accepts though it is not of the annotation's kind is
// run, not refused; the output is byte-identical to istioctl kube-inject's for the same input
// with the annotation on the pod template (AnnotatedInput, where the engine writes steps), and the
// finding says what Istio did. A value Istio's own validator refuses is refused, with the message
// istioctl gives.
func TestLenientMatchesIstioctl(t *testing.T) {
	if testing.Short() {
		t.Skip("builds istioctl; run without -short")
	}
	t.Parallel()
	bin := testkit.Istioctl(t)
	dir, _, _, _ := istioctlConfig(t, bin)
	e := testEngine(t)
	// run is istioctl kube-inject on the input with the steps written where the engine writes them.
	run := func(t *testing.T, steps []input.Step) (stdout, stderr string, err error) {
		t.Helper()
		input, err := AnnotatedInput([]byte(probedDeployment), steps)
		if err != nil {
			t.Fatal(err)
		}
		in := filepath.Join(t.TempDir(), "in.yaml")
		if err := os.WriteFile(in, []byte(input), 0o644); err != nil {
			t.Fatal(err)
		}
		return kubeInject(bin, dir, in)
	}

	cases := []struct {
		key, value string
		check      string            // the finding expected
		params     map[string]string // with these parameters
		// outputHas is a line the output must hold: what Istio did with the value.
		outputHas string
	}{
		// The six values of issue 13.
		{"sidecar.istio.io/inject", "no", "inject-value", map[string]string{"result": "injected"}, "name: istio-proxy"},
		{"sidecar.istio.io/inject", "False", "inject-value", map[string]string{"result": "injected"}, "name: istio-proxy"},
		{"sidecar.istio.io/nativeSidecar", "TRUE", "lenient-native-sidecar", nil, "restartPolicy: Always"},
		{"sidecar.istio.io/rewriteAppHTTPProbers", "False", "lenient-bool-read", map[string]string{"read": "false"}, "path: /ready"},
		{"prometheus.istio.io/merge-metrics", "False", "lenient-bool-read", map[string]string{"read": "false"}, "sidecar.istio.io/status"},
		{"traffic.sidecar.istio.io/excludeOutboundPorts", "0", "lenient-port-zero", nil, `- "0"`},
		// And what else Istio does with such values.
		{"sidecar.istio.io/nativeSidecar", "False", "lenient-native-sidecar", nil, "restartPolicy: Always"},
		{"sidecar.istio.io/rewriteAppHTTPProbers", "yes", "lenient-bool-ignored", map[string]string{"used": "true"}, "path: /app-health/app/readyz"},
		{"traffic.sidecar.istio.io/includeOutboundPorts", "eighty", "lenient-unchecked", map[string]string{"kind": "port-list"}, "- eighty"},
		{"sidecar.istio.io/logLevel", "loud", "lenient-unchecked", map[string]string{"kind": "enum"}, "--proxyLogLevel=loud"},
	}
	for _, c := range cases {
		t.Run(c.key+"="+c.value, func(t *testing.T) {
			steps := []input.Step{{Key: c.key, Value: c.value}}
			want, stderr, err := run(t, steps)
			if err != nil {
				t.Fatalf("istioctl kube-inject: %v: %s", err, stderr)
			}
			r, err := e.Inject(t.Context(), []byte(probedDeployment), steps, Settings{})
			if err != nil {
				t.Fatalf("refused what istioctl accepts: %v", err)
			}
			if got := r.Output(); got != want {
				t.Fatalf("output differs from istioctl:\n%s", diff.Unified(want, got))
			}
			if !strings.Contains(want, c.outputHas) {
				t.Fatalf("istioctl's output lacks %q: the case does not show what it claims", c.outputHas)
			}
			var found *Finding
			for i, f := range r.Findings {
				if strings.HasPrefix(string(f.Check), "lenient-") || f.Check == "inject-value" {
					if string(f.Check) != c.check || found != nil {
						t.Fatalf("findings %v, want one %s", r.Findings, c.check)
					}
					found = &r.Findings[i]
				}
			}
			if found == nil {
				t.Fatalf("no %s finding in %v", c.check, r.Findings)
			}
			for k, v := range c.params {
				if found.Params[k] != v {
					t.Fatalf("finding %+v: want %s=%q", found, k, v)
				}
			}
		})
	}

	// merge-metrics=False is honoured: the prometheus.io annotations of the merge are gone.
	r := mustInject(t, e, []byte(probedDeployment), []input.Step{{Key: "prometheus.istio.io/merge-metrics", Value: "False"}}, Settings{})
	if strings.Contains(r.Output(), "prometheus.io/scrape") {
		t.Error("merge-metrics=False kept the merged scrape annotations: Istio read it as false")
	}

	// What Istio's validators refuse is refused, with Istio's message.
	for _, kv := range [][2]string{
		{"traffic.sidecar.istio.io/includeOutboundIPRanges", "10.0.0.0"},
		{"prometheus.istio.io/merge-metrics", "nope"},
		{"traffic.sidecar.istio.io/excludeOutboundPorts", "70000"},
		// Read before the annotations are validated: its reader's message, not the validator's.
		{"proxy.istio.io/config", "{bad"},
		{"proxy.istio.io/config", "concurrency: [2"},
		// Read, then refused by the validator.
		{"proxy.istio.io/config", "discoveryAddress: nohostport"},
	} {
		t.Run("refused "+kv[0]+"="+kv[1], func(t *testing.T) {
			steps := []input.Step{{Key: kv[0], Value: kv[1]}}
			_, err := e.Inject(t.Context(), []byte(probedDeployment), steps, Settings{})
			ie := asInputError(t, err)
			_, stderr, err := run(t, steps)
			if err == nil {
				t.Fatal("istioctl accepted it")
			}
			// The engine says which step; the rest is Istio's message: one of the annotations'
			// errors, or the error itself.
			msg, ok := strings.CutPrefix(ie.Text(), "step 1: ")
			if !ok || !strings.Contains(stderr, "* "+msg+"\n") && !strings.Contains(stderr, "Error: "+msg+"\n") {
				t.Fatalf("our message %q is not istioctl's:\n%s", ie.Text(), stderr)
			}
		})
	}
}
