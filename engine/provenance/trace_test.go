package provenance

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/template"
)

// testTemplate has what Istio's templates have: a {{ define }} called by {{ template }}, an if
// with an else, a range, actions and text on the same line, trimmed and untrimmed delimiters.
const testTemplate = `{{- define "res" }}
      cpu: {{ .CPU | quote }}
{{- end }}
metadata:
  labels:
    app: {{ .App }}
{{- if .Hold }}
  annotations:
    hold: "true"
{{- else }}
  annotations:
    hold: "false"
{{- end }}
spec:
  containers:
  - name: proxy
    resources:
      {{- template "res" . }}
{{- range .Ports }}
  - name: p{{ . }}
{{- end }}
`

type testData struct {
	App, CPU string
	Hold     bool
	Ports    []int
}

func parseTest(t *testing.T, text string) *template.Template {
	t.Helper()
	tmpl, err := template.New("sidecar").Funcs(template.FuncMap{"quote": strconv.Quote}).Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return tmpl
}

// TestTraceIsTheTemplatesOwnOutput: the traced template writes, byte for byte, what the
// template writes, on both branches; the original template is left as it was.
func TestTraceIsTheTemplatesOwnOutput(t *testing.T) {
	tmpl := parseTest(t, testTemplate)
	tr, err := Trace(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []testData{{App: "web", CPU: "100m", Hold: true, Ports: []int{80, 443}}, {App: "db", CPU: "1"}} {
		var want strings.Builder
		if err := tmpl.Execute(&want, d); err != nil {
			t.Fatal(err)
		}
		r, err := tr.Run(d)
		if err != nil {
			t.Fatal(err)
		}
		if r.Text != want.String() {
			t.Errorf("traced output differs:\n%s\nwant:\n%s", r.Text, want.String())
		}
		covered := 0
		for _, s := range r.Spans {
			covered += s.End - s.Start
		}
		if covered != len(r.Text) {
			t.Errorf("%d of %d bytes have a node", covered, len(r.Text))
		}
	}
	if strings.Contains(tmpl.Tree.Root.String(), markFunc) {
		t.Error("the original template was changed")
	}
}

// TestFieldsNameTheirLines: each field of the rendering names the template line and node that
// wrote its value and its key, the branches it sits in and which of their lists ran, through
// a {{ template }} call and a range.
func TestFieldsNameTheirLines(t *testing.T) {
	tr, err := Trace(parseTest(t, testTemplate))
	if err != nil {
		t.Fatal(err)
	}
	for _, hold := range []bool{true, false} {
		r, err := tr.Run(testData{App: "web", CPU: "100m", Hold: hold, Ports: []int{80}})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]Field{}
		for _, f := range r.Fields() {
			got[f.Path] = f
		}
		app := got["metadata.labels.app"]
		if app.Value == nil || !app.Value.Action || app.Value.Text != "{{.App}}" || app.ValueLine != 6 || app.KeyLine != 6 || len(app.Value.Conditions) != 0 {
			t.Errorf("app: %+v %+v", app, app.Value)
		}
		h := got["metadata.annotations.hold"]
		wantLine := map[bool]int{true: 9, false: 12}[hold]
		if h.Value == nil || h.Value.Action || h.ValueLine != wantLine || len(h.Value.Conditions) != 1 {
			t.Fatalf("hold=%v: %+v", hold, h)
		}
		if c := h.Value.Conditions[0]; c.Kind != "if" || c.Text != ".Hold" || c.Line != 7 || c.Else == hold {
			t.Errorf("hold=%v: condition %+v", hold, c)
		}
		cpu := got["spec.containers[proxy].resources.cpu"]
		if cpu.Value == nil || cpu.Value.Template != "res" || app.Value.Template != "" || cpu.ValueLine != 2 || cpu.Value.Text != "{{.CPU | quote}}" {
			t.Errorf("cpu: %+v %+v", cpu, cpu.Value)
		}
		port := got["spec.containers[p80].name"]
		if port.Value == nil || port.ValueLine != 20 || len(port.Value.Conditions) != 1 || port.Value.Conditions[0].Kind != "range" {
			t.Errorf("port: %+v %+v", port, port.Value)
		}
	}
}

// TestAttribute: a leaf the template wrote with the value the output has is the template's; one
// the input has, the input's; one Istio's code writes, the code's; one the template wrote with
// another value, or that nothing wrote, is not attributed to them; paths are the document's
// (a Deployment's pod under spec.template).
func TestAttribute(t *testing.T) {
	tmpl := parseTest(t, "metadata:\n  labels:\n    a: x\n    d: x\n")
	tr, err := Trace(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	r, err := tr.Run(nil)
	if err != nil {
		t.Fatal(err)
	}
	place := Place{Metadata: "spec.template.metadata", Spec: "spec.template.spec"}
	input := map[string]any{"spec": map[string]any{"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"b": "y"}}}}}
	output := map[string]any{"spec": map[string]any{"template": map[string]any{"metadata": map[string]any{
		"labels":      map[string]any{"a": "x", "b": "y", "c": "z", "d": "changed"},
		"annotations": map[string]any{"sidecar.istio.io/status": "{}"},
	}}}}
	got := map[string]Attribution{}
	for _, a := range Attribute(output, input, nil, place, []Named{{Template: "sidecar", Rendering: r}}) {
		got[a.Path] = a
	}
	want := map[string]Source{
		"spec.template.metadata.labels.a": FromTemplate, "spec.template.metadata.labels.b": FromInput,
		"spec.template.metadata.labels.c": Unknown, "spec.template.metadata.labels.d": Unknown,
		`spec.template.metadata.annotations["sidecar.istio.io/status"]`: FromCode,
	}
	for p, s := range want {
		if got[p].Source != s {
			t.Errorf("%s: %s, want %s", p, got[p].Source, s)
		}
	}
	if a := got["spec.template.metadata.labels.a"]; a.Field.ValueLine != 3 {
		t.Errorf("a: line %d, want 3", a.Field.ValueLine)
	}
	if len(got) != len(want) {
		t.Errorf("%d leaves, want %d", len(got), len(want))
	}
}

// TestInputs: what an action and a condition read, as Istio's templates write it: an
// annotation by index, isset and annotation (with its default), a label, a ProxyConfig field, a
// values key, a literal default, through a variable and through a with's dot; a document field
// and a value Istio computes.
func TestInputs(t *testing.T) {
	funcs := template.FuncMap{
		"isset":      func(m map[string]string, k string) bool { _, ok := m[k]; return ok },
		"annotation": func(m any, k string, d any) any { return d },
		"default":    func(d, v any) any { return v },
	}
	text := "{{ $hold := .ProxyConfig.Hold }}" + // line 1
		"a: {{ index .ObjectMeta.Annotations `x/cpu` | default \"100m\" }}\n" + // line 1
		"{{- if isset .ObjectMeta.Annotations `x/on` }}\n" + // line 2
		"b: {{ index .ObjectMeta.Labels `app` }}\n" + // line 3
		"{{- end }}\n" +
		"{{- if $hold }}\n" + // line 5
		"c: {{ .Values.global.proxy.image }}\n" + // line 6
		"{{- end }}\n" +
		"{{- with annotation .ObjectMeta `x/mode` .MeshConfig.Mode }}\n" + // line 8
		"d: {{ . }}\n" + // line 9
		"{{- end }}\n" +
		"e: {{ .DeploymentMeta.Name }}-{{ .ProxyUID }}\n" // line 11
	tmpl, err := template.New("t").Funcs(funcs).Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := Trace(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	data := map[string]any{
		"ObjectMeta":     map[string]any{"Annotations": map[string]string{"x/cpu": "1", "x/on": ""}, "Labels": map[string]string{"app": "web"}},
		"ProxyConfig":    map[string]any{"Hold": true},
		"Values":         map[string]any{"global": map[string]any{"proxy": map[string]any{"image": "proxyv2"}}},
		"MeshConfig":     map[string]any{"Mode": "REDIRECT"},
		"DeploymentMeta": map[string]any{"Name": "web"},
		"ProxyUID":       1337,
	}
	r, err := tr.Run(data)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]Input{}
	for _, f := range r.Fields() {
		ins := slices.Clone(f.Value.Inputs)
		for _, c := range f.Value.Conditions {
			ins = append(ins, c.Inputs...)
		}
		got[f.Path] = ins
	}
	want := map[string][]Input{
		"a": {{InputAnnotation, "x/cpu"}, {InputDefault, "100m"}},
		"b": {{InputLabel, "app"}, {InputAnnotation, "x/on"}},
		"c": {{InputValues, "global.proxy.image"}, {InputProxyConfig, "Hold"}},
		"d": {{InputAnnotation, "x/mode"}, {InputMeshConfig, "Mode"}, {InputAnnotation, "x/mode"}, {InputMeshConfig, "Mode"}},
	}
	for p, w := range want {
		if !slices.Equal(got[p], w) {
			t.Errorf("%s reads %v, want %v", p, got[p], w)
		}
	}
	// e is written by two actions on one line; its value's node is the first of them.
	if e := got["e"]; !slices.Equal(e, []Input{{InputDocument, "DeploymentMeta.Name"}}) {
		t.Errorf("e reads %v", e)
	}
}
