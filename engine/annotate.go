package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"istio.io/istio/pkg/kube/inject"
)

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
	Error  *input.Error
}

// Workloads reads a manifest's documents with every step applied, after the checks an injection
// makes first (the steps, the settings, the installation), and returns that installation too.
func (e *Engine) Workloads(ctx context.Context, manifest []byte, steps []input.Step, s Settings) (*Install, []Workload, error) {
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
func AnnotatedInput(manifest []byte, steps []input.Step) (string, error) {
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

type annotationChange struct {
	key, value string
	remove     bool
}

// annotationsAt is the list of changes in force at step k: steps[:k], in order.
func annotationsAt(steps []input.Step, k int) []annotationChange {
	out := make([]annotationChange, 0, k)
	for _, s := range steps[:k] {
		out = append(out, annotationChange{key: s.Key, value: s.Value, remove: s.Remove})
	}
	return out
}
