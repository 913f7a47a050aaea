// Package admission follows the Pod a workload's controller creates through the cluster's
// admission path, offline, with the code the cluster runs. Admitter (this file) takes each
// workload of a manifest through these steps, in the API server's order:
//
//  1. the Pod as its controller creates it and the API server receives it: the pod template in
//     its namespace, named and owned as the controller does, with the API server's defaults
//     (pod.go);
//  2. the API server's choice of mutating webhooks: the MutatingWebhookConfigurations the
//     installation renders, matched with apimachinery's label selectors on the namespace's and
//     the Pod's labels (selectors.go);
//  3. Istio's injection webhook itself: inject.NewWebhook on a mux, sent an AdmissionReview
//     in-process (as Istio's own webhook tests do), its JSON patch applied to the Pod
//     (webhook.go);
//  4. Pod Security Admission: k8s.io/pod-security-admission's evaluator and admission code on
//     the final Pod, with the namespace's enforce, audit and warn labels (podsecurity.go).
//
// Each answer carries a trace naming the rule that decided at each step (trace.go). The
// one-click fix of a pod template that asks for injection by annotation, which no webhook's
// object selector reads, moves it to a label (labelfix.go).
//
// Nothing of their logic is repeated here; this package builds their inputs and reads their
// answers. It is not the engine: it drives an http.ServeMux (in-process, no socket), which the
// engine does not import.
package admission

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"sync"

	"github.com/sidecarlab/sidecarlab/engine/input"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/pod-security-admission/api"

	"istio.io/api/annotation"
	"istio.io/api/label"
	"istio.io/istio/pkg/kube/inject"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/ambient"
)

// DefaultNamespace is the namespace of a workload that names none, when the settings name none.
const DefaultNamespace = "default"

// CheckedKubernetes is the Kubernetes version of the real cluster this package's answers are held
// to in sidecarlab's tests (cmd/sidecarlab's conformance tests, against the control plane
// controlplane/ builds; TestControlPlaneVersions keeps the two equal), with the Istio the engine
// embeds as its istiod.
const CheckedKubernetes = "1.36"

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
	// Error is set when the document is not a workload that makes Pods, or failed to read; Err is
	// the same as ids and parameters (the edges word it), nil where Error is kubectl's own words.
	Error string       `json:"error,omitempty"`
	Err   *input.Error `json:"-"`
	// Refused is set when kubectl refuses the document before any API server sees it (Error
	// says why, in kubectl's words): `kubectl create` exits 1, and so does `sidecarlab admit`.
	// A document of a kind that makes no Pods is not refused: kubectl creates it.
	Refused bool `json:"refused,omitempty"`
	// Trace names each rule in the order the cluster applies it (see trace.go); the verdicts
	// above come from the real code, the trace says which rule decided.
	Trace []Step `json:"trace"`
	// Ambient is whether the admitted Pod joins ambient once it runs (the CNI agent's decision,
	// package ambient), when the installation has ambient or the Pod or its namespace carries
	// istio.io/dataplane-mode; nil otherwise.
	Ambient *ambient.Enrolment `json:"ambient,omitempty"`
}

// enrol decides whether the admitted Pod joins ambient under the installation's CNI agent.
func (r *Result) enrol(cni *ambient.CNI, ns engine.Namespace) {
	if !r.Admitted || r.Final == nil || (!(cni != nil && cni.Enabled) && !ambient.Labelled(r.Final, ns.Labels)) {
		return
	}
	pod := r.Final.DeepCopy()
	pod.Namespace = ns.Name
	e, err := cni.Enrol(pod, ns.Labels)
	if err != nil {
		e = ambient.Enrolment{Rule: ambient.RuleAgentError, Error: err.Error()}
	}
	r.Ambient = &e
	if e.Joins {
		// No webhook selected it, and none should: a label that brings a sidecar would take
		// the Pod out of ambient, so the trace does not advise one.
		for i := range r.Trace {
			if r.Trace[i].ID == "not-injected-no-webhook" {
				r.Trace[i].Params = map[string]string{"ambient": "true"}
			}
		}
	}
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
	configs []*admissionregistrationv1.MutatingWebhookConfiguration
	wh      *webhook
	psa     *podSecurity
	// cni is the CNI node agent's ambient settings; nil when the installation has none.
	cni *ambient.CNI
}

const maxWebhooks = 8

// Workloads is what an Admitter needs of the engine (engine.Engine has it): a manifest's
// workloads with the steps applied, and the installation of the settings.
type Workloads interface {
	Workloads(ctx context.Context, manifest []byte, steps []input.Step, s engine.Settings) (*engine.Install, []engine.Workload, error)
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
	minor, err := s.KubernetesMinor()
	if err != nil {
		return nil, err
	}
	key := in.Hash + "@" + strconv.Itoa(minor)
	a.mu.Lock()
	defer a.mu.Unlock()
	if c, ok := a.hooks[key]; ok {
		return c, nil
	}
	configs, err := in.WebhookConfigurations()
	if err != nil {
		return nil, err
	}
	psa, err := newPodSecurity(api.MajorMinorVersion(1, minor))
	if err != nil {
		return nil, err
	}
	wh, err := newWebhook(in, engine.Node(minor))
	if err != nil {
		return nil, err
	}
	c := &cluster{configs: configs, wh: wh, psa: psa}
	if data := in.CNI(); data != nil {
		cni, err := ambient.CNIFromConfigMap(data)
		if err != nil {
			return nil, err
		}
		c.cni = &cni
	}
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
func (a *Admitter) Admit(ctx context.Context, manifest []byte, steps []input.Step, s engine.Settings) ([]Result, error) {
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
			r.Error, r.Err = w.Error.Error(), w.Error
			out = append(out, r)
			continue
		}
		if a.NamespaceGiven && s.Namespace.Name != "" && w.Namespace != "" && w.Namespace != s.Namespace.Name {
			r.Error = fmt.Sprintf("the namespace from the provided object %q does not match the namespace %q. You must pass '--namespace=%s' to perform this operation.", w.Namespace, s.Namespace.Name, w.Namespace)
			r.Refused = true
			out = append(out, r)
			continue
		}
		pod, err := podOf(w, ns.Name)
		if err != nil {
			r.Error = err.Error()
			errors.As(err, &r.Err)
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
		ns := engine.Namespace{Name: pod.Namespace, Labels: labels}
		if err := r.admit(ctx, c.configs, c.wh, c.psa, !a.undefaulted, ns); err != nil {
			return nil, err
		}
		r.enrol(c.cni, ns)
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

func (r *Result) admit(ctx context.Context, configs []*admissionregistrationv1.MutatingWebhookConfiguration, wh *webhook, psa *podSecurity, withDefaults bool, ns engine.Namespace) error {
	nsLabels := nsLabels(ns)
	r.step("namespace", "name", ns.Name, "labels", labels.Set(ns.Labels).String())
	current := r.Pod.DeepCopy()
	anyCalled := false
	for _, c := range configs {
		for _, h := range c.Webhooks {
			// The object selector reads the Pod as the webhooks before this one left it.
			m, miss, err := match(c.Name, h, nsLabels, labels.Set(current.Labels))
			if err != nil {
				return err
			}
			r.Webhooks = append(r.Webhooks, m)
			if miss != nil {
				r.Trace = append(r.Trace, *miss)
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
