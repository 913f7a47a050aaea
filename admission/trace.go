package admission

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/sidecarlab/sidecarlab/engine"

	"istio.io/api/annotation"
	"istio.io/api/label"
	"istio.io/istio/pkg/kube/inject"
)

// Step is one rule the cluster applied to the Pod, in the order it applies them: an id, and the
// facts its sentence names (package wording words it).
type Step struct {
	ID     string            `json:"id"`
	Params map[string]string `json:"params,omitempty"`
}

// TraceIDs are every id a trace may hold, for the words' completeness test.
func TraceIDs() []string {
	return []string{
		"namespace",
		"webhook-namespace-mismatch", "webhook-object-mismatch", "webhook-rules-mismatch", "webhook-called", "webhook-refused",
		"policy-host-network", "policy-ignored-namespace", "policy-label", "policy-annotation", "policy-invalid-value",
		"policy-never-selector", "policy-always-selector", "policy-default",
		"injected", "not-injected-no-webhook", "hint-annotation-not-label", "not-injected-policy",
		"admitted", "rejected-pod-security",
	}
}

// step appends the step id, with its facts as key, value pairs, to the trace.
func (r *Result) step(id string, kv ...string) { r.Trace = append(r.Trace, newStep(id, kv...)) }

// newStep is the step id with its facts given as key, value pairs.
func newStep(id string, kv ...string) Step {
	s := Step{ID: id}
	if len(kv) > 0 {
		s.Params = map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			s.Params[kv[i]] = kv[i+1]
		}
	}
	return s
}

// unmet is the first requirement of a selector the labels do not meet, as apimachinery writes it.
func unmet(sel labels.Selector, set labels.Set) string {
	reqs, _ := sel.Requirements()
	for _, q := range reqs {
		if !q.Matches(set) {
			return q.String()
		}
	}
	return sel.String()
}

// policyTrace says which of the rules of Istio's injection policy decides for the Pod, in the
// order Istio's webhook applies them (inject.go's injectRequired): host networking, the ignored
// system namespaces, the pod's sidecar.istio.io/inject label (over its annotation), the
// neverInjectSelector and alwaysInjectSelector of the injector config, and the default policy.
// It describes; the verdict is the webhook's own answer, and TestTraceMatchesWebhook fails if
// the rule named here ever disagrees with it.
func policyTrace(cfg *inject.Config, pod *corev1.Pod, namespace string) []Step {
	if pod.Spec.HostNetwork {
		return []Step{{ID: "policy-host-network", Params: map[string]string{"inject": "false"}}}
	}
	if slices.Contains(inject.IgnoredNamespaces.UnsortedList(), namespace) {
		return []Step{{ID: "policy-ignored-namespace", Params: map[string]string{"namespace": namespace, "inject": "false"}}}
	}
	value, source := pod.Annotations[annotation.SidecarInject.Name], "policy-annotation"
	if v, ok := pod.Labels[label.SidecarInject.Name]; ok {
		value, source = v, "policy-label"
	}
	var out []Step
	switch value {
	case "true", "false":
		return []Step{{ID: source, Params: map[string]string{"value": value, "inject": value}}}
	case "":
	default:
		out = append(out, Step{ID: "policy-invalid-value", Params: map[string]string{"value": value, "source": source}})
	}
	if sel, ok := engine.MatchingSelector(cfg.NeverInjectSelector, pod.Labels); ok {
		return append(out, Step{ID: "policy-never-selector", Params: map[string]string{"selector": sel.String(), "inject": "false"}})
	}
	if sel, ok := engine.MatchingSelector(cfg.AlwaysInjectSelector, pod.Labels); ok {
		return append(out, Step{ID: "policy-always-selector", Params: map[string]string{"selector": sel.String(), "inject": "true"}})
	}
	inj := "false"
	if cfg.Policy == inject.InjectionPolicyEnabled {
		inj = "true"
	}
	return append(out, Step{ID: "policy-default", Params: map[string]string{"policy": string(cfg.Policy), "inject": inj}})
}
