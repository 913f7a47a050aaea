package engine

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// istioctl builds (or finds in the build cache) the istioctl of the pinned Istio module, declared
// as a tool in go.mod.
func istioctl(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "tool", "-n", "istioctl").Output()
	if err != nil {
		t.Fatalf("build istioctl (go tool -n istioctl): %v", err)
	}
	return strings.TrimSpace(string(out))
}

// istioctlConfig runs `istioctl manifest generate` (with args, e.g. --set flags) and writes the
// three files kube-inject reads offline: the injector config, the values and the mesh config.
func istioctlConfig(t *testing.T, bin string, args ...string) (dir string, inj, values, mesh string) {
	t.Helper()
	out, err := exec.Command(bin, append([]string{"manifest", "generate"}, args...)...).Output()
	if err != nil {
		t.Fatalf("istioctl manifest generate: %v", err)
	}
	docs, err := splitDocuments(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		var cm struct {
			Kind     string
			Metadata struct{ Name string }
			Data     map[string]string
		}
		if yaml.Unmarshal(d.raw, &cm) != nil || cm.Kind != "ConfigMap" {
			continue
		}
		switch cm.Metadata.Name {
		case "istio-sidecar-injector":
			inj, values = cm.Data["config"], cm.Data["values"]
		case "istio":
			mesh = cm.Data["mesh"]
		}
	}
	if inj == "" || values == "" || mesh == "" {
		t.Fatal("istioctl manifest generate printed no istio-sidecar-injector or istio ConfigMap")
	}
	dir = t.TempDir()
	for name, s := range map[string]string{"inject-config.yaml": inj, "values.json": values, "mesh.yaml": mesh} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, inj, values, mesh
}

// kubeInject runs `istioctl kube-inject` offline on the file in, with the configuration
// istioctlConfig wrote to dir and env added to the environment (e.g. ENABLE_NATIVE_SIDECARS=true).
func kubeInject(bin, dir, in string, env ...string) (stdout, stderr string, err error) {
	cmd := exec.Command(bin, "kube-inject", "-f", in, "--revision", "default",
		"--injectConfigFile", filepath.Join(dir, "inject-config.yaml"),
		"--valuesFile", filepath.Join(dir, "values.json"),
		"--meshConfigFile", filepath.Join(dir, "mesh.yaml"))
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return out.String(), errb.String(), err
}

// TestMatchesIstioctl holds the engine to the promise: for every input of our corpus and of
// Istio's, the output is byte-identical to `istioctl kube-inject` of the same Istio, given the
// configuration `istioctl manifest generate` renders — with native sidecars off (the default)
// and on (ENABLE_NATIVE_SIDECARS=true). Where istioctl fails, the engine must report an error
// for that input too.
func TestMatchesIstioctl(t *testing.T) {
	if testing.Short() {
		t.Skip("builds istioctl; run without -short")
	}
	bin := istioctl(t)
	dir, inj, values, mesh := istioctlConfig(t, bin)
	e := testEngine(t)
	def, err := e.Install(t.Context(), InstallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if def.InjectorConfig != inj || def.Values != values || def.MeshConfigYAML != mesh {
		t.Error("the engine's default installation differs from istioctl manifest generate's ConfigMaps")
	}

	var inputs []string
	ours, _ := filepath.Glob("testdata/corpus/*.yaml")
	theirs, _ := filepath.Glob(istioTestdata(t, "*.yaml"))
	for _, p := range append(ours, theirs...) {
		if !strings.HasSuffix(p, ".iop.yaml") {
			inputs = append(inputs, p)
		}
	}
	if len(ours) < 20 || len(theirs) < 50 {
		t.Fatalf("corpus too small: %d of ours, %d of Istio's", len(ours), len(theirs))
	}
	modes := []struct {
		name string
		mode Mode
		env  string
	}{
		{"classic", ModeKubeInject, ""},
		{"native", ModeNative, "ENABLE_NATIVE_SIDECARS=true"},
	}
	var same, bothFailed int
	for _, m := range modes {
		for _, in := range inputs {
			t.Run(m.name+"/"+filepath.Base(in), func(t *testing.T) {
				stdout, stderr, ctlErr := kubeInject(bin, dir, in, m.env)

				r, err := e.Inject(t.Context(), readFile(t, in), nil, Settings{Mode: m.mode})
				if ctlErr != nil {
					if err == nil && len(r.Errors()) == 0 {
						t.Fatalf("istioctl failed (%v: %s) but the engine did not", ctlErr, stderr)
					}
					bothFailed++
					return
				}
				if err != nil {
					t.Fatalf("engine: %v", err)
				}
				if errs := r.Errors(); len(errs) > 0 {
					t.Fatalf("engine: %v; istioctl succeeded", errs[0])
				}
				if got := r.Output(); got != stdout {
					t.Fatalf("output differs from istioctl:\n%s", UnifiedDiff(stdout, got))
				}
				same++
			})
		}
	}
	t.Logf("%d inputs × %d modes: %d byte-identical, %d rejected by both", len(inputs), len(modes), same, bothFailed)
}
