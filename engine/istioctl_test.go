package engine

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

// ctlConfig is what `istioctl manifest generate` rendered for one set of arguments, as the three
// files kube-inject reads offline.
type ctlConfig struct {
	dir, inj, values, mesh string
	err                    error
}

var (
	ctlConfigsMu sync.Mutex
	ctlConfigs   = map[string]*ctlConfig{}
	// ctlConfigDir holds the rendered files of every test of the process; TestMain removes it.
	ctlConfigDir string
)

// istioctlConfig runs `istioctl manifest generate` (with args, e.g. --set flags) and writes the
// three files kube-inject reads offline: the injector config, the values and the mesh config. A
// render costs ~2 s and its files are only read, so each set of args is rendered once per test
// process and shared by the tests that ask for it.
func istioctlConfig(t *testing.T, bin string, args ...string) (dir string, inj, values, mesh string) {
	t.Helper()
	key := strings.Join(append([]string{bin}, args...), "\x00")
	ctlConfigsMu.Lock()
	c, ok := ctlConfigs[key]
	if !ok {
		c = renderCtlConfig(bin, len(ctlConfigs), args)
		ctlConfigs[key] = c
	}
	ctlConfigsMu.Unlock()
	if c.err != nil {
		t.Fatal(c.err)
	}
	return c.dir, c.inj, c.values, c.mesh
}

func renderCtlConfig(bin string, n int, args []string) *ctlConfig {
	c := &ctlConfig{}
	out, err := exec.Command(bin, append([]string{"manifest", "generate"}, args...)...).Output()
	if err != nil {
		c.err = fmt.Errorf("istioctl manifest generate %s: %v", strings.Join(args, " "), err)
		return c
	}
	docs, err := splitDocuments(out)
	if err != nil {
		c.err = err
		return c
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
			c.inj, c.values = cm.Data["config"], cm.Data["values"]
		case "istio":
			c.mesh = cm.Data["mesh"]
		}
	}
	if c.inj == "" || c.values == "" || c.mesh == "" {
		c.err = errors.New("istioctl manifest generate printed no istio-sidecar-injector or istio ConfigMap")
		return c
	}
	if ctlConfigDir == "" {
		if ctlConfigDir, c.err = os.MkdirTemp("", "sidecarlab-engine-istioctl"); c.err != nil {
			return c
		}
	}
	c.dir = filepath.Join(ctlConfigDir, strconv.Itoa(n))
	if c.err = os.Mkdir(c.dir, 0o755); c.err != nil {
		return c
	}
	for name, s := range map[string]string{"inject-config.yaml": c.inj, "values.json": c.values, "mesh.yaml": c.mesh} {
		if c.err = os.WriteFile(filepath.Join(c.dir, name), []byte(s), 0o644); c.err != nil {
			return c
		}
	}
	return c
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

// outputDocuments splits what istioctl kube-inject printed into its documents, each with the
// "---" line after it, as kube-inject writes them. A printed document never holds a line "---"
// of its own: YAML's reader splits its input there, and an injected document is marshalled YAML,
// whose multi-line strings are indented block scalars.
func outputDocuments(out string) []string {
	var docs []string
	start := 0
	for i := 0; i < len(out); {
		end := strings.IndexByte(out[i:], '\n')
		if end < 0 {
			break
		}
		line := out[i : i+end+1]
		i += end + 1
		if line == "---\n" {
			docs = append(docs, out[start:i])
			start = i
		}
	}
	if start < len(out) {
		docs = append(docs, out[start:])
	}
	return docs
}

// TestMatchesIstioctl holds the engine to the promise: for every input of our corpus and of
// Istio's, the output is byte-identical to `istioctl kube-inject` of the same Istio, given the
// configuration `istioctl manifest generate` renders — with native sidecars off (the default)
// and on (ENABLE_NATIVE_SIDECARS=true). Where istioctl fails, the engine must report an error
// for that input too.
//
// istioctl runs once per mode over every input the engine accepts, joined into one multi-document
// file (kube-inject injects document by document), and its output is cut back into each input's
// documents, so that every input is still compared on its own; each input the engine rejects is
// run through istioctl on its own, which must fail on it too. Should istioctl fail on the joined
// file, every input is run on its own, to name the one.
func TestMatchesIstioctl(t *testing.T) {
	if testing.Short() {
		t.Skip("builds istioctl; run without -short")
	}
	t.Parallel()
	bin := testkit.Istioctl(t)
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
	var same, bothFailed atomic.Int32
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			// The engine's answer for each input on its own.
			results := make([]*Injection, len(inputs))
			var joined bytes.Buffer
			var accepted []int
			for i, in := range inputs {
				b := readFile(t, in)
				r, err := e.Inject(t.Context(), b, nil, Settings{Mode: m.mode})
				if err != nil {
					t.Fatalf("%s: engine: %v", filepath.Base(in), err)
				}
				results[i] = r
				if len(r.Errors()) > 0 {
					continue
				}
				accepted = append(accepted, i)
				joined.WriteString("---\n")
				joined.Write(b)
				if len(b) > 0 && b[len(b)-1] != '\n' {
					joined.WriteByte('\n')
				}
			}
			// istioctl once over every input the engine accepted.
			all := filepath.Join(t.TempDir(), "all.yaml")
			if err := os.WriteFile(all, joined.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			stdout, stderr, ctlErr := kubeInject(bin, dir, all, m.env)
			docs := outputDocuments(stdout)
			var want int
			for _, i := range accepted {
				want += len(results[i].Documents)
			}
			if ctlErr != nil || len(docs) != want {
				t.Logf("istioctl on the %d accepted inputs joined: %v (%s), %d documents for %d: each input on its own", len(accepted), ctlErr, firstLine(stderr), len(docs), want)
				docs = nil
			}
			for i, in := range inputs {
				r := results[i]
				var ours []string
				if len(r.Errors()) == 0 && docs != nil {
					ours, docs = docs[:len(r.Documents)], docs[len(r.Documents):]
				}
				t.Run(filepath.Base(in), func(t *testing.T) {
					if ours != nil && r.Output() == strings.Join(ours, "") {
						same.Add(1)
						return
					}
					// Rejected by the engine, or not the same as istioctl's output of the joined
					// file: istioctl on this input alone is the judge.
					stdout, stderr, ctlErr := kubeInject(bin, dir, in, m.env)
					if ctlErr != nil {
						if len(r.Errors()) == 0 {
							t.Fatalf("istioctl failed (%v: %s) but the engine did not", ctlErr, stderr)
						}
						bothFailed.Add(1)
						return
					}
					if errs := r.Errors(); len(errs) > 0 {
						t.Fatalf("engine: %v; istioctl succeeded", errs[0])
					}
					if got := r.Output(); got != stdout {
						t.Fatalf("output differs from istioctl:\n%s", UnifiedDiff(stdout, got))
					}
					if ours != nil {
						t.Logf("the same as istioctl's output of this input alone, not as its part of the joined file's")
					}
					same.Add(1)
				})
			}
		})
	}
	t.Cleanup(func() {
		t.Logf("%d inputs × %d modes: %d byte-identical, %d rejected by both", len(inputs), len(modes), same.Load(), bothFailed.Load())
	})
}
