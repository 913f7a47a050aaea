package engine

import (
	"fmt"
	"reflect"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/engine/lifecycle"
)

// podTemplate locates, in any kind Istio injects, the metadata Istio reads pod annotations from,
// the pod template's own metadata, and the pod spec, following IntoObject's own switch: a Pod has
// one metadata for both; a CronJob is read from spec.jobTemplate.metadata (Istio's choice) while
// its pods are spec.jobTemplate.spec.template; anything else is spec.template.
func podTemplate(obj runtime.Object) (read, template *metav1.ObjectMeta, spec *corev1.PodSpec, err error) {
	switch v := obj.(type) {
	case *corev1.Pod:
		return &v.ObjectMeta, &v.ObjectMeta, &v.Spec, nil
	case *batchv1.CronJob:
		return &v.Spec.JobTemplate.ObjectMeta, &v.Spec.JobTemplate.Spec.Template.ObjectMeta, &v.Spec.JobTemplate.Spec.Template.Spec, nil
	}
	notFound := &input.Fault{ID: "no-pod-template", Params: input.Params("type", fmt.Sprintf("%T", obj))}
	rv := reflect.ValueOf(obj)
	if rv.Kind() != reflect.Pointer || rv.Elem().Kind() != reflect.Struct {
		return nil, nil, nil, notFound
	}
	specV := rv.Elem().FieldByName("Spec")
	if !specV.IsValid() || specV.Kind() != reflect.Struct {
		return nil, nil, nil, notFound
	}
	tmpl := specV.FieldByName("Template")
	if tmpl.Kind() == reflect.Pointer {
		if tmpl.IsNil() {
			return nil, nil, nil, fmt.Errorf("spec.template is required value")
		}
		tmpl = tmpl.Elem()
	}
	if !tmpl.IsValid() || tmpl.Kind() != reflect.Struct {
		return nil, nil, nil, notFound
	}
	meta, ok1 := tmpl.FieldByName("ObjectMeta").Addr().Interface().(*metav1.ObjectMeta)
	spec, ok2 := tmpl.FieldByName("Spec").Addr().Interface().(*corev1.PodSpec)
	if !ok1 || !ok2 {
		return nil, nil, nil, notFound
	}
	return meta, meta, spec, nil
}

// podParts is podTemplate for callers that only need to know whether it worked.
func podParts(obj runtime.Object) (read, template *metav1.ObjectMeta, spec *corev1.PodSpec, ok bool) {
	read, template, spec, err := podTemplate(obj)
	return read, template, spec, err == nil
}

// objectMeta is the object's own metadata (the workload's, for a controller).
func objectMeta(obj runtime.Object) *metav1.ObjectMeta {
	rv := reflect.ValueOf(obj)
	if rv.Kind() != reflect.Pointer || rv.Elem().Kind() != reflect.Struct {
		return nil
	}
	f := rv.Elem().FieldByName("ObjectMeta")
	if !f.IsValid() {
		return nil
	}
	m, _ := f.Addr().Interface().(*metav1.ObjectMeta)
	return m
}

// objects returns a document's typed input (annotation steps applied, as Istio saw it) and its
// typed output, kept from the injection itself: nothing is parsed again. ok is false for
// documents Istio did not inject (errors, other kinds, Lists).
func (d Document) objects() (in, out runtime.Object, ok bool) {
	if d.in == nil || d.out == nil || d.Kind == "List" {
		return nil, nil, false
	}
	return d.in, d.out, true
}

// Lifecycles derives the lifecycle of every injected workload of a row.
func Lifecycles(docs []Document) []lifecycle.Lifecycle {
	var out []lifecycle.Lifecycle
	for _, d := range docs {
		_, obj, ok := d.objects()
		if !ok {
			continue
		}
		if l, ok := lifecycleOf(d, obj); ok {
			out = append(out, l)
		}
	}
	return out
}

// lifecycleOf is the lifecycle of the pod of d's object obj; false when obj has no pod.
func lifecycleOf(d Document, obj runtime.Object) (lifecycle.Lifecycle, bool) {
	_, _, spec, ok := podParts(obj)
	if !ok {
		return lifecycle.Lifecycle{}, false
	}
	return lifecycle.Of(d.Index, d.Kind, d.Name, spec), true
}
