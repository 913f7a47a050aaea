package engine

import (
	"context"
	"encoding/json"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"istio.io/istio/pkg/kube/inject"

	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/engine/provenance"
)

// Explained is where each leaf of one injected document came from: the template lines Istio
// ran, the document as given, or Istio's code after the templates (package provenance).
type Explained struct {
	// Doc is the document's index, from 1.
	Doc int `json:"doc"`
	// Fields are the document's leaves with their sources; a List's are its items', under
	// items[i].
	Fields []provenance.Attribution `json:"fields"`
	// Templates are the names of the templates Istio ran, by Attribution.Run (a List's items'
	// runs one after another).
	Templates []string `json:"templates"`
}

// Explain injects manifest as Inject does, with Istio's templates observed as they run, and
// says where each leaf of each injected document came from. It explains the modes that run
// the installation's templates in this process (kube-inject, native, classic); the webhook's
// and a custom installation's are refused for now.
func (e *Engine) Explain(ctx context.Context, manifest []byte, steps []input.Step, s Settings) ([]Explained, error) {
	p, err := e.prepare(ctx, manifest, steps, s)
	if err != nil {
		return nil, err
	}
	if s.mode() == ModeWebhook || e.isolates(p) {
		return nil, &input.Error{Field: "mode", ID: "explain-mode"}
	}
	traced := map[string]*provenance.Traced{}
	ann := annotationsAt(steps, len(steps))
	var out []Explained
	for i, c := range p.chunks {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		d, obj := prepareChunk(c, i+1, ann)
		if obj == nil || d.Error != nil {
			continue
		}
		ex := Explained{Doc: i + 1}
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
		for k, o := range objs {
			fields, names, err := e.explainObject(ctx, p, o, traced, len(ex.Templates))
			if err != nil {
				return nil, err
			}
			for _, f := range fields {
				f.Path = prefixed(prefixes[k], f.Path)
				ex.Fields = append(ex.Fields, f)
			}
			ex.Templates = append(ex.Templates, names...)
		}
		out = append(out, ex)
	}
	return out, nil
}

// explainObject injects one object with the templates observed and attributes its leaves;
// runs are numbered from first.
func (e *Engine) explainObject(ctx context.Context, p *prepared, obj runtime.Object, traced map[string]*provenance.Traced, first int) ([]provenance.Attribution, []string, error) {
	observed, o, err := provenance.Observe(p.install.templates)
	if err != nil {
		return nil, nil, err
	}
	watched := *p.install
	watched.templates = observed
	out, _, _, err := intoObject(ctx, &watched, p.injector, obj.DeepCopyObject())
	if err != nil {
		return nil, nil, nil // the document's error is Inject's to report
	}
	var runs []provenance.Named
	var names []string
	for _, r := range o.Runs() {
		tr := traced[r.Template]
		if tr == nil {
			if tr, err = provenance.Trace(p.install.templates[r.Template]); err != nil {
				return nil, nil, err
			}
			traced[r.Template] = tr
		}
		rendering, err := tr.Run(r.Data)
		if err != nil {
			return nil, nil, err
		}
		runs = append(runs, provenance.Named{Template: r.Template, Rendering: rendering})
		names = append(names, r.Template)
	}
	var outV, inV any
	if err := remarshal(out, &outV); err != nil {
		return nil, nil, err
	}
	if err := remarshal(obj, &inV); err != nil {
		return nil, nil, err
	}
	fields := provenance.Attribute(outV, inV, placeOf(obj), runs)
	for i := range fields {
		fields[i].Run += first
	}
	return fields, names, nil
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

// remarshal decodes v's JSON into out.
func remarshal(v any, out any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}
