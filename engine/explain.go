package engine

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/template"

	yaml "go.yaml.in/yaml/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"istio.io/api/annotation"
	meshconfig "istio.io/api/mesh/v1alpha1"
	"istio.io/istio/pkg/kube/inject"

	"github.com/sidecarlab/sidecarlab/engine/catalog"
	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/engine/provenance"
	"github.com/sidecarlab/sidecarlab/engine/yamldoc"
)

// Provenance is where one leaf of an injected document came from, as the CLI's explain and
// the API's provenance part write it.
type Provenance struct {
	// Doc is the document's index, from 1; Path the leaf's path, as the field diff writes it (a
	// List's items under items[i]).
	Doc  int    `json:"doc"`
	Path string `json:"path"`
	// Value is the leaf's value as text (a string as it is, anything else as JSON), cut as an
	// echoed value is (yamldoc.Clip).
	Value string `json:"value"`
	// Source is what put it there: a template, the document as given, or Istio's code.
	Source provenance.Source `json:"source"`
	// Template is the template Istio ran ("sidecar"), Define the {{ define }} in it the line is
	// in ("" for the template's own text); Line is the template's line that wrote the value,
	// Lines every line that wrote the field (its key's and its value's), and Text the value's
	// line as written.
	Template string `json:"template,omitempty"`
	// Whose says whose the template is: "istio" (the embedded Istio's own text) or "mesh" (an
	// installation's own, which its options or a mesh of the user's brought).
	Whose  string `json:"whose,omitempty"`
	Define string `json:"define,omitempty"`
	Line   int    `json:"line,omitempty"`
	Lines  []int  `json:"lines,omitempty"`
	Text   string `json:"text,omitempty"`
	// Conditions are the branches around the line, outermost first, and whether the branch's
	// own list ran (Taken) or its else.
	Conditions []ProvenanceCondition `json:"conditions,omitempty"`
	// Inputs are what the line and its conditions read.
	Inputs []ProvenanceInput `json:"inputs,omitempty"`
	// InputLine is, for a leaf the document gives, its line in the manifest.
	InputLine int `json:"inputLine,omitempty"`
	// Code is, for a leaf Istio's code writes, the function and its line in the pinned source.
	Code *ProvenanceCode `json:"code,omitempty"`
}

// ProvenanceCondition is one branch around a template line: what it reads, and, for one whose
// own list did not run and that reads only what an annotation step sets (pod annotations, or a
// ProxyConfig field through proxy.istio.io/config), a step that may take it (Try: the
// catalog's example value; a ProxyConfig field set to true). Whether it does is for the caller
// to see, by explaining again with the step (the why page shows only those that change the
// field).
type ProvenanceCondition struct {
	Kind   string            `json:"kind"`
	Text   string            `json:"text"`
	Line   int               `json:"line"`
	Taken  bool              `json:"taken"`
	Inputs []ProvenanceInput `json:"inputs,omitempty"`
	Try    *input.Step       `json:"try,omitempty"`
}

// ProvenanceInput is one input a template line reads: its kind and name, and, for an
// annotation or a label of the pod, its value (cut as an echoed value is: yamldoc.Clip) and its
// line in the manifest; for a default, its text; for a ProxyConfig field, the value Istio
// merged (the mesh's defaultConfig with the pod's proxy.istio.io/config over it) and whose.
type ProvenanceInput struct {
	Kind  provenance.InputKind `json:"kind"`
	Name  string               `json:"name"`
	Value string               `json:"value,omitempty"`
	Line  int                  `json:"line,omitempty"`
	// From says, for a ProxyConfig field, where its value came from: "pod" (the pod's
	// proxy.istio.io/config sets it; Line is that annotation's line) or "mesh" (the mesh's
	// defaultConfig, or Istio's default).
	From string `json:"from,omitempty"`
}

// ProvenanceCode is a function of Istio's (or a Kubernetes type) and its line in the pinned
// source.
type ProvenanceCode struct {
	Func string `json:"func"`
	URL  string `json:"url"`
}

// Explain injects manifest as Inject does, with Istio's templates observed as they run, and
// says where each leaf of each injected document came from, in every mode (in webhook mode, a
// default the API server gave the object is the API server's). A document Istio refuses has
// nothing to explain; when no document is explained, the first refusal is the answer, as Inject
// says it. A custom installation's templates run in the isolated worker, and so does its
// explanation (ExplainJob): it comes back through the worker's protocol, bounded as its every
// answer is.
func (e *Engine) Explain(ctx context.Context, manifest []byte, steps []input.Step, s Settings) ([]Provenance, error) {
	p, err := e.prepare(ctx, manifest, steps, s)
	if err != nil {
		return nil, err
	}
	if e.isolates(p) {
		return e.explainIsolated(ctx, p, manifest, steps)
	}
	return explainPrepared(ctx, p, steps, e.catalog)
}

// explainPrepared explains p's documents (Explain), in this process: cat is the catalog a
// condition's Try takes its example values from.
func explainPrepared(ctx context.Context, p *prepared, steps []input.Step, cat *catalog.Catalog) ([]Provenance, error) {
	ann := annotationsAt(steps, len(steps))
	out := []Provenance{}
	// refused is the first document Istio refused: the answer when no document is explained.
	var refused *input.Error
	for i, c := range p.chunks {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		d, obj := prepareChunk(c, i+1, ann)
		if d.Error != nil && refused == nil {
			refused = d.Error
		}
		if obj == nil || d.Error != nil {
			continue
		}
		objs, prefixes := []runtime.Object{obj}, []string{""}
		if l, ok := obj.(*corev1.List); ok {
			objs, prefixes = nil, nil
			for k, item := range l.Items {
				o, err := inject.FromRawToObject(item.Raw)
				if err != nil {
					continue
				}
				objs, prefixes = append(objs, o), append(prefixes, "items["+strconv.Itoa(k)+"]")
			}
		}
		text := yamldoc.ParseText(c.text)
		for k, o := range objs {
			fields, names, failed, err := explainObject(ctx, p, o)
			if err != nil {
				return nil, err
			}
			if failed != nil {
				if refused == nil {
					refused = finishChunk(d, o, nil, nil, nil, nil, failed).Error // as Inject says it
				}
				continue
			}
			read, _, _, _ := podTemplate(o)
			podSets := podProxyConfigKeys(read) // once for all the object's leaves
			place := placeOf(o)
			for _, f := range fields {
				path := prefixed(prefixes[k], f.Path)
				pr := Provenance{Doc: i + 1, Path: path, Source: f.Source, Value: leafText(f.Value)}
				switch f.Source {
				case provenance.FromTemplate:
					src := p.install.traced.text(names[f.Run].template, p.install.rawTemplates)
					pr.explainTemplate(f, names[f.Run], src.lines, src.whose, read, podSets, cat, func(field string) int {
						return docLine(c.line, text, prefixed(prefixes[k], field))
					}, place)
				case provenance.FromInput:
					pr.InputLine = docLine(c.line, text, path)
				case provenance.FromCode:
					pr.Code = &ProvenanceCode{Func: f.Code.Func, URL: f.Code.URL()}
				}
				out = append(out, pr)
			}
		}
	}
	if len(out) == 0 && refused != nil {
		return nil, refused
	}
	return out, nil
}

// FieldProvenance is the provenance of document doc (the first document all has, when doc is
// 0) at or under path (every leaf when path is ""): a path as the field diff writes it names a
// leaf, or everything under it. doc is the document chosen; found says all has it at all.
func FieldProvenance(all []Provenance, doc int, path string) (chosen []Provenance, _ int, found bool) {
	if doc == 0 && len(all) > 0 {
		doc = all[0].Doc
	}
	chosen = []Provenance{}
	for _, p := range all {
		if p.Doc != doc {
			continue
		}
		found = true
		if path == "" || p.Path == path || strings.HasPrefix(p.Path, path+".") || strings.HasPrefix(p.Path, path+"[") {
			chosen = append(chosen, p)
		}
	}
	return chosen, doc, found
}

// TemplateText is the text of the installation's injection template name, as Istio decoded it
// from the injector config ("" when it has none of that name): the lines a Provenance's Line
// counts.
func (in *Install) TemplateText(name string) string { return in.rawTemplates[name] }

// explainTemplate fills in a template's leaf: its template and lines, the line's text in the
// template's source, its conditions, and its inputs with the pod's annotations' and labels'
// values (read: the metadata Istio read them from) and lines (line: a document path's line).
func (pr *Provenance) explainTemplate(f provenance.Attribution, run explainedRun, source []string, whose string, read *metav1.ObjectMeta, podSets map[string]bool, cat *catalog.Catalog, line func(path string) int, place provenance.Place) {
	name := run.template
	node := f.Field.Value
	pr.Template, pr.Define, pr.Line = name, node.Template, f.Field.ValueLine
	pr.Whose = whose
	for _, l := range []int{f.Field.KeyLine, f.Field.ValueLine} {
		if l > 0 && !slices.Contains(pr.Lines, l) {
			pr.Lines = append(pr.Lines, l)
		}
	}
	slices.Sort(pr.Lines)
	if pr.Line >= 1 && pr.Line <= len(source) {
		pr.Text = yamldoc.Clip(source[pr.Line-1])
	}
	worded := func(ins []provenance.Input) []ProvenanceInput {
		var out []ProvenanceInput
		for _, in := range ins {
			if pi := inputOf(in, read, run, podSets, line, place); !slices.Contains(out, pi) {
				out = append(out, pi)
			}
		}
		return out
	}
	for _, c := range node.Conditions {
		pc := ProvenanceCondition{Kind: c.Kind, Text: c.Text, Line: c.Line, Taken: !c.Else, Inputs: worded(c.Inputs)}
		if c.Else {
			pc.Try = tryStep(c.Inputs, cat)
		}
		pr.Conditions = append(pr.Conditions, pc)
	}
	ins := slices.Clone(node.Inputs)
	for _, a := range f.Field.Also {
		ins = append(ins, a.Inputs...)
	}
	for _, c := range node.Conditions {
		ins = append(ins, c.Inputs...)
	}
	for _, pi := range worded(ins) {
		if !slices.Contains(pr.Inputs, pi) {
			pr.Inputs = append(pr.Inputs, pi)
		}
	}
}

// tryStep is an annotation step that may take a branch which reads ins, when they are only
// what a step sets: the first pod annotation, with the catalog's example value (or "true"); a
// single ProxyConfig field, set to true through proxy.istio.io/config. nil otherwise.
func tryStep(ins []provenance.Input, cat *catalog.Catalog) *input.Step {
	var annotations, fields []string
	for _, in := range ins {
		switch in.Kind {
		case provenance.InputAnnotation:
			annotations = append(annotations, in.Name)
		case provenance.InputProxyConfig:
			fields = append(fields, in.Name)
		case provenance.InputDefault:
		default:
			return nil
		}
	}
	switch {
	case len(annotations) > 0 && len(fields) == 0:
		v := "true"
		if a, ok := cat.Lookup(annotations[0]); ok && a.Example != "" {
			v = a.Example
		}
		return &input.Step{Key: annotations[0], Value: v}
	case len(fields) == 1 && len(annotations) == 0 && fields[0] != "" && !strings.Contains(fields[0], "."):
		return &input.Step{Key: annotation.ProxyConfig.Name, Value: strings.ToLower(fields[0][:1]) + fields[0][1:] + ": true"}
	}
	return nil
}

// inputOf is one input as a Provenance says it: an annotation's or label's value and manifest
// line (read: the metadata Istio read them from), a default's text.
func inputOf(in provenance.Input, read *metav1.ObjectMeta, run explainedRun, podSets map[string]bool, line func(path string) int, place provenance.Place) ProvenanceInput {
	pi := ProvenanceInput{Kind: in.Kind, Name: in.Name}
	if in.Kind == provenance.InputDefault {
		pi.Value = in.Name
	}
	switch {
	case in.Kind == provenance.InputValues:
		pi.Value = valuesField(run.values, in.Name)
	case in.Kind == provenance.InputMeshConfig && run.mesh != nil:
		pi.Value = protoField(run.mesh, in.Name)
	case in.Kind == provenance.InputComputed && run.data != nil:
		if v := reflect.ValueOf(run.data).Elem().FieldByName(in.Name); v.IsValid() && v.CanInterface() {
			pi.Value = leafText(v.Interface()) // what Istio computed, as the template read it
		}
	}
	if in.Kind == provenance.InputProxyConfig && in.Name != "" && run.proxyConfig != nil {
		pi.Value, pi.From = protoField(run.proxyConfig, in.Name), "mesh"
		// The pod's proxy.istio.io/config sets it: the pod's.
		if first, _, _ := strings.Cut(in.Name, "."); podSets[strings.ToLower(first[:1])+first[1:]] {
			pi.From = "pod"
			pi.Line = line(yamldoc.JoinKey(place.Metadata+".annotations", annotation.ProxyConfig.Name))
		}
	}
	var m map[string]string
	field := ""
	switch {
	case read == nil:
	case in.Kind == provenance.InputAnnotation:
		m, field = read.Annotations, "annotations"
	case in.Kind == provenance.InputLabel:
		m, field = read.Labels, "labels"
	}
	if v, ok := m[in.Name]; ok {
		pi.Value = yamldoc.Clip(v)
		pi.Line = line(yamldoc.JoinKey(place.Metadata+"."+field, in.Name))
	}
	return pi
}

// podProxyConfigKeys are the fields the pod's proxy.istio.io/config sets, by their names in it
// (holdApplicationUntilProxyStarts): read once for all of a leaf's inputs.
func podProxyConfigKeys(read *metav1.ObjectMeta) map[string]bool {
	if read == nil {
		return nil
	}
	v, ok := read.Annotations[annotation.ProxyConfig.Name]
	if !ok {
		return nil
	}
	var given map[string]any
	if yaml.Unmarshal([]byte(v), &given) != nil {
		return nil
	}
	out := make(map[string]bool, len(given))
	for k := range given {
		out[k] = true
	}
	return out
}

// valuesField is a values key's value, by its dotted path (global.proxy.resources), as text
// (leafText); "" when the values have no such key.
func valuesField(values map[string]any, path string) string {
	var v any = values
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		if v, ok = m[k]; !ok {
			return ""
		}
	}
	return leafText(v)
}

// protoField is a field of a ProxyConfig or a MeshConfig, by its Go path
// (HoldApplicationUntilProxyStarts, ProxyMetadata), as text: a wrapped value's own (true), an
// enum by its name, a message as protobuf JSON, anything else as JSON; clipped. "" when msg has
// no such field.
func protoField(msg proto.Message, path string) string {
	v := reflect.ValueOf(msg)
	for _, name := range strings.Split(path, ".") {
		for v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return ""
			}
			v = v.Elem()
		}
		if v.Kind() != reflect.Struct {
			return ""
		}
		if v = v.FieldByName(name); !v.IsValid() {
			return ""
		}
	}
	if v.Kind() == reflect.Pointer && v.IsNil() {
		return ""
	}
	if m, ok := v.Interface().(proto.Message); ok {
		if get := v.MethodByName("GetValue"); get.IsValid() {
			return leafText(get.Call(nil)[0].Interface())
		}
		b, err := protojson.Marshal(m)
		if err != nil {
			return ""
		}
		return yamldoc.Clip(string(b))
	}
	if e, ok := v.Interface().(protoreflect.Enum); ok {
		return string(e.Descriptor().Values().ByNumber(e.Number()).Name()) // REDIRECT, not 0
	}
	if v.Kind() == reflect.Map && v.Len() == 0 {
		return "{}"
	}
	return leafText(v.Interface())
}

// leafText is a leaf's value as text: a string as it is, anything else as JSON; clipped.
func leafText(v any) string {
	if s, ok := v.(string); ok {
		return yamldoc.Clip(s)
	}
	b, _ := json.Marshal(v)
	return yamldoc.Clip(string(b))
}

// docLine is the manifest's line of a document path (the document's text parsed, starting on
// the manifest's line first), or 0 when the text does not have the path itself.
func docLine(first int, text *yamldoc.Text, path string) int {
	loc := text.Find(path)
	if !loc.Exact {
		return 0
	}
	return first + loc.Line - 1
}

// explainedRun is one template run of an explanation: the template, and the ProxyConfig Istio
// gave it.
type explainedRun struct {
	template    string
	proxyConfig *meshconfig.ProxyConfig
	mesh        *meshconfig.MeshConfig
	values      map[string]any
	// data is the whole of what the template ran on, for the values Istio computed.
	data *inject.SidecarTemplateData
}

// explainObject injects one object with the templates observed and attributes its leaves; the
// runs are its template runs, by Attribution.Run.
//
// Istio's own failure on the object is failed (the error is for the explanation itself).
func explainObject(ctx context.Context, p *prepared, obj runtime.Object) (_ []provenance.Attribution, _ []explainedRun, failed, err error) {
	set, err := p.install.traced.observe(p.install)
	if err != nil {
		return nil, nil, nil, err
	}
	defer p.install.traced.done(set)
	o := set.observer
	watched := *p.install
	watched.templates = set.templates
	out, _, _, err := intoObject(ctx, &watched, p.injector, obj.DeepCopyObject())
	if err != nil {
		return nil, nil, err, nil // Istio refused it: nothing to explain
	}
	var runs []provenance.Named
	var names []explainedRun
	for _, r := range o.Runs() {
		tr, err := p.install.traced.get(r.Template, p.install.templates[r.Template])
		if err != nil {
			return nil, nil, nil, err
		}
		rendering, err := tr.Run(r.Data)
		if err != nil {
			return nil, nil, nil, err
		}
		runs = append(runs, provenance.Named{Template: r.Template, Rendering: rendering})
		run := explainedRun{template: r.Template}
		if d, ok := r.Data.(*inject.SidecarTemplateData); ok { // Istio runs a template on &data
			run.proxyConfig, run.mesh, run.values, run.data = d.ProxyConfig, d.MeshConfig, d.Values, d
		}
		names = append(names, run)
	}
	var outV, inV, defaultedV any
	if !jsonValue(out, &outV) || !jsonValue(obj, &inV) {
		return nil, nil, nil, &input.Fault{ID: "explain-json"}
	}
	if seesDefaults(p.injector) {
		// What the webhook saw: the object with the API server's defaults (intoObject).
		defaulted := obj.DeepCopyObject()
		APIDefault(defaulted)
		if !jsonValue(defaulted, &defaultedV) {
			return nil, nil, nil, &input.Fault{ID: "explain-json"}
		}
	}
	return provenance.Attribute(outV, inV, defaultedV, placeOf(obj), runs), names, nil, nil
}

// tracedTemplates are an installation's templates traced (provenance.Trace), by name, each made
// the first time it is asked for and shared after; and its templates observed
// (provenance.Observe), pooled: one set per explanation running at once, reset for the next.
type tracedTemplates struct {
	mu       sync.Mutex
	by       map[string]*provenance.Traced
	texts    map[string]templateText
	observed sync.Pool // of *observedTemplates
}

// templateText is a template's text as a Provenance reads it: its lines, and whose it is
// (Provenance.Whose).
type templateText struct {
	lines []string
	whose string
}

// text is template name's lines and whose it is (raw: the installation's templates' text),
// made the first time it is asked for.
func (tt *tracedTemplates) text(name string, raw map[string]string) templateText {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	if t, ok := tt.texts[name]; ok {
		return t
	}
	t := templateText{lines: strings.Split(raw[name], "\n"), whose: "mesh"}
	if builtin, ok := builtinTemplates()[name]; ok && builtin == raw[name] {
		t.whose = "istio"
	}
	if tt.texts == nil {
		tt.texts = map[string]templateText{}
	}
	tt.texts[name] = t
	return t
}

// observedTemplates are an installation's templates observed, and their observer.
type observedTemplates struct {
	templates inject.Templates
	observer  *provenance.Observer
}

// observe is a set of in's templates observed, with no runs yet; put it back with done.
func (tt *tracedTemplates) observe(in *Install) (*observedTemplates, error) {
	if o, ok := tt.observed.Get().(*observedTemplates); ok {
		o.observer.Reset()
		return o, nil
	}
	ts, obs, err := provenance.Observe(in.templates)
	if err != nil {
		return nil, err
	}
	return &observedTemplates{templates: ts, observer: obs}, nil
}

// done puts a set back for another explanation.
func (tt *tracedTemplates) done(o *observedTemplates) { tt.observed.Put(o) }

// get is template name traced (t is the installation's template of that name).
func (tt *tracedTemplates) get(name string, t *template.Template) (*provenance.Traced, error) {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	if tr, ok := tt.by[name]; ok {
		return tr, nil
	}
	tr, err := provenance.Trace(t)
	if err != nil {
		return nil, err
	}
	if tt.by == nil {
		tt.by = map[string]*provenance.Traced{}
	}
	tt.by[name] = tr
	return tr, nil
}

// placeOf is where a kind Istio injects has its pod, as IntoObject reads it (podTemplate): a
// Pod is its own; a CronJob's metadata is its job template's, its spec the job's pod's; any
// other's is spec.template.
func placeOf(obj runtime.Object) provenance.Place {
	switch obj.(type) {
	case *corev1.Pod:
		return provenance.PodPlace
	case *batchv1.CronJob:
		return provenance.Place{Metadata: "spec.jobTemplate.metadata", Spec: "spec.jobTemplate.spec.template.spec"}
	}
	return provenance.Place{Metadata: "spec.template.metadata", Spec: "spec.template.spec"}
}

// prefixed is path under a List item's path.
func prefixed(prefix, path string) string {
	if prefix == "" {
		return path
	}
	if path == "" || path[0] == '[' {
		return prefix + path
	}
	return prefix + "." + path
}
