package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/wording"
)

// TestAdmit: sidecarlab admit says injected or not and admitted or rejected, with the rules,
// and exits 1 when a workload would be rejected.
func TestAdmit(t *testing.T) {
	out, stderr, err := runCLI(t, deployment, "admit", "-f", "-", "-n", "shop")
	if err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	for _, want := range []string{"NOT INJECTED, ADMITTED", "namespace shop", "no webhook selected the Pod", "istio-injection in (enabled)"} {
		if !strings.Contains(out, want) {
			t.Errorf("unlabelled namespace: the output lacks %q:\n%s", want, out)
		}
	}

	out, stderr, err = runCLI(t, deployment, "admit", "-f", "-", "-n", "shop", "--namespace-labels", "istio-injection=enabled,pod-security.kubernetes.io/enforce=baseline")
	if err == nil || exitCode(err) != 1 || !strings.Contains(stderr, "rejected: document 1 (Deployment/web)") {
		t.Fatalf("baseline: want exit 1 naming the document, got %v, stderr %q", err, stderr)
	}
	if !strings.Contains(out, "INJECTED, REJECTED") || !strings.Contains(out, "NET_ADMIN") {
		t.Fatalf("baseline:\n%s", out)
	}

	// With Istio CNI, the same namespace admits it; JSON has the API's fields.
	out, stderr, err = runCLI(t, deployment, "admit", "-f", "-", "-n", "shop", "--namespace-labels", "istio-injection=enabled,pod-security.kubernetes.io/enforce=baseline",
		"--set", "components.cni.enabled=true", "-o", "json")
	if err != nil {
		t.Fatalf("CNI: %v: %s", err, stderr)
	}
	var got []wording.Admission
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !got[0].Injected || !got[0].Admitted || len(got[0].Violations) != 0 || len(got[0].InjectReasons) == 0 {
		t.Fatalf("CNI: %+v", got)
	}
	for _, field := range []string{`"injected"`, `"injectReasons"`, `"admitted"`, `"violations"`} {
		if !strings.Contains(out, field) {
			t.Errorf("JSON lacks %s", field)
		}
	}

	if _, _, err := runCLI(t, deployment, "admit", "-f", "-", "--namespace-labels", "not a label"); err == nil || exitCode(err) != 2 {
		t.Fatalf("bad labels: want a usage error, got %v", err)
	}
}
