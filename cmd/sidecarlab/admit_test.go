package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/internal/testkit"
	"github.com/sidecarlab/sidecarlab/wording"
)

// TestAdmit: sidecarlab admit says injected or not and admitted or rejected, with the rules,
// and exits 1 when a workload would be rejected.
func TestAdmit(t *testing.T) {
	out, stderr, err := runCLI(t, testkit.Deployment, "admit", "-f", "-", "-n", "shop")
	if err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	for _, want := range []string{"NOT INJECTED, ADMITTED", "namespace shop", "no webhook selected the Pod", "istio-injection in (enabled)"} {
		if !strings.Contains(out, want) {
			t.Errorf("unlabelled namespace: the output lacks %q:\n%s", want, out)
		}
	}

	out, stderr, err = runCLI(t, testkit.Deployment, "admit", "-f", "-", "-n", "shop", "--namespace-labels", "istio-injection=enabled,pod-security.kubernetes.io/enforce=baseline")
	if err == nil || exitCode(err) != 1 || !strings.Contains(stderr, "rejected: document 1 (Deployment/web)") {
		t.Fatalf("baseline: want exit 1 naming the document, got %v, stderr %q", err, stderr)
	}
	if !strings.Contains(out, "INJECTED, REJECTED") || !strings.Contains(out, "NET_ADMIN") {
		t.Fatalf("baseline:\n%s", out)
	}

	// With Istio CNI, the same namespace admits it; JSON has the API's fields.
	out, stderr, err = runCLI(t, testkit.Deployment, "admit", "-f", "-", "-n", "shop", "--namespace-labels", "istio-injection=enabled,pod-security.kubernetes.io/enforce=baseline",
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

	if _, _, err := runCLI(t, testkit.Deployment, "admit", "-f", "-", "--namespace-labels", "not a label"); err == nil || exitCode(err) != 2 {
		t.Fatalf("bad labels: want a usage error, got %v", err)
	}
}

// TestAdmitNamespaceRefused: as `kubectl create -f pod.yaml -n other`, a document whose own
// namespace is not the one given is refused with kubectl's message and the command exits 1; the
// same document in its own namespace, or a document that names none, is admitted (exit 0).
func TestAdmitNamespaceRefused(t *testing.T) {
	pod := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: shop\nspec:\n  containers:\n  - {name: c, image: busybox}\n"
	out, stderr, err := runCLI(t, pod, "admit", "-f", "-", "-n", "other")
	if err == nil || exitCode(err) != 1 || !strings.Contains(stderr, "rejected: document 1 (Pod/p)") {
		t.Fatalf("another namespace: want exit 1 naming the document, got %v, stderr %q", err, stderr)
	}
	if !strings.Contains(out, "You must pass '--namespace=shop'") {
		t.Fatalf("another namespace: kubectl's message is missing:\n%s", out)
	}
	for _, ns := range []string{"shop", ""} {
		args := []string{"admit", "-f", "-"}
		if ns != "" {
			args = append(args, "-n", ns)
		}
		if _, stderr, err := runCLI(t, pod, args...); err != nil {
			t.Fatalf("namespace %q: %v: %s", ns, err, stderr)
		}
	}
	if _, stderr, err := runCLI(t, testkit.Deployment, "admit", "-f", "-", "-n", "other"); err != nil {
		t.Fatalf("a document with no namespace: %v: %s", err, stderr)
	}
}

// TestAdmitAmbient: `admit --namespace-labels istio.io/dataplane-mode=ambient` with Istio's ambient
// profile says the Pod is admitted as written and joins ambient, with what happens at run time;
// the sidecar.istio.io/inject=true label there brings a sidecar and keeps it out; without the
// ambient profile the label joins nothing. In Japanese the sentences change and the data does not.
func TestAdmitAmbient(t *testing.T) {
	args := []string{"admit", "-f", "-", "-n", "shop", "--namespace-labels", "istio.io/dataplane-mode=ambient", "--set", "profile=ambient"}
	out, stderr, err := runCLI(t, testkit.Deployment, args...)
	if err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	for _, want := range []string{"NOT INJECTED, ADMITTED", "(rule 2 of its `enablementSelectors`)", "istio.io/dataplane-mode=ambient", "ambient.istio.io/redirection: enabled"} {
		if !strings.Contains(out, want) {
			t.Errorf("ambient namespace: the output lacks %q:\n%s", want, out)
		}
	}
	labelled := strings.Replace(testkit.Deployment, "labels:\n        app: web", "labels:\n        app: web\n        sidecar.istio.io/inject: \"true\"", 1)
	if labelled == testkit.Deployment {
		t.Fatalf("the test's Deployment has no pod label to add to:\n%s", testkit.Deployment)
	}
	js, stderr, err := runCLI(t, labelled, append(args, "-o", "json")...)
	if err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	var got []wording.Admission
	if err := json.Unmarshal([]byte(js), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !got[0].Injected || got[0].Ambient == nil || got[0].Ambient.Joins || got[0].Ambient.Rule != "sidecar" || len(got[0].Ambient.RunTime) != 0 {
		t.Fatalf("the inject label in an ambient namespace: %+v", got)
	}
	out, stderr, err = runCLI(t, testkit.Deployment, "admit", "-f", "-", "-n", "shop", "--namespace-labels", "istio.io/dataplane-mode=ambient")
	if err != nil || !strings.Contains(out, "Does not join ambient: this installation has no CNI node agent with ambient enabled") {
		t.Fatalf("without the ambient profile: %v %s\n%s", err, stderr, out)
	}
	ja, stderr, err := runCLI(t, testkit.Deployment, append(args, "-o", "json", "--lang", "ja")...)
	if err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	var jaGot []wording.Admission
	if err := json.Unmarshal([]byte(ja), &jaGot); err != nil {
		t.Fatal(err)
	}
	if len(jaGot) != 1 || jaGot[0].Ambient == nil || !jaGot[0].Ambient.Joins || jaGot[0].Ambient.Selector != 2 || !strings.Contains(jaGot[0].Ambient.Text, "アンビエントに参加します") {
		t.Fatalf("ja: %+v", jaGot)
	}
}
