package web

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

var update = flag.Bool("update", false, "refresh the presets taken from Istio's golden corpus")

// istioPresets are inputs of Istio's own golden corpus offered as presets. They are refreshed from
// the pinned module with `go test ./web -update`, like every golden file, and this test fails when
// they drift from it.
var istioPresets = map[string]string{
	"7-istio-hello.yaml":               "hello.yaml",
	"8-istio-hello-probes.yaml":        "hello-probes.yaml",
	"9-istio-traffic-annotations.yaml": "traffic-annotations.yaml",
	"10-istio-native-sidecar.yaml":     "native-sidecar.yaml",
}

func TestIstioPresets(t *testing.T) {
	dir, version := testkit.IstioDir(t), testkit.IstioVersion(t)
	for ours, theirs := range istioPresets {
		src, err := os.ReadFile(filepath.Join(dir, "pkg/kube/inject/testdata/inject", theirs))
		if err != nil {
			t.Fatal(err)
		}
		want := "# From Istio's golden corpus: pkg/kube/inject/testdata/inject/" + theirs + " (istio.io/istio " + version + ")\n" + string(src)
		path := filepath.Join("presets", ours)
		if *update {
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != want {
			t.Errorf("%s is not Istio's %s of the pinned module; run go test ./web -update", path, theirs)
		}
	}
}

func TestPresets(t *testing.T) {
	ps := Presets()
	if len(ps) < 10 || ps[0].ID != "deployment" {
		t.Fatalf("%d presets, first %q", len(ps), ps[0].ID)
	}
	seen := map[string]bool{}
	for _, p := range ps {
		if seen[p.ID] || presetTitles[p.ID] == "" {
			t.Errorf("preset %q: duplicate or without a title", p.ID)
		}
		seen[p.ID] = true
		var v any
		if err := yaml.Unmarshal([]byte(p.Manifest), &v); err != nil && !strings.Contains(p.Manifest, "---") {
			t.Errorf("preset %q is not YAML: %v", p.ID, err)
		}
	}
	if _, ok := FindPreset("job"); !ok {
		t.Fatal("no job preset")
	}
	if _, ok := FindPreset("nope"); ok {
		t.Fatal("found a preset that does not exist")
	}
}

// TestLabBatchPreset keeps the lab-batch preset equal to the engine's eight batch files, joined,
// after a comment for the reader that names no path of this repository (it did once).
func TestLabBatchPreset(t *testing.T) {
	files, err := filepath.Glob("../engine/testdata/batch/*.yaml")
	if err != nil || len(files) != 8 {
		t.Fatalf("%d files, %v", len(files), err)
	}
	var parts []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, string(b))
	}
	const comment = "# The lab's eight workloads, to read as one table in the Batch tab: a plain Deployment,\n" +
		"# a fleet of 2,000 pods, tuned resources, an app held until its proxy starts, excluded ports,\n" +
		"# a Pod opted out, and a Job with a classic and with a native sidecar.\n"
	p, ok := FindPreset("lab-batch")
	if !ok || p.Manifest != comment+strings.Join(parts, "---\n") {
		t.Fatal("presets/11-lab-batch.yaml differs from engine/testdata/batch")
	}
	if strings.Contains(comment, "/") {
		t.Errorf("the preset's comment names a path: %q", comment)
	}
}
