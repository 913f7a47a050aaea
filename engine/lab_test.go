package engine

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/diff"
	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/i18n"
)

// labRows are the lab's annotation table: one annotation each, applied to lab-base.yaml. Each
// corpus file lab-NAME.yaml is the same Deployment with the annotation written by hand.
var labRows = []struct {
	name string
	step input.Step
	// facts are changes the lab documents for this annotation; each must appear in the diff.
	facts []string
	// absent are paths that must not change.
	absent []string
}{
	{
		name: "proxy-cpu", step: input.Step{Key: "sidecar.istio.io/proxyCPU", Value: "200m"},
		facts: []string{
			"~ spec.template.spec.containers[istio-proxy].resources.requests.cpu: 100m → 200m",
			// Setting one resource annotation drops the defaults the template would emit.
			"- spec.template.spec.containers[istio-proxy].resources.requests.memory: 128Mi",
			`- spec.template.spec.containers[istio-proxy].resources.limits: {"cpu":"2","memory":"1Gi"}`,
		},
	},
	{
		name: "proxy-memory", step: input.Step{Key: "sidecar.istio.io/proxyMemory", Value: "256Mi"},
		facts: []string{
			"~ spec.template.spec.containers[istio-proxy].resources.requests.memory: 128Mi → 256Mi",
			"- spec.template.spec.containers[istio-proxy].resources.requests.cpu: 100m",
			`- spec.template.spec.containers[istio-proxy].resources.limits: {"cpu":"2","memory":"1Gi"}`,
		},
	},
	{
		name: "proxy-cpu-limit", step: input.Step{Key: "sidecar.istio.io/proxyCPULimit", Value: "1"},
		facts: []string{
			"~ spec.template.spec.containers[istio-proxy].resources.limits.cpu: 2 → 1",
			"- spec.template.spec.containers[istio-proxy].resources.limits.memory: 1Gi",
			`- spec.template.spec.containers[istio-proxy].resources.requests: {"cpu":"100m","memory":"128Mi"}`,
		},
	},
	{
		name: "proxy-memory-limit", step: input.Step{Key: "sidecar.istio.io/proxyMemoryLimit", Value: "1Gi"},
		facts: []string{
			"- spec.template.spec.containers[istio-proxy].resources.limits.cpu: 2",
			`- spec.template.spec.containers[istio-proxy].resources.requests: {"cpu":"100m","memory":"128Mi"}`,
		},
		absent: []string{"spec.template.spec.containers[istio-proxy].resources.limits.memory"},
	},
	{
		name: "proxy-config", step: input.Step{Key: "proxy.istio.io/config", Value: "concurrency: 2\nterminationDrainDuration: 30s\n"},
		facts: []string{
			`~ spec.template.spec.containers[istio-proxy].env[PROXY_CONFIG].value: "{}\n" → "{\"concurrency\":2,\"terminationDrainDuration\":\"30s\"}\n"`,
		},
	},
	{
		name: "hold", step: input.Step{Key: "proxy.istio.io/config", Value: "holdApplicationUntilProxyStarts: true"},
		facts: []string{
			"↕ spec.template.spec.containers[istio-proxy]: moved from position 2 to 1",
			`+ spec.template.spec.containers[istio-proxy].lifecycle: {"postStart":{"exec":{"command":["pilot-agent","wait"]}}}`,
			`~ spec.template.spec.containers[istio-proxy].env[PROXY_CONFIG].value: "{}\n" → "{\"holdApplicationUntilProxyStarts\":true}\n"`,
		},
	},
	{
		name: "exclude-outbound-ports", step: input.Step{Key: "traffic.sidecar.istio.io/excludeOutboundPorts", Value: "3306,6379"},
		facts: []string{
			"+ spec.template.spec.initContainers[istio-init].args[-o]: 3306,6379",
		},
	},
	{
		name: "inject-false", step: input.Step{Key: "sidecar.istio.io/inject", Value: "false"},
		facts: []string{
			"- spec.template.spec.containers[istio-proxy]: ",
			"- spec.template.spec.initContainers[istio-init]: ",
			"- spec.template.spec.volumes[istio-envoy]: ",
		},
	},
	{
		name: "native-sidecar", step: input.Step{Key: "sidecar.istio.io/nativeSidecar", Value: "true"},
		facts: []string{
			"↕ spec.template.spec.initContainers[istio-proxy]: moved from spec.template.spec.containers[istio-proxy]",
			"+ spec.template.spec.initContainers[istio-proxy].restartPolicy: Always",
		},
	},
	{
		// In classic mode "false" is already the default: nothing but the annotation changes.
		name: "native-sidecar-false", step: input.Step{Key: "sidecar.istio.io/nativeSidecar", Value: "false"},
		facts:  []string{`+ spec.template.metadata.annotations["sidecar.istio.io/nativeSidecar"]: false`},
		absent: []string{"spec.template.spec.containers[istio-proxy]"},
	},
}

// TestLabTable runs each row of the lab table through a one-step timeline and checks: the output
// equals Istio's on the same Deployment with the annotation written by hand (so steps land where
// Istio reads them); the documented changes appear, attributed to the step; and the whole diff
// and the injected YAML match their golden files.
func TestLabTable(t *testing.T) {
	e := testEngine(t)
	base := readFile(t, "testdata/corpus/lab-base.yaml")
	for _, row := range labRows {
		t.Run(row.name, func(t *testing.T) {
			tl, err := e.Timeline(t.Context(), base, []input.Step{row.step}, Settings{})
			if err != nil {
				t.Fatal(err)
			}
			last := tl.Steps[1]
			byHand := mustInject(t, e, readFile(t, filepath.Join("testdata/corpus", "lab-"+row.name+".yaml")), nil, Settings{})
			if got, want := last.Output(), byHand.Output(); got != want {
				t.Errorf("step output differs from the hand-annotated manifest:\n%s", diff.Unified(want, got))
			}
			var lines []string
			for _, c := range changesOf(t, last) {
				if c.Cause != row.step.String() {
					t.Errorf("change %s attributed to %q, want %q", c.Path, c.Cause, row.step)
				}
				lines = append(lines, c.Line(i18n.For(i18n.Default).T))
			}
			text := strings.Join(lines, "\n") + "\n"
			for _, f := range row.facts {
				if !strings.Contains(text, f) {
					t.Errorf("missing documented change %q", f)
				}
			}
			for _, p := range row.absent {
				for _, c := range changesOf(t, last) {
					if strings.HasPrefix(c.Path, p) {
						t.Errorf("unexpected change %s", c.Line(i18n.For(i18n.Default).T))
					}
				}
			}
			golden(t, filepath.Join("lab", row.name+".diff"), []byte(fmt.Sprintf("# %s\n%s", row.step, text)))
			// The field diff reads the JSON the engine keeps; what a person copies is the YAML.
			golden(t, filepath.Join("lab", row.name+".yaml"), []byte(last.Output()))
		})
	}
}
