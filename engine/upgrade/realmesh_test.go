package upgrade

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/sidecarlab/sidecarlab/engine"
)

// realMeshWorkload is the workload the upgrade from each real mesh is previewed on (the first of
// engine's TestRealMeshes).
const realMeshWorkload = "../testdata/corpus/deployment.yaml"

// TestRealMeshUpgrades previews the upgrade to the embedded Istio from each mesh of the real-mesh
// corpus (engine's TestRealMeshes: the directory SIDECARLAB_REAL_MESHES names) that --mesh-from
// takes and whose templates inject the workload here (the others are TestRealMeshes' to judge
// against istioctl): checkRealUpgrade.
func TestRealMeshUpgrades(t *testing.T) {
	if testing.Short() {
		t.Skip("renders an installation per carried key; run without -short")
	}
	dir := os.Getenv("SIDECARLAB_REAL_MESHES")
	if dir == "" {
		t.Skip("SIDECARLAB_REAL_MESHES names no directory with the corpus of engine/testdata/real-meshes.md")
	}
	t.Parallel()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no meshes in %s (%v)", dir, err)
	}
	workload, err := os.ReadFile(realMeshWorkload)
	if err != nil {
		t.Fatal(err)
	}
	e := testEngine(t)
	var checked sync.Map // the keys rendered without
	previewed := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cms, err := engine.ParseMeshConfigMaps(b)
		if err != nil {
			continue // refused for a missing part: TestRealMeshes holds the refusal
		}
		s := engine.Settings{Install: engine.InstallOptions{Mesh: cms.Mesh, Revision: cms.Revision}}
		if r, err := e.Inject(t.Context(), workload, nil, s); err != nil || len(r.Errors()) > 0 {
			continue // its templates do not run here: TestRealMeshes holds the failure to istioctl's
		}
		previewed++
		t.Run(strings.TrimSuffix(filepath.Base(f), ".yaml"), func(t *testing.T) {
			t.Parallel()
			checkRealUpgrade(t, e, workload, s, &checked)
		})
	}
	if previewed == 0 {
		t.Fatal("no mesh of the corpus injects here")
	}
}

// checkRealUpgrade previews the upgrade from the mesh of s to the embedded Istio on the
// workload: the new side renders and injects it, and every key of the plan is what the plan says
// — a carried key changes the new side (rendered without it, the injector's values or the mesh
// config differ), a key left behind (not carried, unknown, removed by the charts, or of no
// effect) is not in the new side's values with the mesh's value.
func checkRealUpgrade(t *testing.T, e *engine.Engine, workload []byte, s engine.Settings, checked *sync.Map) {
	t.Helper()
	p, err := NewPreview(t.Context(), e, workload, nil, s, nil)
	if err != nil {
		t.Fatalf("upgrade preview: %v", err)
	}
	for _, d := range p.Documents {
		if d.NewError != "" {
			t.Errorf("upgrade preview: the new side fails: %s", d.NewError)
		}
	}
	in, err := e.Install(t.Context(), p.Plan.New)
	if err != nil {
		t.Fatal(err)
	}
	var values map[string]any
	if err := yaml.Unmarshal([]byte(in.Values), &values); err != nil {
		t.Fatal(err)
	}
	carried := 0
	for _, k := range p.Plan.Keys {
		if !k.Carried {
			if got, found := getPath(values, pathSegments(k.Path)); found && reflect.DeepEqual(got, k.Yours) {
				t.Errorf("upgrade preview: %s is not carried (removed %v, no effect %v, unknown %v), yet the new side's values have it: %v", k.Path, k.Removed, k.NoEffect, k.Unknown, got)
			}
			continue
		}
		carried++
		if _, done := checked.LoadOrStore(k.Path, true); done {
			continue // rendered without it for another mesh already (a render costs ~1 CPU-second)
		}
		other, err := e.Install(t.Context(), withoutKey(t, p.Plan.New, k))
		if err != nil {
			t.Fatalf("upgrade preview without %s: %v", k.Path, err)
		}
		if other.Values == in.Values && other.MeshConfigYAML == in.MeshConfigYAML {
			t.Errorf("upgrade preview: %s is carried (to %q) but the new side is the same without it", k.Path, k.MovedTo)
		}
	}
	t.Logf("upgrade preview: %d keys, %d carried", len(p.Plan.Keys), carried)
}

// withoutKey is the new side's install options o without the carried key k: its overlay with the
// key (or the IstioOperator path it was moved to) deleted.
func withoutKey(t *testing.T, o engine.InstallOptions, k ValueKey) engine.InstallOptions {
	t.Helper()
	var iop map[string]any
	if err := yaml.Unmarshal([]byte(o.Overlay), &iop); err != nil {
		t.Fatal(err)
	}
	spec := iop["spec"].(map[string]any)
	if k.MovedTo != "" {
		deletePath(spec, strings.Split(k.MovedTo, "."))
	} else {
		deletePath(spec, append([]string{"values"}, pathSegments(k.Path)...))
	}
	b, err := yaml.Marshal(iop)
	if err != nil {
		t.Fatal(err)
	}
	o.Overlay = string(b)
	return o
}

// pathSegments is the path pathText wrote (ValueKey.Path): split at its dots, a quoted segment unquoted.
func pathSegments(text string) []string {
	var out []string
	for rest := text; rest != ""; {
		var seg string
		if strings.HasPrefix(rest, `"`) {
			end := strings.Index(rest[1:], `"`) + 1
			seg, rest = rest[1:end], strings.TrimPrefix(rest[end+1:], ".")
		} else {
			seg, rest, _ = strings.Cut(rest, ".")
		}
		out = append(out, seg)
	}
	return out
}
