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

	"github.com/sidecarlab/sidecarlab/engine/diff"
	"github.com/sidecarlab/sidecarlab/engine/input"
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

var (
	generatedMu sync.Mutex
	generated   = map[string]func() ([]byte, error){}
)

// ctlKey names one istioctl and its arguments, for the renders kept per test process.
func ctlKey(bin string, args []string) string {
	return strings.Join(append([]string{bin}, args...), "\x00")
}

// manifestGenerate is what `istioctl manifest generate` with args prints: run once per set of
// args and test process (~1 CPU-second each), for every test that reads it.
func manifestGenerate(bin string, args ...string) ([]byte, error) {
	key := ctlKey(bin, args)
	generatedMu.Lock()
	run, ok := generated[key]
	if !ok {
		run = sync.OnceValues(func() ([]byte, error) {
			out, err := exec.Command(bin, append([]string{"manifest", "generate"}, args...)...).Output()
			if err != nil {
				err = fmt.Errorf("istioctl manifest generate %s: %v", strings.Join(args, " "), err)
			}
			return out, err
		})
		generated[key] = run
	}
	generatedMu.Unlock()
	return run()
}

// istioctlConfig runs `istioctl manifest generate` (with args, e.g. --set flags) and writes the
// three files kube-inject reads offline: the injector config, the values and the mesh config. A
// render costs ~2 s and its files are only read, so each set of args is rendered once per test
// process and shared by the tests that ask for it.
func istioctlConfig(t *testing.T, bin string, args ...string) (dir string, inj, values, mesh string) {
	t.Helper()
	key := ctlKey(bin, args)
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
	out, err := manifestGenerate(bin, args...)
	if err != nil {
		c.err = err
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
	c.err = writeCtlFiles(c.dir, c.inj, c.values, c.mesh)
	return c
}

// writeCtlFiles writes the three texts istioctl kube-inject reads offline (kubeInjectRev's
// --injectConfigFile, --valuesFile and --meshConfigFile) into dir.
func writeCtlFiles(dir, injectorConfig, values, mesh string) error {
	for name, s := range map[string]string{"inject-config.yaml": injectorConfig, "values.json": values, "mesh.yaml": mesh} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// kubeInject runs `istioctl kube-inject` offline on the file in, with the configuration
// istioctlConfig wrote to dir and env added to the environment (e.g. ENABLE_NATIVE_SIDECARS=true).
func kubeInject(bin, dir, in string, env ...string) (stdout, stderr string, err error) {
	return kubeInjectRev(bin, dir, "default", in, env...)
}

// kubeInjectRev is kubeInject with --revision.
func kubeInjectRev(bin, dir, revision, in string, env ...string) (stdout, stderr string, err error) {
	cmd := exec.Command(bin, "kube-inject", "-f", in, "--revision", revision,
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

// ctlBatch is istioctl's judgement of many inputs from few processes: istioctl kube-inject runs
// once over every input the engine accepted, joined into one multi-document file (kube-inject
// injects document by document), and its output is cut back into each input's documents. Where
// that part is not what the engine made, or the engine rejected the input, istioctl on the input
// alone is the judge — so every input is still judged on its own, and every per-input error of
// istioctl's is still compared. Should istioctl fail on the joined file, or print another number
// of documents, every input is judged alone.
type ctlBatch struct {
	run     func(file string) (stdout, stderr string, err error)
	inputs  []string
	results []*Injection
	parts   []string // istioctl's output for inputs[i] from the joined run; "" when none
}

// newCtlBatch runs istioctl (run) over the inputs the engine accepted; results[i] is the
// engine's answer for inputs[i].
func newCtlBatch(t *testing.T, run func(file string) (stdout, stderr string, err error), inputs []string, results []*Injection) *ctlBatch {
	t.Helper()
	b := &ctlBatch{run: run, inputs: inputs, results: results, parts: make([]string, len(inputs))}
	var joined bytes.Buffer
	var accepted []int
	want := 0
	for i, in := range inputs {
		if len(results[i].Errors()) > 0 {
			continue
		}
		accepted = append(accepted, i)
		want += len(results[i].Documents)
		text := readFile(t, in)
		joined.WriteString("---\n")
		joined.Write(text)
		if len(text) > 0 && text[len(text)-1] != '\n' {
			joined.WriteByte('\n')
		}
	}
	if len(accepted) == 0 {
		return b
	}
	all := filepath.Join(t.TempDir(), "all.yaml")
	if err := os.WriteFile(all, joined.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, err := run(all)
	docs := outputDocuments(stdout)
	if err != nil || len(docs) != want {
		t.Logf("istioctl on the %d accepted inputs joined: %v (%s), %d documents for %d: each input on its own", len(accepted), err, firstLine(stderr), len(docs), want)
		return b
	}
	for _, i := range accepted {
		n := len(results[i].Documents)
		b.parts[i], docs = strings.Join(docs[:n], ""), docs[n:]
	}
	return b
}

// judge is istioctl's output for inputs[i], or its error: the input's part of the joined run's
// output when that is what the engine made, or else what istioctl makes of the input alone
// (then alone is true).
func (b *ctlBatch) judge(i int) (want, stderr string, alone bool, err error) {
	if p := b.parts[i]; p != "" && b.results[i].Output() == p {
		return p, "", false, nil
	}
	want, stderr, err = b.run(b.inputs[i])
	return want, stderr, true, err
}

// TestMatchesIstioctl holds the engine to the promise: for every input of our corpus and of
// Istio's, the output is byte-identical to `istioctl kube-inject` of the same Istio, given the
// configuration `istioctl manifest generate` renders — with native sidecars off (the default)
// and on (ENABLE_NATIVE_SIDECARS=true). Where istioctl fails, the engine must report an error
// for that input too.
//
// istioctl runs once per mode over every input the engine accepts (ctlBatch), and every input is
// still compared on its own; each input the engine rejects is run through istioctl on its own,
// which must fail on it too.
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
			observed := make([]*Injection, len(inputs))
			for i, in := range inputs {
				r, err := e.Inject(t.Context(), readFile(t, in), nil, Settings{Mode: m.mode})
				if err != nil {
					t.Fatalf("%s: engine: %v", filepath.Base(in), err)
				}
				results[i] = r
				// And with Istio's templates observed, as explain injects: the same bytes.
				if observed[i], err = injectObserved(t, e, readFile(t, in), Settings{Mode: m.mode}); err != nil {
					t.Fatalf("%s: engine, observed: %v", filepath.Base(in), err)
				}
			}
			batch := newCtlBatch(t, func(file string) (string, string, error) { return kubeInject(bin, dir, file, m.env) }, inputs, results)
			for i, in := range inputs {
				r := results[i]
				t.Run(filepath.Base(in), func(t *testing.T) {
					stdout, stderr, alone, ctlErr := batch.judge(i)
					if ctlErr != nil {
						if len(r.Errors()) == 0 || len(observed[i].Errors()) == 0 {
							t.Fatalf("istioctl failed (%v: %s) but the engine did not", ctlErr, stderr)
						}
						bothFailed.Add(1)
						return
					}
					if errs := r.Errors(); len(errs) > 0 {
						t.Fatalf("engine: %v; istioctl succeeded", errs[0])
					}
					if got := r.Output(); got != stdout {
						t.Fatalf("output differs from istioctl:\n%s", diff.Unified(stdout, got))
					}
					if got := observed[i].Output(); got != stdout || len(observed[i].Errors()) > 0 {
						t.Fatalf("output with the templates observed differs from istioctl:\n%s", diff.Unified(stdout, got))
					}
					if alone && batch.parts[i] != "" {
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

// TestCtlBatch: the joined run judges an input only where its part is what the engine made;
// otherwise — a part that differs, an input the engine rejected, a joined run that failed or
// printed another number of documents — istioctl on the input alone is asked.
func TestCtlBatch(t *testing.T) {
	dir := t.TempDir()
	var inputs []string
	for _, name := range []string{"a", "b", "c"} {
		p := filepath.Join(dir, name+".yaml")
		if err := os.WriteFile(p, []byte(name+": in\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, p)
	}
	results := []*Injection{
		{Documents: []Document{Document{}.withOutput("a: out\n")}},
		{Documents: []Document{{Error: &input.Error{Msg: "rejected"}}}},
		{Documents: []Document{Document{}.withOutput("c: out\n")}},
	}
	cases := []struct {
		name   string
		joined string // what the joined run prints
		fails  bool
		alone  []bool // judge(i) asked istioctl on input i alone
	}{
		{"every part the same", "a: out\n---\nc: out\n---\n", false, []bool{false, true, false}},
		{"a part differs", "a: other\n---\nc: out\n---\n", false, []bool{true, true, false}},
		{"the joined run fails", "", true, []bool{true, true, true}},
		{"another number of documents", "a: out\n---\n", false, []bool{true, true, true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run := func(file string) (string, string, error) {
				if filepath.Base(file) == "all.yaml" {
					if c.fails {
						return "", "boom", errors.New("exit status 1")
					}
					return c.joined, "", nil
				}
				b := readFile(t, file)
				return strings.Replace(string(b), ": in", ": out", 1) + "---\n", "", nil
			}
			batch := newCtlBatch(t, run, inputs, results)
			for i := range inputs {
				want, _, alone, err := batch.judge(i)
				if err != nil {
					t.Fatal(err)
				}
				if alone != c.alone[i] {
					t.Errorf("input %d: alone = %v, want %v", i, alone, c.alone[i])
				}
				if wantOut := filepath.Base(inputs[i])[:1] + ": out\n---\n"; want != wantOut {
					t.Errorf("input %d: judged by %q, want %q", i, want, wantOut)
				}
			}
		})
	}
}
