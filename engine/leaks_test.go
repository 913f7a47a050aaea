package engine

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestLeakRulesLoadLazily: gitleaks' rules are not loaded when the process starts, nor by an
// engine that injects: the first scan loads them, once. It runs in a process of its own (this
// test binary again), where nothing has scanned yet.
func TestLeakRulesLoadLazily(t *testing.T) {
	if os.Getenv("SIDECARLAB_LEAKS_CHILD") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestLeakRulesLoadLazily$", "-test.count=1")
		cmd.Env = append(os.Environ(), "SIDECARLAB_LEAKS_CHILD=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "PASS") {
			t.Fatalf("%v\n%s", err, out)
		}
		return
	}
	if n := leakLoads.Load(); n != 0 {
		t.Fatalf("gitleaks' rules loaded %d times at start", n)
	}
	e, err := New(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustInject(t, e, readFile(t, "testdata/corpus/deployment.yaml"), []Step{{Key: "sidecar.istio.io/proxyCPU", Value: "200m"}}, Settings{})
	if n := leakLoads.Load(); n != 0 {
		t.Fatalf("an injection loaded gitleaks' rules (%d)", n)
	}
	ScanSecrets([]byte("a: " + awsKeyID))
	ScanSteps([]Step{{Key: "example.com/k", Value: awsKeyID}})
	if n := leakLoads.Load(); n != 1 {
		t.Fatalf("two scans loaded gitleaks' rules %d times, want 1", n)
	}
}
