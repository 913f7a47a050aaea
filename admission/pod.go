package admission

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/input"
)

// podOf is the Pod a workload's controller creates: the pod template's metadata and spec, in the
// namespace, with a generated name and an owner reference. Where the controller puts a hash in
// the name (a Deployment's ReplicaSet), the name says so with a placeholder.
func podOf(w engine.Workload, namespace string) (*corev1.Pod, error) {
	if w.Object == nil {
		return nil, &input.Error{ID: "not-a-pod-maker", Params: input.Params("kind", w.Kind)}
	}
	// Istio's reader takes any "kind: Job" for a batch/v1 Job (kube-inject keeps that); the API
	// server serves each kind at its group's version and hands a kind of another group (a
	// Volcano Job) to that group's controller.
	if want, ok := servedVersions[w.Kind]; ok && w.APIVersion != want {
		if g, _, _ := strings.Cut(w.APIVersion, "/"); !strings.Contains(w.APIVersion, "/") || g == "apps" || g == "batch" || g == "extensions" {
			return nil, fmt.Errorf("no matches for kind %q in version %q", w.Kind, w.APIVersion)
		}
		return nil, &input.Error{ID: "unknown-controller", Params: input.Params("kind", w.APIVersion+" "+w.Kind)}
	}
	ns := namespace
	owner := func(apiVersion, kind, name string) []metav1.OwnerReference {
		t := true
		return []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: name, UID: types.UID("00000000-0000-0000-0000-000000000000"), Controller: &t, BlockOwnerDeletion: &t}}
	}
	var pod *corev1.Pod
	fromTemplate := func(t corev1.PodTemplateSpec) *corev1.Pod {
		return &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: *t.ObjectMeta.DeepCopy(), Spec: *t.Spec.DeepCopy()}
	}
	switch o := w.Object.(type) {
	case *corev1.Pod:
		pod = o.DeepCopy()
		if pod.Namespace != "" {
			ns = pod.Namespace
		}
	case *appsv1.Deployment:
		// The ReplicaSet is named after a hash of the template, which the Pods carry as a label
		// (Istio reads it to find the Deployment's name): here a placeholder.
		pod = fromTemplate(o.Spec.Template)
		rs := o.Name + "-" + hashPlaceholder
		pod.GenerateName, pod.OwnerReferences = rs+"-", owner("apps/v1", "ReplicaSet", rs)
		setLabel(pod, "pod-template-hash", hashPlaceholder)
	case *appsv1.ReplicaSet:
		pod = fromTemplate(o.Spec.Template)
		pod.GenerateName, pod.OwnerReferences = o.Name+"-", owner("apps/v1", "ReplicaSet", o.Name)
	case *appsv1.StatefulSet:
		pod = fromTemplate(o.Spec.Template)
		// Named by ordinal, with the generateName the controller's pod template helper also sets
		// (Istio looks for the owner only when a Pod has one).
		pod.Name, pod.GenerateName, pod.OwnerReferences = o.Name+"-0", o.Name+"-", owner("apps/v1", "StatefulSet", o.Name)
	case *appsv1.DaemonSet:
		pod = fromTemplate(o.Spec.Template)
		pod.GenerateName, pod.OwnerReferences = o.Name+"-", owner("apps/v1", "DaemonSet", o.Name)
	case *batchv1.Job:
		pod = fromTemplate(o.Spec.Template)
		pod.GenerateName, pod.OwnerReferences = o.Name+"-", owner("batch/v1", "Job", o.Name)
		setLabel(pod, "batch.kubernetes.io/job-name", o.Name)
		setLabel(pod, "job-name", o.Name)
	case *batchv1.CronJob:
		// A CronJob's Job is named after its scheduled time in minutes (Istio recognises the
		// digits): here a placeholder time.
		pod = fromTemplate(o.Spec.JobTemplate.Spec.Template)
		job := o.Name + "-" + scheduledPlaceholder
		pod.GenerateName, pod.OwnerReferences = job+"-", owner("batch/v1", "Job", job)
		setLabel(pod, "batch.kubernetes.io/job-name", job)
		setLabel(pod, "job-name", job)
	case *corev1.ReplicationController:
		if o.Spec.Template == nil {
			return nil, &input.Error{ID: "rc-no-template"}
		}
		pod = fromTemplate(*o.Spec.Template)
		pod.GenerateName, pod.OwnerReferences = o.Name+"-", owner("v1", "ReplicationController", o.Name)
	default:
		return nil, &input.Error{ID: "unknown-controller", Params: input.Params("kind", w.Kind)}
	}
	if meta := objectNamespace(w.Object); meta != "" {
		ns = meta
	}
	pod.Namespace = ns
	return pod, nil
}

// defaulted is the Pod with the API server's defaults (engine.APIDefault): the API server applies
// them to a Pod it is asked to create before the mutating webhooks see it, and again to the
// object a webhook's patch made, so Pod Security judges a defaulted Pod (a volume with no source
// is an emptyDir by then).
func defaulted(p *corev1.Pod) *corev1.Pod {
	engine.APIDefault(p)
	return p
}

// servedVersions are the group versions Kubernetes serves the kinds podOf knows at.
var servedVersions = map[string]string{
	"Pod": "v1", "ReplicationController": "v1",
	"Deployment": "apps/v1", "ReplicaSet": "apps/v1", "StatefulSet": "apps/v1", "DaemonSet": "apps/v1",
	"Job": "batch/v1", "CronJob": "batch/v1",
}

// The placeholders where a controller puts a hash or a time in a name, and where the API server
// puts generateName's random suffix.
const (
	hashPlaceholder      = "<hash>"
	scheduledPlaceholder = "29000000"
	randomPlaceholder    = "<random>"
)

// createdName is the Pod's name as the admission steps see it: the API server makes a name from
// generateName (five random characters) before admission runs, so the webhook's request and Pod
// Security's message name it (`pods "web-5855f49cd4-zpmx6" is forbidden: …`, checked against a
// real cluster in cmd/sidecarlab's conformance tests).
func createdName(pod *corev1.Pod) string {
	if pod.Name == "" && pod.GenerateName != "" {
		return pod.GenerateName + randomPlaceholder
	}
	return pod.Name
}

func setLabel(pod *corev1.Pod, k, v string) {
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Labels[k] = v
}

func objectNamespace(obj runtime.Object) string {
	if m, ok := obj.(metav1.Object); ok {
		return m.GetNamespace()
	}
	return ""
}
