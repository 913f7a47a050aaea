package main

import (
	"context"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

// TestInjectAnnotateLenient: `sidecarlab inject --annotate` runs a value Istio accepts leniently
// (it used to be refused), prints the engine's output, which engine.TestLenientMatchesIstioctl
// holds byte-identical to istioctl's, and reports the pitfall saying what Istio did; a value
// Istio's own validator refuses is refused with Istio's message.
func TestInjectAnnotateLenient(t *testing.T) {
	e, err := engine.New(context.Background(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, c := range []struct{ key, value, pitfall string }{
		{"sidecar.istio.io/inject", "no", "warning [inject-value] document 1"},
		{"sidecar.istio.io/inject", "False", "warning [inject-value] document 1"},
		{"sidecar.istio.io/nativeSidecar", "TRUE", "warning [lenient-native-sidecar] document 1"},
		{"sidecar.istio.io/rewriteAppHTTPProbers", "False", "info [lenient-bool-read] document 1"},
		{"prometheus.istio.io/merge-metrics", "False", "info [lenient-bool-read] document 1"},
		{"traffic.sidecar.istio.io/excludeOutboundPorts", "0", "warning [lenient-port-zero] document 1"},
	} {
		t.Run(c.key+"="+c.value, func(t *testing.T) {
			out, stderr, err := runCLI(t, testkit.Deployment, "inject", "-f", "-", "--annotate", c.key+"="+c.value)
			if err != nil {
				t.Fatalf("%v: %s", err, stderr)
			}
			r, err := e.Inject(context.Background(), []byte(testkit.Deployment), []input.Step{{Key: c.key, Value: c.value}}, engine.Settings{})
			if err != nil {
				t.Fatal(err)
			}
			if out != r.Output() {
				t.Fatalf("inject printed:\n%s", out)
			}
			if !strings.Contains(stderr, "pitfall: stdin:") || !strings.Contains(stderr, c.pitfall) {
				t.Fatalf("stderr %q lacks %q", stderr, c.pitfall)
			}
		})
	}
	_, stderr, err := runCLI(t, testkit.Deployment, "inject", "-f", "-", "--annotate", "traffic.sidecar.istio.io/includeOutboundIPRanges=10.0.0.0")
	want := "invalid value '10.0.0.0' for annotation 'traffic.sidecar.istio.io/includeOutboundIPRanges': includeIPRanges invalid: failed parsing cidr '10.0.0.0'"
	if err == nil || !strings.Contains(err.Error()+stderr, want) {
		t.Fatalf("got %v (%s), want Istio's refusal %q", err, stderr, want)
	}
}
