package engine

import (
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/sidecarlab/sidecarlab/engine/input"
)

// FuzzInject feeds arbitrary manifests and annotation values to the engine: it must answer with
// documents or an *input.Error, never another error, and Istio's injector must not panic on any
// document (the engine survives a panic by turning it into the document's error, which is right
// for a server but would hide the bug from this test: so the test fails on it).
func FuzzInject(f *testing.F) {
	paths, _ := filepath.Glob("testdata/corpus/*.yaml")
	for _, p := range paths {
		b, _ := os.ReadFile(p)
		f.Add(b, "sidecar.istio.io/proxyCPU", "100m")
	}
	f.Add([]byte("apiVersion: v1\nkind: List\nitems:\n- 1\n"), "proxy.istio.io/config", "concurrency: 1")
	f.Add([]byte("apiVersion: batch/v1\nkind: CronJob\nspec: {}\n"), "sidecar.istio.io/inject", "true")
	// Values Istio takes leniently now reach its template (they used to be refused by kind).
	lab, _ := os.ReadFile("testdata/corpus/lab-base.yaml")
	for _, kv := range [][2]string{{"sidecar.istio.io/nativeSidecar", "TRUE"}, {"sidecar.istio.io/userVolume", `[1]`},
		{"sidecar.istio.io/userVolumeMount", `{"v":1}`}, {"sidecar.istio.io/statsHistogramBuckets", `{`}, {"proxy.istio.io/overrides", `{"containers":1}`},
		{"traffic.sidecar.istio.io/includeOutboundPorts", "eighty"}, {"sidecar.istio.io/logLevel", "{{"}} {
		f.Add(lab, kv[0], kv[1])
	}
	e := testEngine(f)
	f.Fuzz(func(t *testing.T, manifest []byte, key, value string) {
		var steps []input.Step
		if key != "" {
			steps = []input.Step{{Key: key, Value: value}}
		}
		r, err := e.Inject(t.Context(), manifest, steps, Settings{})
		if err != nil {
			asInputError(t, err)
			return
		}
		for _, d := range r.Documents {
			if d.panicked != nil {
				t.Fatalf("document %d: Istio's injector panicked: %v", d.Index, d.panicked)
			}
			if d.Error != nil && d.Error.Text() == "" {
				t.Fatalf("document %d: error without a message", d.Index)
			}
			// An output whose YAML is left until it is read must be one JSONToYAML writes:
			// one it cannot write is converted at once, carrying istioctl's error (withJSON).
			if d.Error == nil && d.json != nil {
				if _, err := yaml.JSONToYAML(d.json); err != nil {
					t.Fatalf("document %d: JSONToYAML fails on its output (%v) but it carries no error", d.Index, err)
				}
			}
		}
	})
}
