package engine

import (
	"reflect"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// podParts locates, in any kind Istio injects, the metadata Istio reads annotations from (see
// podTemplateMeta), the pod template's own metadata, and the pod spec. A Pod has one metadata for
// both; a CronJob reads from spec.jobTemplate.metadata but its pods are spec.jobTemplate.spec.template.
func podParts(obj runtime.Object) (read, template *metav1.ObjectMeta, spec *corev1.PodSpec, ok bool) {
	switch v := obj.(type) {
	case *corev1.Pod:
		return &v.ObjectMeta, &v.ObjectMeta, &v.Spec, true
	case *batchv1.CronJob:
		return &v.Spec.JobTemplate.ObjectMeta, &v.Spec.JobTemplate.Spec.Template.ObjectMeta, &v.Spec.JobTemplate.Spec.Template.Spec, true
	}
	read, err := podTemplateMeta(obj)
	if err != nil {
		return nil, nil, nil, false
	}
	tmpl := reflect.ValueOf(obj).Elem().FieldByName("Spec").FieldByName("Template")
	if tmpl.Kind() == reflect.Pointer {
		tmpl = tmpl.Elem()
	}
	spec, ok = tmpl.FieldByName("Spec").Addr().Interface().(*corev1.PodSpec)
	return read, read, spec, ok
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

// proxyContainer finds istio-proxy in a pod spec and says whether it is a native sidecar.
func proxyContainer(spec *corev1.PodSpec) (c *corev1.Container, native bool, index int) {
	for i := range spec.InitContainers {
		if spec.InitContainers[i].Name == "istio-proxy" {
			return &spec.InitContainers[i], true, i
		}
	}
	for i := range spec.Containers {
		if spec.Containers[i].Name == "istio-proxy" {
			return &spec.Containers[i], false, i
		}
	}
	return nil, false, -1
}

func isSidecarInit(c corev1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}
