package engine

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sidecarlab/sidecarlab/engine/catalog"
	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/engine/secrets"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

// Package secrets held against the engine: the corpora injection is tested with hold no secret,
// and a manifest redacted for sharing injects as the original does, by our engine and by
// istioctl.

// Made-up values that look like what they stand for; none of them was ever a credential.
const (
	fakeToken = "Zq8vR2mXk4TbW9yLp3NcA7hJ"                                         // 24 characters of base64
	fakeHex   = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08" // sha256("test")
)

// TestEngineLoadsNoLeakRules: an engine that injects never loads gitleaks' rules (~120 ms, and
// their memory): neither package secrets nor gitleaks is among the engine's imports. Package
// secrets' TestLeakRulesLoadLazily holds that the first scan loads them, once.
func TestEngineLoadsNoLeakRules(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasSuffix(p, "/engine/secrets") || strings.Contains(p, "gitleaks") {
			t.Errorf("the engine imports %s", p)
		}
	}
}

// redactSteps is secrets.RedactSteps of the engine's steps, as the share gate redacts them.
func redactSteps(steps []input.Step) []input.Step {
	in := make([]secrets.Step, len(steps))
	for i, st := range steps {
		in[i] = secrets.Step(st)
	}
	out := make([]input.Step, len(steps))
	for i, st := range secrets.RedactSteps(in) {
		out[i] = input.Step(st)
	}
	return out
}

// TestSecretsCorpora runs the scanner over Istio's own injection corpus (inputs and golden
// outputs) and ours: none of them holds a secret, so every finding there is a false positive.
func TestSecretsCorpora(t *testing.T) {
	var files []string
	for _, pattern := range []string{istioTestdata(t, "*"), filepath.Join("testdata", "corpus", "*.yaml"), filepath.Join("testdata", "lab", "*")} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 200 {
		t.Fatalf("only %d corpus files found", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := secrets.Scan(b); len(got) > 0 {
			t.Errorf("%s: %+v", f, got)
		}
	}
}

// redactInjectManifest has secrets in env values, in annotations (one of them on the workload
// itself) and in a Secret; redactInjectValues are those values, longest first.
var redactInjectManifest = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  annotations:
    example.com/deploy-token: ` + fakeToken + `
spec:
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
      annotations:
        example.com/api: "` + fakeToken + `x"
        proxy.istio.io/config: |
          holdApplicationUntilProxyStarts: true
    spec:
      containers:
      - name: web
        image: nginx@sha256:` + fakeHex + `
        env:
        - name: DB_PASSWORD
          value: hunter2
        - name: GITHUB_TOKEN
          value: ghp_notarealtoken
---
apiVersion: v1
kind: Secret
metadata:
  name: db
type: Opaque
data:
  password: aHVudGVyMg==
`

var redactInjectValues = []string{fakeToken + "x", fakeToken, "hunter2", "ghp_notarealtoken", "aHVudGVyMg=="}

// TestRedactKeepsInjection is the promise of "redact and share": the redacted manifest injects
// to the same output as the original, with each redacted value replaced by <redacted> where it
// appears in it. Istio copies a pod's env values and annotations into the output unchanged and
// decides nothing from them (these are not annotations Istio reads), and passes a Secret through
// as text; so the claim is exact, byte for byte, in every injection mode.
func TestRedactKeepsInjection(t *testing.T) {
	e := testEngine(t)
	manifest := redactInjectManifest
	redacted, err := secrets.Redact([]byte(manifest))
	if err != nil {
		t.Fatal(err)
	}
	// A step's value too: an annotation the person added.
	steps := []input.Step{{Key: "sidecar.istio.io/proxyCPU", Value: "200m"}, {Key: "example.com/build", Value: fakeToken + "y"}}
	redSteps := redactSteps(steps)
	if redSteps[0] != steps[0] || redSteps[1].Value != secrets.Redacted || steps[1].Value == secrets.Redacted {
		t.Fatalf("RedactSteps: %+v (of %+v)", redSteps, steps)
	}
	values := append([]string{fakeToken + "y"}, redactInjectValues...)
	for _, v := range values {
		if strings.Contains(redacted, v) {
			t.Fatalf("redacted manifest still holds %q", v)
		}
	}
	for _, mode := range []Settings{{}, {Mode: ModeNative}, {Mode: ModeWebhook, KubernetesVersion: "1.30"}} {
		orig := mustInject(t, e, []byte(manifest), steps, mode)
		red := mustInject(t, e, []byte(redacted), redSteps, mode)
		if errs := append(orig.Errors(), red.Errors()...); len(errs) > 0 {
			t.Fatalf("mode %+v: %v", mode, errs[0])
		}
		want := orig.Output()
		if !strings.Contains(want, "hunter2") || !strings.Contains(want, fakeToken+"y") || !strings.Contains(want, "istio-proxy") {
			t.Fatalf("mode %+v: the original's output does not carry the values or was not injected", mode)
		}
		for _, v := range values {
			want = strings.ReplaceAll(want, v, secrets.Redacted)
		}
		if diff := cmp.Diff(want, red.Output()); diff != "" {
			t.Errorf("mode %+v: output of the redacted manifest (-original with values replaced +got):\n%s", mode, diff)
		}
	}
}

// TestRedactKeepsInjectionIstioctl holds the same claim against Istio itself: `istioctl
// kube-inject` of the redacted manifest prints what it prints for the original with the values
// replaced, byte for byte, with native sidecars off and on.
func TestRedactKeepsInjectionIstioctl(t *testing.T) {
	if testing.Short() {
		t.Skip("builds istioctl; run without -short")
	}
	t.Parallel()
	bin := testkit.Istioctl(t)
	dir, _, _, _ := istioctlConfig(t, bin)
	redacted, err := secrets.Redact([]byte(redactInjectManifest))
	if err != nil {
		t.Fatal(err)
	}
	kubeInject := func(manifest, env string) string {
		f := filepath.Join(t.TempDir(), "in.yaml")
		if err := os.WriteFile(f, []byte(manifest), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "kube-inject", "-f", f, "--revision", "default",
			"--injectConfigFile", filepath.Join(dir, "inject-config.yaml"),
			"--valuesFile", filepath.Join(dir, "values.json"),
			"--meshConfigFile", filepath.Join(dir, "mesh.yaml"))
		cmd.Env = append(os.Environ(), env)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("istioctl kube-inject: %v", err)
		}
		return string(out)
	}
	for _, env := range []string{"", "ENABLE_NATIVE_SIDECARS=true"} {
		want := kubeInject(redactInjectManifest, env)
		if !strings.Contains(want, "hunter2") || !strings.Contains(want, "istio-proxy") {
			t.Fatalf("%s: istioctl's output of the original does not carry the values or was not injected", env)
		}
		for _, v := range redactInjectValues {
			want = strings.ReplaceAll(want, v, secrets.Redacted)
		}
		if diff := cmp.Diff(want, kubeInject(redacted, env)); diff != "" {
			t.Errorf("%s: istioctl kube-inject of the redacted manifest (-original with values replaced +got):\n%s", env, diff)
		}
	}
}

// TestCatalogExamplesHaveNoSecrets: the catalog's examples prefill annotation steps; none is a
// secret, so none may be flagged when a step is shared (an annotation named …/secret or a
// userVolume naming a Secret is not one).
func TestCatalogExamplesHaveNoSecrets(t *testing.T) {
	var steps []secrets.Step
	for _, a := range catalog.DefaultCatalog().All() {
		if a.Example != "" {
			steps = append(steps, secrets.Step{Key: a.Name, Value: a.Example})
		}
	}
	if len(steps) < 20 {
		t.Fatalf("only %d examples", len(steps))
	}
	for _, f := range secrets.ScanSteps(steps) {
		t.Errorf("%s: %+v", steps[f.Step-1].Key, f)
	}
}

// TestDefaultMeshHasNoSecrets: Istio's own default installation, pasted as a mesh's config (its
// injector config with the sidecar templates, its values and its mesh config), holds no secret:
// the rules read inside the templates (env entries, proxyMetadata, command lines) flag none.
func TestDefaultMeshHasNoSecrets(t *testing.T) {
	cm, ok := embeddedDefault()
	if !ok {
		t.Fatal("this build has no embedded default installation")
	}
	parts := []secrets.MeshPart{{Name: "injectorConfig", Text: cm.InjectorConfig}, {Name: "values", Text: cm.Values}, {Name: "meshConfig", Text: cm.MeshConfigYAML}, {Name: "webhooks", Text: cm.Webhooks}}
	for _, p := range parts {
		if len(p.Text) < 100 {
			t.Fatalf("%s: %d bytes", p.Name, len(p.Text))
		}
	}
	for _, f := range secrets.ScanSettings(secrets.Settings{Mesh: parts}) {
		t.Errorf("%+v", f)
	}
}
