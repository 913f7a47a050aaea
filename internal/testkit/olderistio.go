package testkit

import (
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// OlderIstio is a real older Istio the module proxy serves: a 1.31 development snapshot of April
// 2026. Its istioctl cannot be built here (its own dependency graph is not fully served), but its
// chart's injection templates are files in the module, read from the module cache as Istio's
// golden corpus is.
const OlderIstio = "istio.io/istio@v0.0.0-20260423205519-b01690e6db7d"

// chartTemplateFiles are the injector config's templates and the chart files they are made of
// (istio-discovery's istiod-injector-configmap.yaml inserts each one trimmed, verbatim).
var chartTemplateFiles = map[string]string{
	"sidecar": "injection-template.yaml", "gateway": "gateway-injection-template.yaml", "grpc-simple": "grpc-simple.yaml",
	"grpc-agent": "grpc-agent.yaml", "waypoint": "waypoint.yaml", "kube-gateway": "kube-gateway.yaml",
	"agentgateway": "agentgateway.yaml", "agentgateway-waypoint": "agentgateway-waypoint.yaml",
}

// WithOlderTemplates is an injector config (the istio-sidecar-injector ConfigMap's config) with
// OlderIstio's template files in place of its templates, as that Istio's chart renders them: a
// template that chart does not have is left out. The module is downloaded into the module cache
// when it is not there.
func WithOlderTemplates(t testing.TB, injectorConfig string) string {
	t.Helper()
	out, err := exec.Command("go", "mod", "download", "-json", OlderIstio).Output()
	if err != nil {
		t.Fatalf("go mod download %s: %v", OlderIstio, err)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		t.Fatalf("go mod download %s: %v %s", OlderIstio, err, out)
	}
	files := filepath.Join(mod.Dir, "manifests/charts/istio-control/istio-discovery/files")
	var cfg map[string]any
	if err := yaml.Unmarshal([]byte(injectorConfig), &cfg); err != nil {
		t.Fatal(err)
	}
	templates, _ := cfg["templates"].(map[string]any)
	for _, name := range slices.Sorted(maps.Keys(templates)) {
		file, ok := chartTemplateFiles[name]
		if !ok {
			t.Fatalf("template %s: which chart file is it?", name)
		}
		b, err := os.ReadFile(filepath.Join(files, file))
		switch {
		case os.IsNotExist(err):
			delete(templates, name)
		case err != nil:
			t.Fatal(err)
		default:
			templates[name] = strings.TrimSpace(string(b)) + "\n"
		}
	}
	b, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
