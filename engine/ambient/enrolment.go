package ambient

import (
	"fmt"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"istio.io/api/annotation"
	"istio.io/api/label"
	"istio.io/istio/cni/pkg/util"
)

// CNI is what Istio's CNI node agent reads from its ConfigMap (istio-cni-config, rendered from
// the istio-cni chart) to decide which pods join ambient.
type CNI struct {
	// Enabled is AMBIENT_ENABLED: the agent captures pods for ztunnel at all.
	Enabled bool `json:"enabled"`
	// Selectors is AMBIENT_ENABLEMENT_SELECTOR: the chart's ambient.enablementSelectors, as YAML.
	Selectors string `json:"selectors,omitempty"`
	// ExcludeNamespaces is EXCLUDE_NAMESPACES: namespaces the plugin and the agent leave alone.
	ExcludeNamespaces []string `json:"excludeNamespaces,omitempty"`
}

// CNIFromConfigMap reads the agent's settings from the istio-cni-config ConfigMap's data, as
// cni/pkg/cmd reads them from its environment.
func CNIFromConfigMap(data map[string]string) (CNI, error) {
	c := CNI{Selectors: data["AMBIENT_ENABLEMENT_SELECTOR"], ExcludeNamespaces: util.SplitExcludeNamespaces(data["EXCLUDE_NAMESPACES"])}
	if v := data["AMBIENT_ENABLED"]; v != "" {
		on, err := strconv.ParseBool(v)
		if err != nil {
			return c, fmt.Errorf("istio-cni-config AMBIENT_ENABLED=%q: %v", v, err)
		}
		c.Enabled = on
	}
	return c, nil
}

// Rule is why a pod joins ambient or stays out, in the order the CNI plugin and its node agent
// decide.
type Rule string

const (
	// RuleNotInstalled: the installation has no CNI agent with ambient enabled; nothing captures
	// the pod, whatever its labels.
	RuleNotInstalled Rule = "not-installed"
	// RuleExcludedNamespace: the namespace is in the agent's excludeNamespaces.
	RuleExcludedNamespace Rule = "excluded-namespace"
	// RuleHostNetwork: a hostNetwork pod is never captured (its network namespace is the node's).
	RuleHostNetwork Rule = "host-network"
	// RuleSidecar: a pod with a sidecar (sidecar.istio.io/status) opts out of ambient.
	RuleSidecar Rule = "sidecar"
	// RuleSelector: an enablement selector matched (Enrolment.Selector names it): the pod joins.
	RuleSelector Rule = "selector"
	// RuleNoSelector: no enablement selector matched the pod and its namespace.
	RuleNoSelector Rule = "no-selector"
	// RuleAgentError: the agent could not read its settings (Enrolment.Error says why); it would
	// not start, and no pod joins.
	RuleAgentError Rule = "agent-error"
)

// MessageID is the id of the rule's sentence in the ambient catalogs.
func (r Rule) MessageID() string { return "ambient.enrol." + string(r) }

// Rules are every rule, in the order Enrol decides by.
func Rules() []Rule {
	return []Rule{RuleNotInstalled, RuleExcludedNamespace, RuleHostNetwork, RuleSidecar, RuleSelector, RuleNoSelector, RuleAgentError}
}

// RunTime are the ids of what happens at run time to a pod that joins, in order: nothing at
// admission, the CNI plugin's hold, the node agent's mark.
func RunTime() []string {
	return []string{"ambient.runtime.admitted", "ambient.runtime.cni-hold", "ambient.runtime.redirection"}
}

// Enrolment is whether a pod joins ambient, and by which rule.
type Enrolment struct {
	Joins bool `json:"joins"`
	Rule  Rule `json:"rule"`
	// Selector is the matching enablement selector's number (1-based), for RuleSelector, and
	// its pod and namespace selectors in Kubernetes' selector syntax ("" selects everything).
	Selector          int    `json:"selector,omitempty"`
	PodSelector       string `json:"podSelector,omitempty"`
	NamespaceSelector string `json:"namespaceSelector,omitempty"`
	// Error is the agent's own message, for RuleAgentError.
	Error string `json:"error,omitempty"`
}

// Labelled says whether a pod or its namespace carries istio.io/dataplane-mode, the label that
// asks for ambient (or, as none, keeps a pod out).
func Labelled(pod *corev1.Pod, nsLabels map[string]string) bool {
	_, onPod := pod.Labels[label.IoIstioDataplaneMode.Name]
	_, onNS := nsLabels[label.IoIstioDataplaneMode.Name]
	return onPod || onNS
}

// Enrol says whether pod, in a namespace with nsLabels, joins ambient under c. Whether it joins
// is Istio's own decision (cni/pkg/util's CompiledEnablementSelectors.Matches over the
// selectors parsed as the agent parses them); the rule names the first reason, in its order.
func (c *CNI) Enrol(pod *corev1.Pod, nsLabels map[string]string) (Enrolment, error) {
	if c == nil || !c.Enabled {
		return Enrolment{Rule: RuleNotInstalled}, nil
	}
	if slices.Contains(c.ExcludeNamespaces, pod.Namespace) {
		return Enrolment{Rule: RuleExcludedNamespace}, nil
	}
	var selectors []util.EnablementSelector
	if err := yaml.Unmarshal([]byte(c.Selectors), &selectors); err != nil {
		return Enrolment{}, fmt.Errorf("failed to parse ambient enablement selector: %v", err)
	}
	all, err := util.NewCompiledEnablementSelectors(selectors)
	if err != nil {
		return Enrolment{}, err
	}
	joins := all.Matches(pod, nsLabels)
	e := Enrolment{Joins: joins, Rule: RuleNoSelector}
	switch _, sidecar := pod.Annotations[annotation.SidecarStatus.Name]; {
	case pod.Spec.HostNetwork:
		e.Rule = RuleHostNetwork
	case sidecar:
		e.Rule = RuleSidecar
	default:
		for i, s := range selectors {
			one, err := util.NewCompiledEnablementSelectors([]util.EnablementSelector{s})
			if err != nil {
				return Enrolment{}, err
			}
			if one.Matches(pod, nsLabels) {
				e.Rule, e.Selector = RuleSelector, i+1
				if e.PodSelector, err = selectorText(s.PodSelector); err == nil {
					e.NamespaceSelector, err = selectorText(s.NamespaceSelector)
				}
				if err != nil {
					return Enrolment{}, err
				}
				break
			}
		}
	}
	if joins != (e.Rule == RuleSelector) {
		// The rules above are Matches' own order; a new reason in Istio's code lands here.
		return Enrolment{}, &input.Fault{ID: "ambient-rule", Params: input.Params("joins", strconv.FormatBool(joins), "ruleQ", strconv.Quote(string(e.Rule)))}
	}
	return e, nil
}

// selectorText is a label selector in Kubernetes' syntax (app=web,tier notin (db)).
func selectorText(ls metav1.LabelSelector) (string, error) {
	sel, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil {
		return "", err
	}
	return sel.String(), nil
}
