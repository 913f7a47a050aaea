package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/provenance"
	"github.com/sidecarlab/sidecarlab/i18n"
)

// TestExplainCommand: explain names the template line, the conditions and the annotation a
// field comes from, in the CLI's language; -o json is the engine's provenance of the chosen
// fields; --doc picks a document; a path the document lacks and a document that is not a
// workload are usage errors.
func TestExplainCommand(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"two.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n---\n" + podNamed("web"),
	})
	file := dir + "/two.yaml"
	cpu := "spec.containers[istio-proxy].resources.requests.cpu"
	out, _, err := runCLI(t, "", "explain", "-f", file, "--annotate", "sidecar.istio.io/proxyCPU=250m", cpu)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{cpu + "\n", "template sidecar (in resources), line ", "`sidecar.istio.io/proxyCPU`", "reads the annotation sidecar.istio.io/proxyCPU = 250m", "which ran"} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	ja, _, err := runEnv(t, langJa, "", "explain", "-f", file, "--annotate", "sidecar.istio.io/proxyCPU=250m", cpu)
	if err != nil || !strings.Contains(ja, i18n.For("ja").T("cli.explain.kind.annotation")+" sidecar.istio.io/proxyCPU = 250mを読む") || strings.Contains(ja, "reads") {
		t.Errorf("ja: %v\n%s", err, ja)
	}
	js, _, err := runCLI(t, "", "explain", "-f", file, "-o", "json", "metadata")
	var prs []engine.Provenance
	if err != nil || json.Unmarshal([]byte(js), &prs) != nil || len(prs) == 0 {
		t.Fatalf("json: %v\n%s", err, js)
	}
	for _, p := range prs {
		if p.Doc != 2 || !strings.HasPrefix(p.Path, "metadata") {
			t.Errorf("json: %+v", p)
		}
	}
	all, _, err := runCLI(t, "", "explain", "-f", file, "--doc", "2", "-o", "json")
	var every []engine.Provenance
	if err != nil || json.Unmarshal([]byte(all), &every) != nil || len(every) < 100 {
		t.Fatalf("--doc 2: %v, %d fields", err, len(every))
	}
	sources := map[provenance.Source]bool{}
	for _, p := range every {
		sources[p.Source] = true
	}
	if !sources[provenance.FromTemplate] || !sources[provenance.FromInput] || !sources[provenance.FromCode] || sources[provenance.Unknown] {
		t.Errorf("sources %v", sources)
	}
	if _, _, err := runCLI(t, "", "explain", "-f", file, "spec.nothing"); exitCodeOf(err) != 2 || !strings.Contains(errText(err), "spec.nothing") {
		t.Errorf("a path the document lacks: %v", err)
	}
	if _, _, err := runCLI(t, "", "explain", "-f", file, "--doc", "1"); exitCodeOf(err) != 2 || !strings.Contains(errText(err), "document 1") {
		t.Errorf("a ConfigMap: %v", err)
	}
}

// TestExplainKindsHaveWords: every kind of input has its words in every language.
func TestExplainKindsHaveWords(t *testing.T) {
	kinds := []provenance.InputKind{provenance.InputAnnotation, provenance.InputLabel, provenance.InputProxyConfig, provenance.InputMeshConfig, provenance.InputValues, provenance.InputDefault, provenance.InputDocument, provenance.InputComputed}
	for _, code := range i18n.Codes {
		for _, k := range kinds {
			if id := "cli.explain.kind." + string(k); i18n.For(code).T(id) == id {
				t.Errorf("%s: no words for %s", code, k)
			}
		}
	}
	noMissing(t)
}

// TestExplainTextSaysWhoseTemplate: a line of the installation's own template is said to be
// the installation's, a line of Istio's own to be Istio's template.
func TestExplainTextSaysWhoseTemplate(t *testing.T) {
	c := &cli{lang: i18n.For("en")}
	mesh := explainText(c, []engine.Provenance{{Path: "a", Source: provenance.FromTemplate, Template: "logger", Whose: "mesh", Line: 4, Text: "image: busybox"}})
	istio := explainText(c, []engine.Provenance{{Path: "a", Source: provenance.FromTemplate, Template: "sidecar", Whose: "istio", Line: 4, Text: "x"}})
	if !strings.Contains(mesh, "your installation's template logger, line 4: image: busybox") || !strings.Contains(istio, "  template sidecar, line 4: x") {
		t.Errorf("mesh %q, istio %q", mesh, istio)
	}
}

// TestExplainRefusedAndEmpty: a document Istio refuses is explained by Istio's refusal, as
// inject says it (exit 1); an input with no workload Istio injects says so (exit 2).
func TestExplainRefusedAndEmpty(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"cm.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n",
		"bad.yaml": "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations:\n    sidecar.istio.io/interceptionMode: SIDEWAYS\nspec:\n  containers:\n  - name: app\n    image: nginx\n",
	})
	_, _, err := runCLI(t, "", "explain", "-f", dir+"/bad.yaml")
	_, _, injectErr := runCLI(t, "", "inject", "-f", dir+"/bad.yaml")
	if exitCodeOf(err) != 1 || exitCodeOf(injectErr) != 1 || !strings.Contains(errText(err), "invalid value 'SIDEWAYS'") || !strings.Contains(errText(err), "document 1, line 1") {
		t.Errorf("refused: %d %v (inject %d)", exitCodeOf(err), err, exitCodeOf(injectErr))
	}
	if _, _, err := runCLI(t, "", "explain", "-f", dir+"/cm.yaml"); exitCodeOf(err) != 2 || !strings.Contains(errText(err), "no document of the input is a workload") {
		t.Errorf("no workload: %d %v", exitCodeOf(err), err)
	}
}
