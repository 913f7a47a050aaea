package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/upgrade"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

// olderMeshFile writes an older Istio's revisioned ConfigMaps, as kubectl prints them, to a file:
// rendered by the pinned istioctl with a proxy CPU request, a registry and tag of its own and hold,
// and testkit.OlderIstio's template files in place of today's.
func olderMeshFile(t *testing.T) string {
	t.Helper()
	bin, _ := istioctlWithDefaults(t)
	_, injectorConfig, values, mesh := canaryMesh(t, bin, "300m", "values.global.hub=registry.example.com/istio", "values.global.tag=1.31.0-alpha.1")
	list := testkit.MeshList(t, "canary", testkit.WithOlderTemplates(t, injectorConfig), values, mesh, map[string]string{"app.kubernetes.io/version": "1.31.0-alpha.1"})
	path := filepath.Join(t.TempDir(), "old-mesh.yaml")
	if err := os.WriteFile(path, []byte(list), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// twoApps are two Deployments, one whose app label ends in "_" (the older templates keep it in
// the canonical-name label, today's trim it) and one whose does not.
var twoApps = upgradeApp("web_") + "---\n" + upgradeApp("api")

func upgradeApp(app string) string {
	return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ` + strings.Trim(app, "_") + `
spec:
  selector:
    matchLabels: {app: "` + app + `"}
  template:
    metadata:
      labels: {app: "` + app + `"}
    spec:
      containers:
      - name: app
        image: nginx
`
}

const canonicalName = `spec.template.metadata.labels["service.istio.io/canonical-name"]`

// TestDiffUpgrade: `diff --upgrade --mesh-from` an older Istio's ConfigMaps says what it carries
// (the CPU) and what not (the registry and tag, which the release sets), and per document what
// changes: the canonical-name label only where the app ends in "_", and the images; -o json says
// the same. Carrying the registry and tag too leaves the second workload unchanged.
func TestDiffUpgrade(t *testing.T) {
	t.Parallel()
	meshFile := olderMeshFile(t)
	out, stderr, err := runCLI(t, twoApps, "diff", "--upgrade", "--mesh-from", meshFile, "-f", "-")
	if err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	docs := strings.Split(out, "\ndocument ")
	if len(docs) != 3 {
		t.Fatalf("want a head and two documents:\n%s", out)
	}
	for _, want := range []string{"# your mesh's templates (installed by Istio 1.31.0-alpha.1) run here with Istio " + engine.Version().Istio + "'s injector code", `# carried: global.proxy.resources.requests.cpu: "300m"`, `# not carried: global.hub: "registry.example.com/istio"`, `# not carried: global.tag: "1.31.0-alpha.1"`} {
		if !strings.Contains(docs[0], want) {
			t.Errorf("the head lacks %q:\n%s", want, docs[0])
		}
	}
	if !strings.Contains(docs[1], canonicalName) || strings.Contains(docs[2], canonicalName) || !strings.Contains(docs[2], "containers[istio-proxy].image") {
		t.Errorf("the documents' changes:\n%s", out)
	}
	js, _, err := runCLI(t, twoApps, "diff", "--upgrade", "--mesh-from", meshFile, "-f", "-", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var p upgrade.Preview
	if err := json.Unmarshal([]byte(js), &p); err != nil {
		t.Fatal(err)
	}
	paths := func(d upgrade.Document) []string {
		var out []string
		for _, c := range d.Changes {
			out = append(out, c.Path)
		}
		return out
	}
	if len(p.Documents) != 2 || !slices.Contains(paths(p.Documents[0]), canonicalName) || slices.Contains(paths(p.Documents[1]), canonicalName) || len(p.Plan.Keys) != 3 {
		t.Fatalf("-o json: %s", js)
	}
	out, _, err = runCLI(t, twoApps, "diff", "--upgrade", "--mesh-from", meshFile, "-f", "-", "--carry", "global.hub", "--carry", "global.tag")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "# carried: global.tag") || !strings.HasSuffix(out, "document 2: Deployment/api\n  (no change)\n") {
		t.Fatalf("carrying the image too:\n%s", out)
	}
	for _, args := range [][]string{{"--carry", "global.tag"}, {"--upgrade", "--unified", "--mesh-from", meshFile}} {
		if _, _, err := runCLI(t, twoApps, append([]string{"diff", "-f", "-"}, args...)...); exitCode(err) != 2 {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
	if _, _, err := runCLI(t, twoApps, "diff", "--upgrade", "-f", "-"); err == nil || !strings.Contains(err.Error(), "needs your mesh") {
		t.Errorf("--upgrade without a mesh: %v", err)
	}
}

// TestExplainUpgrade: `explain --upgrade` says for each field the upgrade changes why it is there
// on each side: the canonical-name label of the first document by a line of the older template
// that today's has not (and today's line that the older has not), the image by the same lines on
// both sides; --doc and PATH choose; -o json is the same fields; a path the upgrade does not
// change is a usage error, as --carry without --upgrade is; a side that fails is said, exit 1.
func TestExplainUpgrade(t *testing.T) {
	t.Parallel()
	meshFile := olderMeshFile(t)
	out, stderr, err := runCLI(t, twoApps, "explain", "--upgrade", "--mesh-from", meshFile, "-f", "-", "--doc", "1", canonicalName)
	if err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	if strings.Count(out, "lines of template sidecar that differ from the other side's:") != 2 || !strings.Contains(out, "your mesh (revision canary):") {
		t.Errorf("the label:\n%s", out)
	}
	out, _, err = runCLI(t, twoApps, "explain", "--upgrade", "--mesh-from", meshFile, "-f", "-", "--doc", "2", "spec.template.spec.containers[istio-proxy].image")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "the lines that wrote it are the same in both templates") || strings.Contains(out, "differ from the other side's") || !strings.Contains(out, "ProxyImage = registry.example.com/istio/proxyv2:1.31.0-alpha.1") {
		t.Errorf("the image:\n%s", out)
	}
	js, _, err := runCLI(t, twoApps, "explain", "--upgrade", "--mesh-from", meshFile, "-f", "-", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var whys []upgrade.Why
	if err := json.Unmarshal([]byte(js), &whys); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range whys {
		differ := ""
		if !strings.Contains(w.Path, "istio-init") { // the older template's init container's branches differ
			differ = fmt.Sprint(" ", len(w.OldDiffer["sidecar"]) > 0)
		}
		got = append(got, fmt.Sprintf("%d %s%s", w.Doc, w.Path, differ))
	}
	want := []string{"1 " + canonicalName + " true", "1 spec.template.spec.containers[istio-proxy].image false", "1 spec.template.spec.initContainers[istio-init].image",
		"2 spec.template.spec.containers[istio-proxy].image false", "2 spec.template.spec.initContainers[istio-init].image"}
	if !slices.Equal(got, want) {
		t.Errorf("-o json: %q, want %q", got, want)
	}
	if _, _, err := runCLI(t, twoApps, "explain", "--upgrade", "--mesh-from", meshFile, "-f", "-", "metadata.name"); exitCode(err) != 2 {
		t.Errorf("a path the upgrade does not change: %v", err)
	}
	if _, _, err := runCLI(t, twoApps, "explain", "-f", "-", "--carry", "global.tag"); exitCode(err) != 2 {
		t.Errorf("--carry without --upgrade: %v", err)
	}
	// A mesh whose template the injector code cannot run (an older Istio's field, as real meshes
	// of 1.17 and 1.18 have): its side failed, said as diff --upgrade says it, and exit 1.
	bin, _ := istioctlWithDefaults(t)
	_, injectorConfig, values, mesh := canaryMesh(t, bin, "300m")
	broken := strings.Replace(injectorConfig, "{{- if or (isset .ObjectMeta.Annotations `sidecar.istio.io/proxyCPU`)", "{{ .EstimatedConcurrency }}{{- if or (isset .ObjectMeta.Annotations `sidecar.istio.io/proxyCPU`)", 1)
	if broken == injectorConfig {
		t.Fatal("the template to break is not there")
	}
	brokenFile := filepath.Join(t.TempDir(), "broken-mesh.yaml")
	if err := os.WriteFile(brokenFile, []byte(testkit.MeshList(t, "canary", broken, values, mesh, nil)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, err = runCLI(t, twoApps, "explain", "--upgrade", "--mesh-from", brokenFile, "-f", "-")
	if exitCode(err) != 1 || strings.Count(stderr, "your mesh: injection failed") != 2 || !strings.Contains(stderr, "EstimatedConcurrency") {
		t.Errorf("a mesh whose side fails: %v\n%s", err, stderr)
	}
}
