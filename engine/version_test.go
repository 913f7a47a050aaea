package engine

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

func TestIstioVersion(t *testing.T) {
	release := strings.TrimSpace(string(readFile(t, filepath.Join(testkit.IstioDir(t), "VERSION"))))
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", "istio.io/istio").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := release + "\n" + strings.TrimSpace(string(out)) + "\n"
	if *update {
		golden(t, "../istio_version.txt", []byte(want))
		return
	}
	if istioVersion != want {
		t.Fatalf("engine/istio_version.txt is %q, the module in use says %q; run go test ./engine -update", istioVersion, want)
	}
	if v := Version(); v.Istio != release || len(v.Commit) != 12 || !strings.HasSuffix(v.Module, v.Commit) {
		t.Fatalf("Version() = %+v", v)
	}
}
