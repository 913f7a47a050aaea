package secrets

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestLeakRulesLoadLazily: gitleaks' rules are not loaded when the process starts: the first
// scan loads them, once. It runs in a process of its own (this test binary again), where nothing
// has scanned yet. That an engine that injects never loads them is the engine's
// TestEngineLoadsNoLeakRules.
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
	Scan([]byte("a: " + awsKeyID))
	ScanSteps([]Step{{Key: "example.com/k", Value: awsKeyID}})
	if n := leakLoads.Load(); n != 1 {
		t.Fatalf("two scans loaded gitleaks' rules %d times, want 1", n)
	}
}
