package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"istio.io/istio/pkg/kube/inject"
)

// Document is the result for one YAML document of the input.
type Document struct {
	// Index is the 1-based position of the document in the input, as a person counts them.
	Index int `json:"index"`
	// Line is the input line the document starts on.
	Line       int    `json:"line"`
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Name       string `json:"name,omitempty"`
	Namespace  string `json:"namespace,omitempty"`
	// Injectable is false for kinds Istio does not inject (Service, ConfigMap, …); those pass
	// through unchanged, as istioctl passes them.
	Injectable bool `json:"injectable"`
	// Skipped is true when Istio looked at the workload and chose not to inject it;
	// SkipReason is Istio's own message.
	Skipped    bool   `json:"skipped,omitempty"`
	SkipReason string `json:"skipReason,omitempty"`
	// Input is the document as given (before annotation steps).
	Input string `json:"input"`
	// output is the document as `istioctl kube-inject` prints it; see Output.
	output *outputText
	// Warnings are Istio's warnings for this document.
	Warnings []string `json:"warnings,omitempty"`
	// Error is set when Istio (or YAML parsing) rejected the document; Output is then empty.
	Error *InputError `json:"error,omitempty"`

	// json is Output as JSON, when the engine produced it; in and out are the typed input (steps
	// applied) and output, which the checks, the lifecycle and the batch rows read.
	json    []byte
	in, out runtime.Object
	// panicked is what Istio's injector panicked with on this document, if it did; the
	// document then carries an error, and FuzzInject fails on it.
	panicked any
	// labels are the document's metadata.labels (Workloads gives them to the Cluster view).
	labels map[string]string
}

// Output is the document as `istioctl kube-inject` prints it (without the "---" after it). An
// injected document's YAML is made from its JSON the first time it is asked for: a toggle on the
// diff tab, the batch rows and the checks read the JSON and the typed objects, not the YAML.
func (d Document) Output() string {
	if d.output == nil {
		return ""
	}
	return d.output.get()
}

// outputText is a document's output: given, or made from its JSON when first read.
type outputText struct {
	once sync.Once
	j    []byte // the JSON to make it from; nil when given
	text string
	size atomic.Int64 // len(text) once it is there
	// made is called once the text is made, so a memo holding the document counts it. It is set
	// before the document is shared.
	made func()
}

func (o *outputText) get() string {
	o.once.Do(func() {
		if o.j == nil {
			return
		}
		b, _ := yaml.JSONToYAML(o.j) // cannot fail: no key is long (longKey)
		o.text = string(b)
		o.size.Store(int64(len(o.text)))
		if o.made != nil {
			o.made()
		}
	})
	return o.text
}

// withOutput is d with the output text it is known by.
func (d Document) withOutput(text string) Document {
	d.output = &outputText{text: text}
	d.output.size.Store(int64(len(text)))
	return d
}

// withJSON is d with its output's JSON j; the YAML (what yaml.Marshal writes: JSONToYAML of the
// JSON) is made when it is first read. JSONToYAML fails on a key it cannot write as a YAML simple
// key; such an output is converted now, so that the document carries the error istioctl reports.
func (d Document) withJSON(j []byte) Document {
	if longKey(j) {
		b, err := yaml.JSONToYAML(j)
		if err != nil {
			d.Error = &InputError{Doc: d.Index, Line: d.Line, Msg: err.Error()}
			return d
		}
		d.json = j
		return d.withOutput(string(b))
	}
	d.json = j
	d.output = &outputText{j: j}
	return d
}

// maxSimpleKey is the longest object key (in bytes, with its quotes) that go.yaml.in/yaml/v2 reads
// back from JSON; a longer one makes JSONToYAML fail (TestWithJSONLongKey).
const maxSimpleKey = 1000

// longKey says whether JSON text j (as json.Marshal writes it) has an object key longer than
// maxSimpleKey bytes.
func longKey(j []byte) bool {
	for i := 0; i < len(j); i++ {
		if j[i] != '"' {
			continue
		}
		end := jsonStringEnd(j, i)
		if end < 0 {
			return false
		}
		if end < len(j) && j[end] == ':' && end-i > maxSimpleKey {
			return true
		}
		i = end - 1
	}
	return false
}

// sameOutput says whether two documents' outputs are the same, comparing their JSON when both
// have it (the YAML is made from it; equal JSON, equal YAML) so that no YAML is made for it.
func sameOutput(a, b Document) bool {
	if a.json != nil && b.json != nil {
		return bytes.Equal(a.json, b.json)
	}
	return a.Output() == b.Output()
}

// outputSize is the length of the document's output, or, before its YAML is made, of the JSON it
// is made from; a memo that holds the document measures it again once the YAML is made
// (outputText.made).
func (d Document) outputSize() int {
	if d.output == nil {
		return 0
	}
	if n := d.output.size.Load(); n > 0 || d.output.j == nil {
		return int(n)
	}
	return len(d.output.j)
}

// MarshalJSON writes the document with its output.
func (d Document) MarshalJSON() ([]byte, error) {
	type plain Document
	return json.Marshal(struct {
		plain
		Output string `json:"output,omitempty"`
	}{plain(d), d.Output()})
}

// Status is what happened to a document.
type Status string

const (
	// StatusInjected: Istio injected the workload.
	StatusInjected Status = "injected"
	// StatusSkipped: Istio looked at the workload and chose not to inject it.
	StatusSkipped Status = "skipped"
	// StatusPassedThrough: a kind Istio does not inject (Service, ConfigMap, …), written back as is.
	StatusPassedThrough Status = "passed through"
	// StatusError: Istio (or YAML parsing) rejected the document.
	StatusError Status = "error"
)

// Status classifies the document and says why: Istio's own message for a skipped or rejected
// document, the reason a kind passes through, nothing for an injected one.
func (d Document) Status() (Status, string) {
	switch {
	case d.Error != nil:
		return StatusError, d.Error.Msg
	case d.Skipped:
		return StatusSkipped, d.SkipReason
	case !d.Injectable:
		return StatusPassedThrough, "Istio does not inject this kind"
	}
	return StatusInjected, ""
}

// tree decodes the document's output for diffing.
func (d *Document) tree() (any, error) {
	var v any
	if d.json != nil {
		err := json.Unmarshal(d.json, &v)
		return v, err
	}
	err := yaml.Unmarshal([]byte(d.Output()), &v)
	return v, err
}

const skipPrefix = "===> Skipping injection because "

// isolates says whether p's documents are injected in another process (a custom installation,
// with an isolator): there, they are read there.
func (e *Engine) isolates(p *prepared) bool { return p.install.custom && e.opts.Isolator != nil }

// parse reads each of p's documents as Istio's reader does, once, for the rows of a timeline to
// start from (chunk.parsed): the objects, nil for a document it does not read (an error, a kind
// Istio does not know), which each row reads again and fails on as before.
func (p *prepared) parse(ctx context.Context) ([]runtime.Object, error) {
	out := make([]runtime.Object, len(p.chunks))
	for i, c := range p.chunks {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if obj, err := inject.FromRawToObject(c.raw); err == nil {
			out[i] = obj
		}
	}
	p.useParsed(out)
	return out, nil
}

// useParsed gives p's documents the objects row 0 read (parse).
func (p *prepared) useParsed(objs []runtime.Object) {
	for i := range min(len(objs), len(p.chunks)) {
		p.chunks[i].parsed = objs[i]
	}
}

// injectAll injects each of p's documents. The deadline is checked before each one: neither
// Istio's reader nor its injector takes a context, so one document is what runs past it (and
// a server bounds what one document may cost before it starts: Estimate, Limits).
func (e *Engine) injectAll(ctx context.Context, p *prepared, ann []annotationChange) ([]Document, error) {
	if e.isolates(p) {
		e.injections.Add(int64(len(p.chunks)))
		return e.injectIsolated(ctx, p, ann)
	}
	docs := make([]Document, len(p.chunks))
	// Each worker takes the next document not taken yet (Istio's injector is used concurrently
	// as BatchStream uses it); with one, the documents are injected in order on this goroutine.
	var next atomic.Int64
	work := func() {
		for ctx.Err() == nil {
			i := int(next.Add(1)) - 1
			if i >= len(p.chunks) {
				return
			}
			e.injections.Add(1)
			docs[i] = injectChunk(p.install, p.injector, p.chunks[i], i+1, ann)
		}
	}
	var wg sync.WaitGroup
	for range min(e.opts.Workers, len(p.chunks)) - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return docs, nil
}

// injectChunk runs one document through Istio's IntoObject, exactly as IntoResourceFile does for
// istioctl, after writing the annotation changes where Istio reads them.
func injectChunk(in *Install, injector inject.Injector, c chunk, index int, ann []annotationChange) Document {
	d, obj := prepareChunk(c, index, ann)
	if obj == nil {
		return d
	}
	out, warnings, panicked, err := intoObject(in, injector, obj)
	return finishChunk(d, obj, out, nil, warnings, panicked, err)
}

// prepareChunk reads one document and writes the annotation changes into it. It returns the
// object for Istio's injector, or nil when the document is done (a kind Istio does not inject, or
// an error).
func prepareChunk(c chunk, index int, ann []annotationChange) (d Document, obj runtime.Object) {
	d = Document{Index: index, Line: c.line, Input: c.text}
	obj, tm, err := c.objectMeta()
	if runtime.IsNotRegisteredError(err) {
		// istioctl writes such documents back unchanged.
		d.APIVersion, d.Kind, d.Name, d.Namespace = tm.APIVersion, tm.Kind, tm.Metadata.Name, tm.Metadata.Namespace
		d.labels = tm.Metadata.Labels
		return d.withOutput(c.text), nil
	}
	if err != nil {
		d.Error = yamlError(err, index, c.line, c.raw)
		return d, nil
	}
	if m, err := meta.Accessor(obj); err == nil {
		d.Name, d.Namespace, d.labels = m.GetName(), m.GetNamespace(), m.GetLabels()
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	d.APIVersion, d.Kind = gvk.GroupVersion().String(), gvk.Kind
	d.Injectable = true
	if len(ann) > 0 {
		if err := annotate(obj, ann); err != nil {
			d.Error = &InputError{Doc: index, Line: c.line, Field: "annotations", Msg: err.Error()}
			return d, nil
		}
	}
	if read, _, _, ok := podParts(obj); ok {
		// Refuse what Kubernetes would refuse before Istio spends time on it.
		total := 0
		for _, k := range sortedKeys(read.Annotations) {
			v := read.Annotations[k]
			total += len(k) + len(v)
			if err := annotationSizeError(k, v); err != nil || total > validation.TotalAnnotationSizeLimitB {
				if err == nil {
					err = &InputError{ID: "annotations-total", Params: errParams("max", strconv.Itoa(validation.TotalAnnotationSizeLimitB)),
						Msg: fmt.Sprintf("the annotations add up to more than Kubernetes' %d bytes", validation.TotalAnnotationSizeLimitB)}
				}
				err.Doc, err.Line, err.Field = index, c.line, "annotation "+quote(k)
				d.Error = err
				return d, nil
			}
		}
	}
	return d, obj
}

// finishChunk records what Istio's injector made of obj: out, or its JSON j when it was made in
// another process (then out is j decoded), with its warnings and error.
func finishChunk(d Document, obj runtime.Object, out any, j []byte, warnings []string, panicked any, err error) Document {
	d.panicked = panicked
	for _, w := range warnings {
		if strings.HasPrefix(w, skipPrefix) {
			d.Skipped = true
			d.SkipReason = strings.TrimSpace(strings.TrimPrefix(w, skipPrefix))
		}
		if w == webhookSkip {
			d.Skipped, d.SkipReason = true, w
		}
	}
	d.Warnings = warnings
	if err != nil {
		d.Error = &InputError{Doc: d.Index, Line: d.Line, Msg: err.Error()}
		return d
	}
	// yaml.Marshal is json.Marshal then JSONToYAML; doing the two steps apart keeps the JSON for
	// the diff, which decodes it far faster than it would parse the YAML, and leaves the YAML
	// until it is read (withJSON).
	if j == nil {
		if j, err = json.Marshal(out); err != nil {
			d.Error = &InputError{Doc: d.Index, Line: d.Line, Msg: err.Error()}
			return d
		}
	}
	if d = d.withJSON(j); d.Error != nil {
		return d
	}
	d.in = obj
	d.out, _ = out.(runtime.Object)
	return d
}

// intoObject calls Istio's IntoObject and turns a panic inside it into an error: a playground
// must survive whatever is pasted into it. The panic's value is returned too, for the fuzz test.
func intoObject(in *Install, injector inject.Injector, obj runtime.Object) (out any, warnings []string, panicked any, err error) {
	defer func() {
		if r := recover(); r != nil {
			panicked = r
			err = fmt.Errorf("istio's injector failed on this document: %v", r)
		}
	}()
	warn := func(w string) { warnings = append(warnings, w) }
	input := obj
	w, webhook := injector.(*webhookInjector)
	if webhook {
		injector = w.reporting(warn)
	}
	defaults := webhook && !w.asWritten
	if defaults {
		// As in a cluster, the webhook sees the object with the API server's defaults
		// (apidefaults.go).
		input = obj.DeepCopyObject()
		APIDefault(input)
	}
	// The webhook is the installation's istiod, which knows its revision (its REVISION); offline
	// kube-inject is given istioctl's --revision.
	revision := RevisionOf(in.Options.Revision)
	if defaults {
		revision = in.values.Struct().GetRevision()
	}
	out, err = inject.IntoObject(injector, in.templates, in.values, revision, in.mesh, input, warn)
	if defaults && err == nil {
		out = withoutUntouchedDefaults(out, obj, input)
	}
	if _, list := obj.(*corev1.List); err != nil && !list && slices.Contains(warnings, webhookSkip) {
		// The webhook lets the pod through before it reads anything else of it (IntoObject goes
		// on to parse its proxy config, and may fail on it): as it is.
		return obj.DeepCopyObject(), warnings, nil, nil
	}
	return out, warnings, nil, err
}

// yamlError is the error of document index, which starts on line start and is text, that YAML
// could not read: at the line the error names.
func yamlError(err error, index, start int, text []byte) *InputError {
	msg := err.Error()
	line := start
	if n := yamlErrorLine(msg, text); n > 0 {
		line = start + n - 1
	}
	return &InputError{Doc: index, Line: line, Field: "manifest", Msg: msg}
}

// annotate writes annotation changes where Istio reads them. For a List, every item Istio would
// inject gets them.
func annotate(obj runtime.Object, ann []annotationChange) error {
	if list, ok := obj.(*corev1.List); ok {
		for i, item := range list.Items {
			child, err := inject.FromRawToObject(item.Raw)
			if runtime.IsNotRegisteredError(err) {
				continue
			}
			if err != nil {
				return fmt.Errorf("item %d: %v", i+1, err)
			}
			if err := annotate(child, ann); err != nil {
				return fmt.Errorf("item %d: %v", i+1, err)
			}
			raw, err := json.Marshal(child)
			if err != nil {
				return fmt.Errorf("item %d: %v", i+1, err)
			}
			list.Items[i].Raw = raw
		}
		return nil
	}
	meta, _, _, err := podTemplate(obj)
	if err != nil {
		return err
	}
	for _, a := range ann {
		if a.remove {
			delete(meta.Annotations, a.key)
			continue
		}
		if meta.Annotations == nil {
			meta.Annotations = map[string]string{}
		}
		meta.Annotations[a.key] = a.value
	}
	return nil
}

// Workload is one document of a manifest read as Istio reads it, with the annotation steps
// written where Istio reads them: what a controller makes its Pods from.
type Workload struct {
	Doc, Line int
	// APIVersion is the document's, as written (batch.volcano.sh/v1alpha1 for a Volcano Job,
	// which Istio reads as a batch/v1 Job all the same).
	APIVersion, Kind, Name, Namespace string
	// Labels are the document's own (metadata.labels): a Namespace document's are the
	// namespace's.
	Labels map[string]string
	// Object is nil for a kind Istio does not inject and for a document that failed (Error).
	Object runtime.Object
	Error  *InputError
}

// Workloads reads a manifest's documents with every step applied, after the checks an injection
// makes first (the steps, the settings, the installation), and returns that installation too.
func (e *Engine) Workloads(ctx context.Context, manifest []byte, steps []Step, s Settings) (*Install, []Workload, error) {
	p, err := e.prepare(ctx, manifest, steps, s)
	if err != nil {
		return nil, nil, err
	}
	ann := annotationsAt(steps, len(steps))
	out := make([]Workload, len(p.chunks))
	for i, c := range p.chunks {
		d, obj := prepareChunk(c, i+1, ann)
		out[i] = Workload{Doc: d.Index, Line: d.Line, APIVersion: d.APIVersion, Kind: d.Kind, Name: d.Name, Namespace: d.Namespace, Labels: d.labels, Object: obj, Error: d.Error}
	}
	return p.install, out, nil
}

// AnnotatedInput is the manifest with the annotation steps written where Istio reads them: the
// input that, given to istioctl kube-inject without steps, gives the same output. Documents the
// steps do not touch are kept as written.
func AnnotatedInput(manifest []byte, steps []Step) (string, error) {
	chunks, err := splitDocuments(manifest)
	if err != nil {
		return "", err
	}
	ann := annotationsAt(steps, len(steps))
	var b strings.Builder
	for _, c := range chunks {
		out := string(c.raw)
		if len(ann) > 0 {
			if obj, err := inject.FromRawToObject(c.raw); err == nil && annotate(obj, ann) == nil {
				if y, err := yaml.Marshal(obj); err == nil {
					out = string(y)
				}
			}
		}
		b.WriteString(out)
		b.WriteString("---\n")
	}
	return b.String(), nil
}

// PodTemplateAnnotation is the value of the annotation key where Istio reads it (the pod
// template's metadata; a CronJob's spec.jobTemplate.metadata) in the first document of the
// manifest that sets it. Documents that do not decode are passed over.
func PodTemplateAnnotation(manifest []byte, key string) (string, bool) {
	chunks, err := splitDocuments(manifest)
	if err != nil {
		return "", false
	}
	for _, c := range chunks {
		obj, err := inject.FromRawToObject(c.raw)
		if err != nil {
			continue
		}
		if read, _, _, err := podTemplate(obj); err == nil && read != nil {
			if v, ok := read.Annotations[key]; ok {
				return v, true
			}
		}
	}
	return "", false
}
