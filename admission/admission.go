// Package admission follows the Pod a workload's controller creates through the cluster's
// admission path, offline, with the code the cluster runs:
//
//  1. the API server's choice of mutating webhooks: the MutatingWebhookConfigurations the
//     installation renders, matched with apimachinery's label selectors on the namespace's and
//     the Pod's labels;
//  2. Istio's injection webhook itself: inject.NewWebhook on a mux, sent an AdmissionReview
//     in-process (as Istio's own webhook tests do), its JSON patch applied to the Pod;
//  3. Pod Security Admission: k8s.io/pod-security-admission's evaluator and admission code on
//     the final Pod, with the namespace's enforce, audit and warn labels.
//
// Nothing of their logic is repeated here; this package builds their inputs and reads their
// answers. It is not the engine: it drives an http.ServeMux (in-process, no socket), which the
// engine does not import.
package admission

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	jsonpatch "github.com/evanphx/json-patch/v5"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	psadmission "k8s.io/pod-security-admission/admission"
	psaapi "k8s.io/pod-security-admission/admission/api"
	"k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/metrics"
	"k8s.io/pod-security-admission/policy"
	"sigs.k8s.io/yaml"

	"istio.io/api/annotation"
	"istio.io/api/label"
	"istio.io/istio/pilot/pkg/model"
	"istio.io/istio/pkg/config/constants"
	"istio.io/istio/pkg/config/mesh"
	"istio.io/istio/pkg/config/mesh/meshwatcher"
	"istio.io/istio/pkg/kube"
	"istio.io/istio/pkg/kube/inject"
	"istio.io/istio/pkg/kube/multicluster"

	"github.com/sidecarlab/sidecarlab/engine"
)

// DefaultNamespace is the namespace of a workload that names none, when the settings name none.
const DefaultNamespace = "default"

// CheckedKubernetes is the Kubernetes version of the real cluster this package's answers are held
// to in sidecarlab's tests (cmd/sidecarlab's conformance tests, against the control plane
// controlplane/ builds; TestControlPlaneVersions keeps the two equal), with the Istio the engine
// embeds as its istiod.
const CheckedKubernetes = "1.36"

// nsLabels are the namespace's labels as the API server keeps them: with
// kubernetes.io/metadata.name, which it sets on every namespace.
func nsLabels(n engine.Namespace) labels.Set {
	out := labels.Set{}
	for k, v := range n.Labels {
		out[k] = v
	}
	out["kubernetes.io/metadata.name"] = n.Name
	return out
}

// WebhookMatch is one webhook of a MutatingWebhookConfiguration, and whether the API server calls
// it for the Pod.
type WebhookMatch struct {
	Configuration string `json:"configuration"`
	Name          string `json:"name"`
	// NamespaceMatch and ObjectMatch are its two selectors' verdicts; Called is both.
	NamespaceMatch bool   `json:"namespaceMatch"`
	ObjectMatch    bool   `json:"objectMatch"`
	Called         bool   `json:"called"`
	Path           string `json:"path,omitempty"`
	// Selectors are the two selectors as the API server reads them (labels.Selector's String).
	NamespaceSelector string `json:"namespaceSelector"`
	ObjectSelector    string `json:"objectSelector"`
}

// Result is the admission of one document's Pod.
type Result struct {
	Doc  int    `json:"doc"`
	Kind string `json:"kind,omitempty"`
	Name string `json:"name,omitempty"`
	// Pod is the Pod as its controller would create it, before admission; Final after Istio's
	// patch (the same when no webhook injected it).
	Pod   *corev1.Pod `json:"-"`
	Final *corev1.Pod `json:"-"`
	// Webhooks are every webhook of the installation, called or not, in the API server's order.
	Webhooks []WebhookMatch `json:"webhooks"`
	// Injected is true when a webhook was called and returned a patch that injected the proxy.
	Injected bool `json:"injected"`
	// WebhookError is Istio's webhook's refusal, verbatim (failurePolicy Fail: the Pod is rejected).
	WebhookError string `json:"webhookError,omitempty"`
	// Admitted is false when the webhook refused the Pod or Pod Security Admission's enforce
	// level rejected it; Violations are PSA's messages, verbatim, and Warnings its warn-level ones.
	Admitted   bool     `json:"admitted"`
	Violations []string `json:"violations,omitempty"`
	Warnings   []string `json:"warnings,omitempty"`
	// Error is set when the document is not a workload that makes Pods, or failed to read.
	Error string `json:"error,omitempty"`
	// Trace names each rule in the order the cluster applies it (see trace.go); the verdicts
	// above come from the real code, the trace says which rule decided.
	Trace []Step `json:"trace"`
}

// Admitter runs admissions; it keeps the webhooks it built (one per installation and Kubernetes
// version, at most maxWebhooks), since building one (parsing the injector config and templates,
// starting its fake cluster) costs more than an admission.
type Admitter struct {
	// NamespaceGiven says the settings' namespace was given as kubectl's --namespace is: a
	// document that names another one is refused with kubectl's message (`sidecarlab admit
	// --namespace`). Otherwise a document's own namespace is used, with the settings' labels
	// (the page's Cluster view, whose namespace settings describe the namespace the workload is
	// meant for).
	NamespaceGiven bool
	// undefaulted leaves the Pod as its controller wrote it (no API-server defaults), as Istio's
	// own webhook test runs the webhook: only the golden comparison sets it.
	undefaulted bool
	eng         Workloads
	mu          sync.Mutex
	hooks       map[string]*cluster
	order       []string
}

// cluster is what one installation at one Kubernetes version needs: its webhook configurations,
// Istio's webhook and Pod Security at that version.
type cluster struct {
	configs []admissionregistrationv1.MutatingWebhookConfiguration
	wh      *webhook
	psa     *podSecurity
}

const maxWebhooks = 8

// Workloads is what an Admitter needs of the engine (engine.Engine has it): a manifest's
// workloads with the steps applied, and the installation of the settings.
type Workloads interface {
	Workloads(ctx context.Context, manifest []byte, steps []engine.Step, s engine.Settings) (*engine.Install, []engine.Workload, error)
}

// New makes an Admitter on the engine's installations.
func New(eng Workloads) *Admitter { return &Admitter{eng: eng, hooks: map[string]*cluster{}} }

// Close stops the webhooks' fake clusters.
func (a *Admitter) Close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, c := range a.hooks {
		c.wh.close()
	}
	a.hooks, a.order = map[string]*cluster{}, nil
}

func (a *Admitter) cluster(in *engine.Install, s engine.Settings) (*cluster, error) {
	node, err := s.Node()
	if err != nil {
		return nil, err
	}
	key := in.Hash + "@" + node.Status.NodeInfo.KubeletVersion
	a.mu.Lock()
	defer a.mu.Unlock()
	if c, ok := a.hooks[key]; ok {
		return c, nil
	}
	configs, err := webhookConfigurations(in.Webhooks)
	if err != nil {
		return nil, err
	}
	version, err := api.ParseVersion(strings.TrimSuffix(node.Status.NodeInfo.KubeletVersion, ".0")) // "v1.34"
	if err != nil {
		return nil, err
	}
	psa, err := newPodSecurity(version)
	if err != nil {
		return nil, err
	}
	wh, err := newWebhook(in, node)
	if err != nil {
		return nil, err
	}
	c := &cluster{configs: configs, wh: wh, psa: psa}
	if len(a.order) >= maxWebhooks {
		old := a.order[0]
		a.hooks[old].wh.close()
		delete(a.hooks, old)
		a.order = a.order[1:]
	}
	a.hooks[key], a.order = c, append(a.order, key)
	return c, nil
}

// Admit follows each workload of the manifest (steps applied) through admission in the
// settings' namespace, with their installation and nodes of their Kubernetes version.
//
// As `kubectl create -f` would: the items of a List are workloads of their own; a Namespace
// document of the manifest gives its namespace its labels (over the settings' ones); and a
// document whose namespace differs from the one the settings name is refused with kubectl's
// message when the namespace was given as kubectl's --namespace is (NamespaceGiven).
func (a *Admitter) Admit(ctx context.Context, manifest []byte, steps []engine.Step, s engine.Settings) ([]Result, error) {
	ns := s.Namespace
	if ns.Name == "" {
		ns.Name = DefaultNamespace
	}
	in, workloads, err := a.eng.Workloads(ctx, manifest, steps, s)
	if err != nil {
		return nil, err
	}
	c, err := a.cluster(in, s)
	if err != nil {
		return nil, err
	}
	workloads = listItems(workloads)
	docLabels := namespaceDocuments(workloads)
	out := make([]Result, 0, len(workloads))
	for _, w := range workloads {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		r := Result{Doc: w.Doc, Kind: w.Kind, Name: w.Name}
		if w.Error != nil {
			r.Error = w.Error.Error()
			out = append(out, r)
			continue
		}
		if a.NamespaceGiven && s.Namespace.Name != "" && w.Namespace != "" && w.Namespace != s.Namespace.Name {
			r.Error = fmt.Sprintf("the namespace from the provided object %q does not match the namespace %q. You must pass '--namespace=%s' to perform this operation.", w.Namespace, s.Namespace.Name, w.Namespace)
			out = append(out, r)
			continue
		}
		pod, err := podOf(w, ns.Name)
		if err != nil {
			r.Error = err.Error()
			out = append(out, r)
			continue
		}
		r.Pod = pod
		if !a.undefaulted {
			r.Pod = defaulted(pod)
		}
		labels := ns.Labels
		if l, ok := docLabels[pod.Namespace]; ok {
			labels = maps.Clone(labels)
			if labels == nil {
				labels = map[string]string{}
			}
			maps.Copy(labels, l)
		}
		if err := r.admit(ctx, c.configs, c.wh, c.psa, !a.undefaulted, engine.Namespace{Name: pod.Namespace, Labels: labels}); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// listItems is workloads with each List (v1) replaced by its items, read as Istio's injector
// reads them (it injects a List's items): an item of a kind it does not know is kept, with no
// object, by its type and name.
func listItems(workloads []engine.Workload) []engine.Workload {
	var out []engine.Workload
	for _, w := range workloads {
		list, ok := w.Object.(*corev1.List)
		if !ok {
			out = append(out, w)
			continue
		}
		for _, item := range list.Items {
			iw := engine.Workload{Doc: w.Doc, Line: w.Line}
			var tm struct {
				metav1.TypeMeta   `json:",inline"`
				metav1.ObjectMeta `json:"metadata"`
			}
			if err := json.Unmarshal(item.Raw, &tm); err == nil {
				iw.APIVersion, iw.Kind, iw.Name, iw.Namespace, iw.Labels = tm.APIVersion, tm.Kind, tm.Name, tm.Namespace, tm.Labels
			}
			if obj, err := inject.FromRawToObject(item.Raw); err == nil {
				iw.Object = obj
			}
			out = append(out, iw)
		}
	}
	return out
}

// namespaceDocuments are the labels of the manifest's Namespace documents, by name.
func namespaceDocuments(workloads []engine.Workload) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, w := range workloads {
		if w.APIVersion == "v1" && w.Kind == "Namespace" && w.Name != "" && w.Error == nil {
			out[w.Name] = w.Labels
		}
	}
	return out
}

func (r *Result) admit(ctx context.Context, configs []admissionregistrationv1.MutatingWebhookConfiguration, wh *webhook, psa *podSecurity, withDefaults bool, ns engine.Namespace) error {
	nsLabels := nsLabels(ns)
	r.step("namespace", "name", ns.Name, "labels", labels.Set(ns.Labels).String())
	current := r.Pod.DeepCopy()
	anyCalled := false
	for _, c := range configs {
		for _, h := range c.Webhooks {
			m := WebhookMatch{Configuration: c.Name, Name: h.Name}
			if h.ClientConfig.Service != nil && h.ClientConfig.Service.Path != nil {
				m.Path = *h.ClientConfig.Service.Path
			}
			nsSel, err := selector(h.NamespaceSelector)
			if err != nil {
				return fmt.Errorf("webhook %s: namespaceSelector: %w", h.Name, err)
			}
			objSel, err := selector(h.ObjectSelector)
			if err != nil {
				return fmt.Errorf("webhook %s: objectSelector: %w", h.Name, err)
			}
			m.NamespaceSelector, m.ObjectSelector = nsSel.String(), objSel.String()
			m.NamespaceMatch = nsSel.Matches(nsLabels)
			m.ObjectMatch = objSel.Matches(labels.Set(current.Labels))
			m.Called = m.NamespaceMatch && m.ObjectMatch && rulesMatchPodCreate(h.Rules)
			r.Webhooks = append(r.Webhooks, m)
			switch {
			case !m.NamespaceMatch:
				r.step("webhook-namespace-mismatch", "webhook", h.Name, "requirement", unmet(nsSel, nsLabels))
			case !m.ObjectMatch:
				r.step("webhook-object-mismatch", "webhook", h.Name, "requirement", unmet(objSel, labels.Set(current.Labels)))
			case !m.Called:
				r.step("webhook-rules-mismatch", "webhook", h.Name)
			}
			if !m.Called || r.WebhookError != "" {
				continue
			}
			anyCalled = true
			r.step("webhook-called", "webhook", h.Name, "configuration", c.Name, "path", m.Path)
			r.Trace = append(r.Trace, policyTrace(wh.cfg, current, ns.Name)...)
			next, patched, err := wh.call(current, ns.Name, m.Path, withDefaults)
			if err != nil {
				var refused webhookRefusal
				if errors.As(err, &refused) {
					r.WebhookError = refused.msg
					r.step("webhook-refused", "webhook", h.Name, "message", refused.msg)
					continue
				}
				return err
			}
			if patched {
				current = next
			}
		}
	}
	r.Final = current
	r.Injected = inject.FindSidecar(current) != nil && inject.FindSidecar(r.Pod) == nil
	switch {
	case !anyCalled:
		r.step("not-injected-no-webhook")
		// The common reason: the Pod asks for injection with the annotation, which no webhook
		// selector reads (selectors read labels); Istio reads the annotation only once called.
		if v, ok := r.Pod.Annotations[annotation.SidecarInject.Name]; ok && v == "true" {
			if _, labelled := r.Pod.Labels[label.SidecarInject.Name]; !labelled {
				r.step("hint-annotation-not-label")
			}
		}
	case r.Injected:
		r.step("injected")
	case r.WebhookError == "":
		r.step("not-injected-policy")
	}
	if r.WebhookError != "" {
		r.Admitted = false
		return nil
	}
	r.Admitted, r.Violations, r.Warnings = psa.evaluate(ctx, ns, current)
	if r.Admitted {
		r.step("admitted")
	} else {
		r.step("rejected-pod-security", "message", r.Violations[0])
	}
	return nil
}

// selector is a webhook's label selector as the API server reads it: absent selects everything.
func selector(ls *metav1.LabelSelector) (labels.Selector, error) {
	if ls == nil {
		return labels.Everything(), nil
	}
	return metav1.LabelSelectorAsSelector(ls)
}

// rulesMatchPodCreate says whether a webhook's rules cover creating a v1 Pod.
func rulesMatchPodCreate(rules []admissionregistrationv1.RuleWithOperations) bool {
	has := func(list []string, v string) bool {
		for _, x := range list {
			if x == v || x == "*" {
				return true
			}
		}
		return false
	}
	for _, r := range rules {
		ops := false
		for _, o := range r.Operations {
			ops = ops || o == admissionregistrationv1.Create || o == admissionregistrationv1.OperationAll
		}
		if ops && has(r.APIGroups, "") && has(r.APIVersions, "v1") && has(r.Resources, "pods") {
			return true
		}
	}
	return false
}

// webhookConfigurations reads the rendered MutatingWebhookConfigurations.
func webhookConfigurations(text string) ([]admissionregistrationv1.MutatingWebhookConfiguration, error) {
	var out []admissionregistrationv1.MutatingWebhookConfiguration
	for _, doc := range strings.Split(text, "\n---\n") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		var c admissionregistrationv1.MutatingWebhookConfiguration
		if err := yaml.UnmarshalStrict([]byte(doc), &c); err != nil {
			return nil, fmt.Errorf("the installation's MutatingWebhookConfiguration: %w", err)
		}
		out = append(out, c)
	}
	return out, nil
}

// podOf is the Pod a workload's controller creates: the pod template's metadata and spec, in the
// namespace, with a generated name and an owner reference. Where the controller puts a hash in
// the name (a Deployment's ReplicaSet), the name says so with a placeholder.
func podOf(w engine.Workload, namespace string) (*corev1.Pod, error) {
	if w.Object == nil {
		return nil, fmt.Errorf("%s is not a kind that makes Pods", w.Kind)
	}
	// Istio's reader takes any "kind: Job" for a batch/v1 Job (kube-inject keeps that); the API
	// server serves each kind at its group's version and hands a kind of another group (a
	// Volcano Job) to that group's controller.
	if want, ok := servedVersions[w.Kind]; ok && w.APIVersion != want {
		if g, _, _ := strings.Cut(w.APIVersion, "/"); !strings.Contains(w.APIVersion, "/") || g == "apps" || g == "batch" || g == "extensions" {
			return nil, fmt.Errorf("no matches for kind %q in version %q", w.Kind, w.APIVersion)
		}
		return nil, fmt.Errorf("%s %s: sidecarlab does not know how its controller makes Pods", w.APIVersion, w.Kind)
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
			return nil, errors.New("the ReplicationController has no pod template")
		}
		pod = fromTemplate(*o.Spec.Template)
		pod.GenerateName, pod.OwnerReferences = o.Name+"-", owner("v1", "ReplicationController", o.Name)
	default:
		return nil, fmt.Errorf("%s: sidecarlab does not know how its controller makes Pods", w.Kind)
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

// webhook is Istio's injection webhook on a mux, with a fake cluster of one node of the chosen
// Kubernetes version for its native-sidecar detection.
type webhook struct {
	mux  *http.ServeMux
	cfg  *inject.Config
	stop chan struct{}
	once sync.Once
}

type staticWatcher struct {
	cfg    *inject.Config
	values string
}

func (w staticWatcher) SetHandler(func(*inject.Config, string) error) {}
func (w staticWatcher) Run(<-chan struct{})                           {}
func (w staticWatcher) Get() (*inject.Config, string, error)          { return w.cfg, w.values, nil }

func newWebhook(in *engine.Install, node *corev1.Node) (*webhook, error) {
	cfg, err := inject.UnmarshalConfig([]byte(in.InjectorConfig))
	if err != nil {
		return nil, err
	}
	mc, err := mesh.ApplyMeshConfig(in.MeshConfigYAML, mesh.DefaultMeshConfig())
	if err != nil {
		return nil, err
	}
	var values struct {
		Revision string `json:"revision"`
	}
	_ = json.Unmarshal([]byte(in.Values), &values)
	// As istiod: the mesh config and the (empty) ProxyConfig resources merged per pod.
	store := model.NewFakeStore()
	env := &model.Environment{Watcher: meshwatcher.NewTestWatcher(mc), ConfigStore: store}
	env.SetPushContext(&model.PushContext{ProxyConfigs: model.GetProxyConfigs(store, mc)})
	multi := multicluster.NewFakeController()
	w := &webhook{mux: http.NewServeMux(), cfg: &cfg, stop: make(chan struct{})}
	if _, err := inject.NewWebhook(inject.WebhookParameters{
		Watcher: staticWatcher{cfg: &cfg, values: in.Values}, Env: env, Mux: w.mux,
		Revision: values.Revision, MultiCluster: multi,
	}); err != nil {
		return nil, err
	}
	// The node informer is registered (by NewWebhook's handler) before the client starts.
	client := kube.NewFakeClient(node)
	multi.Add(constants.DefaultClusterName, client, w.stop)
	client.RunAndWait(w.stop)
	return w, nil
}

func (w *webhook) close() { w.once.Do(func() { close(w.stop) }) }

// webhookRefusal is the webhook's answer refusing the Pod.
type webhookRefusal struct{ msg string }

func (e webhookRefusal) Error() string { return e.msg }

// call sends the Pod to the webhook as the API server does (an AdmissionReview of a CREATE) and
// applies its JSON patch. patched is false when the webhook allowed the Pod unchanged.
func (w *webhook) call(pod *corev1.Pod, namespace, path string, withDefaults bool) (*corev1.Pod, bool, error) {
	if path == "" {
		path = "/inject"
	}
	raw, err := json.Marshal(pod)
	if err != nil {
		return nil, false, err
	}
	review := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID:       types.UID("sidecarlab"),
			Kind:      metav1.GroupVersionKind{Version: "v1", Kind: "Pod"},
			Resource:  metav1.GroupVersionResource{Version: "v1", Resource: "pods"},
			Name:      createdName(pod),
			Namespace: namespace,
			Operation: admissionv1.Create,
			Object:    runtime.RawExtension{Raw: raw},
		},
	}
	body, err := json.Marshal(review)
	if err != nil {
		return nil, false, err
	}
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	w.mux.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		return nil, false, fmt.Errorf("Istio's webhook answered %d: %s", rec.Code, strings.TrimSpace(rec.Body.String()))
	}
	var answer admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &answer); err != nil {
		return nil, false, fmt.Errorf("Istio's webhook answer: %w", err)
	}
	resp := answer.Response
	if resp == nil {
		return nil, false, errors.New("Istio's webhook gave no response")
	}
	if !resp.Allowed {
		msg := "refused"
		if resp.Result != nil && resp.Result.Message != "" {
			msg = resp.Result.Message
		}
		return nil, false, webhookRefusal{msg: msg}
	}
	if len(resp.Patch) == 0 {
		return pod, false, nil
	}
	patch, err := jsonpatch.DecodePatch(resp.Patch)
	if err != nil {
		return nil, false, fmt.Errorf("Istio's webhook patch: %w", err)
	}
	patchedJSON, err := patch.Apply(raw)
	if err != nil {
		return nil, false, fmt.Errorf("applying Istio's webhook patch: %w", err)
	}
	var out corev1.Pod
	if err := json.Unmarshal(patchedJSON, &out); err != nil {
		return nil, false, err
	}
	if withDefaults {
		defaulted(&out)
	}
	return &out, true, nil
}

// podSecurity is Pod Security Admission as the API server of that version runs it, with the
// default configuration (privileged everywhere unless the namespace's labels say otherwise).
type podSecurity struct {
	adm     *psadmission.Admission
	version api.Version
}

func newPodSecurity(v api.Version) (*podSecurity, error) {
	ev, err := policy.NewEvaluator(policy.DefaultChecks(), &v)
	if err != nil {
		return nil, err
	}
	return &podSecurity{adm: &psadmission.Admission{Configuration: &psaapi.PodSecurityConfiguration{}, Evaluator: ev, Metrics: noMetrics{}}, version: v}, nil
}

// evaluate runs the admission code on the Pod with the namespace's policy: admitted unless the
// enforce level forbids it; violations are the enforce and audit messages, warnings the warn
// level's, as the API server words them.
func (p *podSecurity) evaluate(ctx context.Context, ns engine.Namespace, pod *corev1.Pod) (admitted bool, violations, warnings []string) {
	defaults := api.Policy{
		Enforce: api.LevelVersion{Level: api.LevelPrivileged, Version: api.LatestVersion()},
		Audit:   api.LevelVersion{Level: api.LevelPrivileged, Version: api.LatestVersion()},
		Warn:    api.LevelVersion{Level: api.LevelPrivileged, Version: api.LatestVersion()},
	}
	nsPolicy, errs := api.PolicyToEvaluate(ns.Labels, defaults)
	attrs := &api.AttributesRecord{
		Name: createdName(pod), Namespace: ns.Name, Kind: schema.GroupVersionKind{Version: "v1", Kind: "Pod"},
		Resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Operation: admissionv1.Create, Object: pod,
	}
	resp := p.adm.EvaluatePod(ctx, nsPolicy, errs.ToAggregate(), &pod.ObjectMeta, &pod.Spec, attrs, true)
	if !resp.Allowed && resp.Result != nil {
		violations = append(violations, resp.Result.Message)
	}
	if a := resp.AuditAnnotations[api.AuditViolationsAnnotationKey]; a != "" {
		violations = append(violations, a)
	}
	return resp.Allowed, violations, resp.Warnings
}

type noMetrics struct{}

func (noMetrics) RecordEvaluation(metrics.Decision, api.LevelVersion, metrics.Mode, api.Attributes) {}
func (noMetrics) RecordExemption(api.Attributes)                                                    {}
func (noMetrics) RecordError(bool, api.Attributes)                                                  {}
