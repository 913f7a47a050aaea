package provenance

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCodeTableIsThePinnedSource: every function the code table names is at its line in the
// pinned module's source (Istio's at checkedAt, k8s.io/api at kubeAPIAt, as go.mod has them),
// so that each link shows what it says; a line that moved fails.
func TestCodeTableIsThePinnedSource(t *testing.T) {
	versions := map[string]string{}
	for _, m := range []string{"istio.io/istio", "k8s.io/api", "k8s.io/kubernetes"} {
		out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}} {{.Version}}", m).Output()
		if err != nil {
			t.Fatal(err)
		}
		dir, version, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
		versions[m] = dir
		if want := map[string]string{"istio.io/istio": checkedAt, "k8s.io/api": kubeAPIAt, "k8s.io/kubernetes": kubernetesAt}[m]; !strings.HasSuffix(version, want) {
			t.Errorf("%s is at %s; the code table was read at %s: read it again", m, version, want)
		}
	}
	check := func(c Code) bool {
		b, err := os.ReadFile(filepath.Join(versions[c.Module], c.File))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		if c.Line < 1 || c.Line > len(lines) {
			return false
		}
		l := lines[c.Line-1]
		return strings.HasPrefix(l, "func "+c.Func+"(") || strings.HasPrefix(l, "type "+c.Func+" struct")
	}
	for _, c := range append([]Code{APIDefaults, {Func: "moveContainer", File: "pkg/kube/inject/webhook.go", Line: 276, Module: "istio.io/istio"}}, codes()...) {
		if !check(c) {
			t.Errorf("%s is not at %s:%d", c.Func, c.File, c.Line)
		}
	}
	// The check trips on a line that moved.
	if check(istioCode("applyMetadata", 772)) {
		t.Error("a function one line off passed")
	}
}

// TestCodeOf: a field Istio's code writes after the template is found by its path, whatever
// its container's name; one it does not write is not.
func TestCodeOf(t *testing.T) {
	for path, want := range map[string]string{
		`metadata.annotations["sidecar.istio.io/status"]`:                  "applyMetadata",
		`spec.containers[istio-proxy].env[ISTIO_KUBE_APP_PROBERS].value`:   "applyRewrite",
		`spec.containers[web].readinessProbe.httpGet.port`:                 "applyRewrite",
		`spec.initContainers[istio-init].args[6]`:                          "adjustInitContainerUser",
		`spec.containers[istio-proxy].image`:                               "",
		`metadata.annotations["sidecar.istio.io/statusx"]`:                 "",
		`spec.containers[istio-proxy].env[ISTIO_KUBE_APP_PROBERS_X].value`: "",
	} {
		c, ok := CodeOf(path)
		if ok != (want != "") || c.Func != want {
			t.Errorf("%s: %q %v, want %q", path, c.Func, ok, want)
		}
	}
}

// codes are the code table's functions.
func codes() []Code {
	var out []Code
	for _, f := range codeFields {
		out = append(out, f.code)
	}
	return out
}
