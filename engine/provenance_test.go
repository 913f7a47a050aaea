package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	yaml "go.yaml.in/yaml/v3"
	"istio.io/istio/pkg/kube/inject"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/sidecarlab/sidecarlab/engine/diff"
	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/engine/provenance"
	"github.com/sidecarlab/sidecarlab/engine/yamldoc"
)

// TestObservedTemplatesAreIstios: over Istio's golden corpus and ours, injecting with the
// templates observed (provenance.Observe) gives byte for byte what injecting without does, and
// each template run Istio made, traced over the data Istio gave it, writes exactly what the
// template writes over that data, every byte of it known by its node.
func TestObservedTemplatesAreIstios(t *testing.T) {
	e := testEngine(t)
	in := e.def
	observed, o, err := provenance.Observe(in.templates)
	if err != nil {
		t.Fatal(err)
	}
	watched := *in
	watched.templates = observed
	traced := map[string]*provenance.Traced{}
	runs, docs := 0, 0
	corpusObjects(t, func(file string, obj runtime.Object) {
		before := len(o.Runs())
		want, _, _, wantErr := intoObject(context.Background(), in, nil, obj.DeepCopyObject())
		got, _, _, gotErr := intoObject(context.Background(), &watched, nil, obj.DeepCopyObject())
		wj, _ := json.Marshal(want)
		gj, _ := json.Marshal(got)
		if string(wj) != string(gj) || (wantErr == nil) != (gotErr == nil) || (wantErr != nil && errorHead(wantErr) != errorHead(gotErr)) {
			t.Errorf("%s: observed injection differs: %v / %v", file, wantErr, gotErr)
			return
		}
		docs++
		for _, r := range o.Runs()[before:] {
			runs++
			tr := traced[r.Template]
			if tr == nil {
				if tr, err = provenance.Trace(in.templates[r.Template]); err != nil {
					t.Fatal(err)
				}
				traced[r.Template] = tr
			}
			var plain strings.Builder
			if err := in.templates[r.Template].Execute(&plain, r.Data); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			rendering, err := tr.Run(r.Data)
			if err != nil || rendering.Text != plain.String() {
				t.Errorf("%s: traced %s differs from the template's own output (%v)", file, r.Template, err)
				continue
			}
			for _, f := range rendering.Fields() {
				if f.Value == nil {
					t.Errorf("%s: %s: %s has no node", file, r.Template, f.Path)
				}
			}
		}
	})
	t.Logf("%d documents, %d template runs", docs, runs)
	if docs < 100 || runs < 100 {
		t.Fatalf("%d documents injected, %d template runs observed", docs, runs)
	}
}

// errorHead is an error's text before "; have": Istio lists the templates it has in its map's
// order, which is not the same twice.
func errorHead(err error) string {
	head, _, _ := strings.Cut(err.Error(), "; have")
	return head
}

// TestExplainAttributesEveryField: over Istio's golden corpus and ours, in kube-inject, native
// and webhook mode (on Kubernetes 1.34, native sidecars, and 1.32, classic), every leaf of every injected document is attributed — to a template line, to the document as
// given, or to a named function of Istio's code — none unknown; a template's leaf names a line
// of that template, and at least the proxy's image comes from a template.
func TestExplainAttributesEveryField(t *testing.T) {
	e := testEngine(t)
	counts := map[provenance.Source]int{}
	modes := []Settings{{}, {Mode: ModeNative}, {Mode: ModeWebhook, KubernetesVersion: "1.34"}, {Mode: ModeWebhook, KubernetesVersion: "1.32"}}
	for _, file := range corpusManifests(t) {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range modes {
			prs, err := e.Explain(context.Background(), raw, nil, s)
			if err != nil {
				continue // a request Inject refuses as a whole
			}
			for _, f := range prs {
				counts[f.Source]++
				switch f.Source {
				case provenance.Unknown:
					t.Errorf("%s: document %d: %s has no source", filepath.Base(file), f.Doc, f.Path)
				case provenance.FromTemplate:
					if f.Template == "" || f.Line < 1 || f.Text == "" || !slices.Contains(f.Lines, f.Line) {
						t.Errorf("%s: %s: template %q line %d %q", filepath.Base(file), f.Path, f.Template, f.Line, f.Text)
					}
				case provenance.FromCode:
					if f.Code == nil || f.Code.Func == "" || !strings.HasPrefix(f.Code.URL, "https://github.com/") {
						t.Errorf("%s: %s: code %+v", filepath.Base(file), f.Path, f.Code)
					}
				}
			}
		}
	}
	t.Logf("%v", counts)
	if counts[provenance.FromTemplate] < 10000 || counts[provenance.FromInput] < 1000 || counts[provenance.FromCode] < 100 {
		t.Errorf("too few fields attributed: %v", counts)
	}
}

// TestExplainWebhookMode: the webhook mode is explained too, and a default the API server gave
// the object before the webhook saw it, and that the webhook kept (the terminationMessagePath of
// the user's istio-proxy container, which Istio merges into its own) is the API server's, named
// by Kubernetes' defaulting function.
func TestExplainWebhookMode(t *testing.T) {
	e := testEngine(t)
	pod := []byte("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: app\n    image: nginx\n  - name: istio-proxy\n    image: auto\n    resources:\n      requests:\n        cpu: 123m\n")
	prs, err := e.Explain(context.Background(), pod, nil, Settings{Mode: ModeWebhook, KubernetesVersion: "1.34"})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range prs {
		if p.Path == "spec.initContainers[istio-proxy].terminationMessagePath" {
			found = p.Source == provenance.FromCode && p.Code != nil && p.Code.Func == "RegisterDefaults" && strings.Contains(p.Code.URL, "kubernetes/kubernetes")
		}
		if p.Source == provenance.Unknown {
			t.Errorf("%s has no source", p.Path)
		}
	}
	if !found {
		t.Error("the proxy's terminationMessagePath is not the API server's default")
	}
}

// TestAttributionsHaveConsequences: an attribution is checked by what it claims, not by its
// text. Over Istio's golden corpus and ours, for each template line that wrote a field's value
// and each branch around it (each once, on the first run that wrote through it), the template
// is run again over the same data with that line left out, or that branch flipped, and the
// field must change (go, or take another value) — or, for a branch, be written by the other
// list of that same branch, with the same value: both lists write the field, and for this data
// they agree ({{ if $tproxy }} "1337" {{ else }} {{ .ProxyUID | default "1337" }}).
func TestAttributionsHaveConsequences(t *testing.T) {
	e := testEngine(t)
	in := e.def
	observed, o, err := provenance.Observe(in.templates)
	if err != nil {
		t.Fatal(err)
	}
	watched := *in
	watched.templates = observed
	leaves := func(text string) map[string]string {
		var v any
		if err := yaml.Unmarshal([]byte(text), &v); err != nil {
			return nil
		}
		out := map[string]string{}
		for _, l := range provenance.Leaves("", v) {
			b, _ := json.Marshal(l.Value)
			out[l.Path] = string(b)
		}
		return out
	}
	lines, branches := map[string]bool{}, map[string]bool{}
	checkedOther := false
	var unchanged []string
	corpusObjects(t, func(file string, obj runtime.Object) {
		before := len(o.Runs())
		if _, _, _, err := intoObject(context.Background(), &watched, nil, obj); err != nil {
			return
		}
		for _, r := range o.Runs()[before:] {
			tmpl := in.templates[r.Template]
			tr, err := provenance.Trace(tmpl)
			if err != nil {
				t.Fatal(err)
			}
			rendering, err := tr.Run(r.Data)
			if err != nil {
				t.Fatal(err)
			}
			was := leaves(rendering.Text)
			changes := func(edit provenance.Edit, path string, branch *provenance.Condition) bool {
				variant, err := provenance.Trace(tmpl, edit)
				if err != nil {
					t.Fatal(err)
				}
				out, err := variant.Run(r.Data)
				if err != nil {
					return true // the template no longer runs: the field is not written
				}
				if now, ok := leaves(out.Text)[path]; !ok || now != was[path] {
					return true
				}
				if branch == nil {
					return false
				}
				for _, f := range out.Fields() {
					if f.Path == path && f.Value != nil && slices.ContainsFunc(f.Value.Conditions, func(c provenance.Condition) bool { return c.ID == branch.ID && c.Else != branch.Else }) {
						return true // the other list writes it too
					}
				}
				return false
			}
			fields := rendering.Fields()
			// The check trips: leaving out the line of another field's value leaves this one
			// as it was.
			if first, last := fields[0], fields[len(fields)-1]; !checkedOther && first.Value != nil && last.Value != nil && first.Value.ID != last.Value.ID {
				checkedOther = true
				if changes(provenance.Dropping(first.Value.ID, first.ValueLine), last.Path, nil) {
					t.Errorf("%s: leaving out %s's line changed %s", filepath.Base(file), first.Path, last.Path)
				}
			}
			for _, f := range fields {
				if f.Value == nil {
					continue
				}
				key := fmt.Sprintf("%s %d %d", r.Template, f.Value.ID, f.ValueLine)
				if !lines[key] {
					lines[key] = true
					if !changes(provenance.Dropping(f.Value.ID, f.ValueLine), f.Path, nil) {
						unchanged = append(unchanged, fmt.Sprintf("%s: %s line %d (%s) without it: %s unchanged", filepath.Base(file), r.Template, f.ValueLine, f.Value.Text, f.Path))
					}
				}
				for _, c := range f.Value.Conditions {
					key := fmt.Sprintf("%s %d", r.Template, c.ID)
					if branches[key] {
						continue
					}
					branches[key] = true
					if !changes(provenance.Flipping(c.ID), f.Path, &c) {
						unchanged = append(unchanged, fmt.Sprintf("%s: %s line %d {{%s %s}} flipped: %s unchanged", filepath.Base(file), r.Template, c.Line, c.Kind, c.Text, f.Path))
					}
				}
			}
		}
	})
	for _, u := range unchanged {
		t.Error(u)
	}
	t.Logf("%d lines and %d branches checked", len(lines), len(branches))
	if len(lines) < 200 || len(branches) < 50 || !checkedOther {
		t.Errorf("%d lines and %d branches checked: too few", len(lines), len(branches))
	}
}

// TestLabFieldsReadTheirAnnotation: for each row of the lab table, every field its annotation
// adds or changes is attributed to template lines or conditions that read that annotation (for
// proxy.istio.io/config, the ProxyConfig it is merged into), or is the annotation itself, as
// the document gives it — or is the status annotation, which Istio's code writes from the
// containers injected.
func TestLabFieldsReadTheirAnnotation(t *testing.T) {
	e := testEngine(t)
	base := readFile(t, "testdata/corpus/lab-base.yaml")
	for _, row := range labRows {
		t.Run(row.name, func(t *testing.T) {
			tl, err := e.Timeline(t.Context(), base, []input.Step{row.step}, Settings{})
			if err != nil {
				t.Fatal(err)
			}
			prs, err := e.Explain(t.Context(), base, []input.Step{row.step}, Settings{})
			if err != nil {
				t.Fatal(err)
			}
			reads := func(f Provenance) bool {
				return slices.ContainsFunc(f.Inputs, func(in ProvenanceInput) bool {
					if row.step.Key == "proxy.istio.io/config" {
						return in.Kind == provenance.InputProxyConfig
					}
					// The annotation, with the value the step gave it.
					return in.Kind == provenance.InputAnnotation && in.Name == row.step.Key && in.Value == row.step.Value
				})
			}
			checked := 0
			for _, c := range changesOf(t, tl.Steps[1]) {
				if c.Kind == diff.Removed || c.Kind == diff.Moved {
					continue
				}
				var leaves []Provenance
				for _, f := range prs {
					under := f.Path == c.Path || strings.HasPrefix(f.Path, c.Path+".") || strings.HasPrefix(f.Path, c.Path+"[")
					if c.Flag != "" {
						// An istio-iptables flag's value: the args list's element with it.
						args := c.Field()
						under = strings.HasPrefix(f.Path, args+"[") && f.Source == provenance.FromTemplate && strings.Contains(f.Text, "excludeOutboundPorts")
					}
					if under {
						leaves = append(leaves, f)
					}
				}
				if len(leaves) == 0 {
					t.Errorf("%s: no field explained", c.Path)
				}
				for _, f := range leaves {
					checked++
					switch {
					case f.Source == provenance.FromInput && f.Path == yamldoc.JoinKey("spec.template.metadata.annotations", row.step.Key):
					case f.Source == provenance.FromTemplate && reads(f):
					case f.Source == provenance.FromCode && f.Code.Func == "applyMetadata":
						// The status annotation lists the injected containers, whatever made them.
					default:
						t.Errorf("%s: %s, line %d %q, reads %v, not %s", f.Path, f.Source, f.Line, f.Text, f.Inputs, row.step)
					}
				}
			}
			if checked == 0 && row.name != "inject-false" {
				t.Error("no field checked")
			}
		})
	}
}

// injectObserved injects manifest as Inject does, on one goroutine, with the installation's
// templates observed (provenance.Observe) as Explain injects: what the istioctl comparison holds
// to istioctl's output too.
func injectObserved(t testing.TB, e *Engine, manifest []byte, s Settings) (*Injection, error) {
	t.Helper()
	p, err := e.prepare(t.Context(), manifest, nil, s)
	if err != nil {
		return nil, err
	}
	observed, _, err := provenance.Observe(p.install.templates)
	if err != nil {
		return nil, err
	}
	watched := *p.install
	watched.templates = observed
	p.install = &watched
	docs, err := e.injectAll(t.Context(), p, nil, 1)
	if err != nil {
		return nil, err
	}
	return &Injection{Documents: docs}, nil
}

// TestTryStep: a branch that reads only pod annotations suggests the first, with the catalog's
// example; one that reads a single ProxyConfig field suggests setting it true through
// proxy.istio.io/config; one that also reads a values key, or several ProxyConfig fields,
// suggests nothing (no step sets them).
func TestTryStep(t *testing.T) {
	cat := testEngine(t).Catalog()
	ann := func(k string) provenance.Input { return provenance.Input{Kind: provenance.InputAnnotation, Name: k} }
	pc := func(f string) provenance.Input { return provenance.Input{Kind: provenance.InputProxyConfig, Name: f} }
	if s := tryStep([]provenance.Input{ann("sidecar.istio.io/proxyCPU"), ann("sidecar.istio.io/proxyMemory")}, cat); s == nil || s.Key != "sidecar.istio.io/proxyCPU" || s.Value == "" {
		t.Errorf("annotations: %+v", s)
	}
	if s := tryStep([]provenance.Input{pc("HoldApplicationUntilProxyStarts")}, cat); s == nil || *s != (input.Step{Key: "proxy.istio.io/config", Value: "holdApplicationUntilProxyStarts: true"}) {
		t.Errorf("a ProxyConfig field: %+v", s)
	}
	for _, ins := range [][]provenance.Input{
		{ann("sidecar.istio.io/proxyCPU"), {Kind: provenance.InputValues, Name: "global.proxy.resources"}},
		{pc("A"), pc("B")}, {pc("")}, nil,
	} {
		if s := tryStep(ins, cat); s != nil {
			t.Errorf("%v: %+v", ins, s)
		}
	}
}

// TestExplainConcurrent: explanations running at once on one installation (its traced templates
// shared, its observed ones pooled) each say what they say alone.
func TestExplainConcurrent(t *testing.T) {
	e := testEngine(t)
	manifests := [][]byte{readFile(t, "testdata/corpus/lab-base.yaml"), readFile(t, "testdata/corpus/pod.yaml"), readFile(t, "testdata/corpus/deployment.yaml")}
	alone := make([][]Provenance, len(manifests))
	for i, m := range manifests {
		var err error
		if alone[i], err = e.Explain(t.Context(), m, nil, Settings{}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for k := range 4 * len(manifests) {
		wg.Go(func() {
			i := k % len(manifests)
			got, err := e.Explain(t.Context(), manifests[i], nil, Settings{})
			if err != nil || !reflect.DeepEqual(got, alone[i]) {
				t.Errorf("manifest %d at once with others: %v, %d fields, want %d", i, err, len(got), len(alone[i]))
			}
		})
	}
	wg.Wait()
}

// corpusObjects calls each with every object of Istio's golden corpus and ours that Istio's
// reader reads (each document of each manifest on its own), and its file.
func corpusObjects(t *testing.T, each func(file string, obj runtime.Object)) {
	t.Helper()
	for _, file := range corpusManifests(t) {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		split, err := yamldoc.Split(raw)
		if err != nil {
			continue
		}
		for _, d := range split {
			if obj, err := inject.FromRawToObject(d.Raw); err == nil {
				each(file, obj)
			}
		}
	}
}

// TestExplainProxyConfigInputs: a ProxyConfig field a line reads is said with the value Istio
// merged and whose it is: the pod's proxy.istio.io/config (with its line, when the manifest
// writes it) or the mesh's defaultConfig; an enum by its name; a field ProxyConfig lacks is "";
// a values key and a mesh config field with the values the template was given.
func TestExplainProxyConfigInputs(t *testing.T) {
	e := testEngine(t)
	base := string(readFile(t, "testdata/corpus/lab-base.yaml"))
	written := strings.Replace(base, "    metadata:\n      labels:\n        app: lab\n", "    metadata:\n      labels:\n        app: lab\n      annotations:\n        proxy.istio.io/config: |\n          holdApplicationUntilProxyStarts: true\n", 1)
	if written == base {
		t.Fatal("the lab's manifest changed: write the annotation into it another way")
	}
	find := func(prs []Provenance, path, field string) (ProvenanceInput, bool) {
		for _, p := range prs {
			if p.Path != path {
				continue
			}
			for _, in := range p.Inputs {
				if in.Kind == provenance.InputProxyConfig && in.Name == field {
					return in, true
				}
			}
		}
		return ProvenanceInput{}, false
	}
	prs, err := e.Explain(t.Context(), []byte(written), nil, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	hold, ok := find(prs, "spec.template.spec.containers[istio-proxy].lifecycle.postStart.exec.command[0]", "HoldApplicationUntilProxyStarts")
	if !ok || hold.Value != "true" || hold.From != "pod" || hold.Line != 14 {
		t.Errorf("hold: %+v %v", hold, ok)
	}
	var mode ProvenanceInput
	for _, p := range prs {
		if in, ok := find([]Provenance{p}, p.Path, "InterceptionMode"); ok {
			mode = in
			break
		}
	}
	if mode.Value != "REDIRECT" || mode.From != "mesh" {
		t.Errorf("interception mode: %+v", mode)
	}
	// A values key and a mesh config field, with the values Istio gave the template.
	saw := map[ProvenanceInput]bool{}
	for _, p := range prs {
		for _, in := range p.Inputs {
			saw[in] = true
		}
	}
	for _, want := range []ProvenanceInput{
		{Kind: provenance.InputValues, Name: "global.pilotCertProvider", Value: "istiod"},
		{Kind: provenance.InputMeshConfig, Name: "TrustDomain", Value: "cluster.local"},
	} {
		if !saw[want] {
			t.Errorf("no line reads %+v", want)
		}
	}
	if got := protoField(e.def.mesh.GetDefaultConfig(), "NoSuchField"); got != "" {
		t.Errorf("a field ProxyConfig lacks: %q", got)
	}
}

// TestExplainOwnTemplate: a template an installation brings (not Istio's) is explained by its
// own lines, and says whose it is; Istio's own says it is Istio's.
func TestExplainOwnTemplate(t *testing.T) {
	e := testEngine(t)
	prs, err := e.Explain(t.Context(), readFile(t, "testdata/corpus/lab-base.yaml"), []input.Step{{Key: "inject.istio.io/templates", Value: "sidecar,logger"}}, Settings{Install: InstallOptions{Overlay: otherTemplates}})
	if err != nil {
		t.Fatal(err)
	}
	var logger, proxy *Provenance
	for i, p := range prs {
		switch p.Path {
		case "spec.template.spec.containers[logger].image":
			logger = &prs[i]
		case "spec.template.spec.containers[istio-proxy].image":
			proxy = &prs[i]
		}
	}
	if logger == nil || logger.Source != provenance.FromTemplate || logger.Template != "logger" || logger.Whose != "mesh" || logger.Line != 4 || strings.TrimSpace(logger.Text) != "image: busybox" {
		t.Errorf("the logger's image: %+v", logger)
	}
	if proxy == nil || proxy.Template != "sidecar" || proxy.Whose != "istio" {
		t.Errorf("the proxy's image: %+v", proxy)
	}
}

// TestExplainRefused: a document Istio refuses is not explained; when no document is, Istio's
// refusal of the first is the answer (the document's error, as Inject has it); beside a document
// Istio injects, that one is explained.
func TestExplainRefused(t *testing.T) {
	e := testEngine(t)
	bad := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations:\n    sidecar.istio.io/interceptionMode: SIDEWAYS\nspec:\n  containers:\n  - name: app\n    image: nginx\n"
	_, err := e.Explain(t.Context(), []byte(bad), nil, Settings{})
	r := mustInject(t, e, []byte(bad), nil, Settings{})
	var ie *input.Error
	if !errors.As(err, &ie) || len(r.Errors()) != 1 || ie.Error() != r.Errors()[0].Error() {
		t.Fatalf("explain: %v; inject: %v", err, r.Errors())
	}
	prs, err := e.Explain(t.Context(), []byte(bad+"---\n"+string(readFile(t, "testdata/corpus/pod.yaml"))), nil, Settings{})
	if err != nil || len(prs) == 0 || prs[0].Doc != 2 {
		t.Fatalf("beside a good document: %v, %d fields", err, len(prs))
	}
}

// TestInputAttributionsHaveConsequences: a leaf attributed to the manifest is checked by what it
// claims. Over Istio's golden corpus and ours, for the first leaves of each document that the
// explanation says the manifest gives, the document is injected again with that leaf's value
// changed (a string with "-x" after it, a number plus one, a boolean flipped), and the output's
// leaf must change with it (or go, for a name that named its element, or Istio refuse the new
// value); another leaf the manifest gives stays as it was (the check trips).
func TestInputAttributionsHaveConsequences(t *testing.T) {
	e := testEngine(t)
	const perDoc = 3
	outLeaves := func(manifest []byte) (map[string]string, bool) {
		inj, err := e.Inject(t.Context(), manifest, nil, Settings{})
		if err != nil || len(inj.Documents) != 1 || inj.Documents[0].Error != nil {
			return nil, false
		}
		var v any
		if err := yaml.Unmarshal([]byte(inj.Documents[0].Output()), &v); err != nil {
			return nil, false
		}
		out := map[string]string{}
		for _, l := range provenance.Leaves("", v) {
			b, _ := json.Marshal(l.Value)
			out[l.Path] = string(b)
		}
		return out, true
	}
	checked, refused, tripped := 0, 0, false
	for _, file := range corpusManifests(t) {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		prs, err := e.Explain(t.Context(), raw, nil, Settings{})
		if err != nil {
			continue // Istio refuses every document of it
		}
		chunks, err := splitDocuments(raw)
		if err != nil {
			t.Fatal(err)
		}
		byDoc := map[int][]Provenance{}
		for _, p := range prs {
			if p.Source == provenance.FromInput && !strings.HasPrefix(p.Path, "items[") && len(byDoc[p.Doc]) < perDoc {
				byDoc[p.Doc] = append(byDoc[p.Doc], p)
			}
		}
		for doc, given := range byDoc {
			var obj any
			if err := yaml.Unmarshal(chunks[doc-1].raw, &obj); err != nil {
				t.Fatal(err)
			}
			one, _ := json.Marshal(obj)
			was, ok := outLeaves(one)
			if !ok {
				continue
			}
			for i, p := range given {
				changed, ok := changeLeaf(obj, p.Path)
				if !ok {
					t.Errorf("%s doc %d: %s is not a leaf of the manifest", filepath.Base(file), doc, p.Path)
					continue
				}
				manifest, _ := json.Marshal(changed)
				now, ok := outLeaves(manifest)
				if !ok {
					refused++
					continue
				}
				checked++
				if v, still := now[p.Path]; still && v == was[p.Path] {
					t.Errorf("%s doc %d: %s changed in the manifest, not in the output (%s)", filepath.Base(file), doc, p.Path, v)
				}
				if other := given[(i+1)%len(given)]; !tripped && other.Path != p.Path {
					if v, ok := now[other.Path]; ok && v == was[other.Path] {
						tripped = true // another leaf the manifest gives stays as it was
					}
				}
			}
		}
	}
	t.Logf("%d leaves checked, %d refused by Istio once changed", checked, refused)
	if checked < 100 || !tripped || refused > checked/10 {
		t.Errorf("%d leaves checked, %d refused, another leaf unchanged seen: %v", checked, refused, tripped)
	}
}

// changeLeaf is a copy of v (a document as JSON decodes it) with the leaf at path changed (a
// string with "-x" after it, a number plus one, a boolean flipped, anything else made "x"), the
// path named as provenance.Leaves names it.
func changeLeaf(v any, path string) (any, bool) {
	var b []byte
	b, _ = json.Marshal(v)
	var c any
	_ = json.Unmarshal(b, &c)
	found := false
	var walk func(at string, v any, set func(any))
	walk = func(at string, v any, set func(any)) {
		switch x := v.(type) {
		case map[string]any:
			if len(x) > 0 {
				for k := range x {
					walk(yamldoc.JoinKey(at, k), x[k], func(n any) { x[k] = n })
				}
				return
			}
		case []any:
			if len(x) > 0 {
				named, byName := diff.Names(x)
				for i := range x {
					p := at + "[" + strconv.Itoa(i) + "]"
					if byName {
						p = at + "[" + named[i] + "]"
					}
					walk(p, x[i], func(n any) { x[i] = n })
				}
				return
			}
		}
		if at != path {
			return
		}
		found = true
		switch x := v.(type) {
		case string:
			set(x + "-x")
		case float64:
			set(x + 1)
		case bool:
			set(!x)
		default:
			set("x")
		}
	}
	walk("", c, func(any) {})
	return c, found
}
