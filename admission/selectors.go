package admission

import (
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/sidecarlab/sidecarlab/engine"
)

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

// match is the API server's choice for one webhook of the configuration named config: its
// namespace selector on the namespace's labels, its object selector on the Pod's, and its rules
// on creating a Pod. miss is the trace step that says why it is not called (nil when it is).
func match(config string, h admissionregistrationv1.MutatingWebhook, ns, pod labels.Set) (m WebhookMatch, miss *Step, err error) {
	m = WebhookMatch{Configuration: config, Name: h.Name}
	if h.ClientConfig.Service != nil && h.ClientConfig.Service.Path != nil {
		m.Path = *h.ClientConfig.Service.Path
	}
	nsSel, err := Selector(h.NamespaceSelector)
	if err != nil {
		return m, nil, fmt.Errorf("webhook %s: namespaceSelector: %w", h.Name, err)
	}
	objSel, err := Selector(h.ObjectSelector)
	if err != nil {
		return m, nil, fmt.Errorf("webhook %s: objectSelector: %w", h.Name, err)
	}
	m.NamespaceSelector, m.ObjectSelector = nsSel.String(), objSel.String()
	m.NamespaceMatch = nsSel.Matches(ns)
	m.ObjectMatch = objSel.Matches(pod)
	m.Called = m.NamespaceMatch && m.ObjectMatch && rulesMatchPodCreate(h.Rules)
	var s Step
	switch {
	case !m.NamespaceMatch:
		s = newStep("webhook-namespace-mismatch", "webhook", h.Name, "requirement", unmet(nsSel, ns))
	case !m.ObjectMatch:
		s = newStep("webhook-object-mismatch", "webhook", h.Name, "requirement", unmet(objSel, pod))
	case !m.Called:
		s = newStep("webhook-rules-mismatch", "webhook", h.Name)
	default:
		return m, nil, nil
	}
	return m, &s, nil
}

// Selector is a webhook's label selector as the API server reads it: absent selects everything.
// It is the one reading of webhook selectors: clustermesh's choice of a revision reads them by it
// too.
func Selector(ls *metav1.LabelSelector) (labels.Selector, error) {
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
