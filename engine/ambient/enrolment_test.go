package ambient

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sidecarlab/sidecarlab/engine"
)

// renderedCNI is the CNI agent's settings of an installation rendered by the engine from Istio's
// charts with set.
func renderedCNI(t *testing.T, set ...string) *CNI {
	t.Helper()
	eng, err := engine.New(context.Background(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	in, err := eng.Install(context.Background(), engine.InstallOptions{Set: set})
	if err != nil {
		t.Fatal(err)
	}
	if in.CNI() == nil {
		return nil
	}
	c, err := CNIFromConfigMap(in.CNI())
	if err != nil {
		t.Fatal(err)
	}
	return &c
}

func pod(ns string, labels, annotations map[string]string, hostNetwork bool) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: ns, Labels: labels, Annotations: annotations},
		Spec: corev1.PodSpec{HostNetwork: hostNetwork}}
}

// TestEnrol: with the ambient profile as Istio's charts render it, a pod joins by the namespace's
// or its own istio.io/dataplane-mode label and stays out for every rule of Istio's (a none label,
// host network, a sidecar, kube-system, no label); with the default profile nothing enrols it.
func TestEnrol(t *testing.T) {
	amb := renderedCNI(t, "profile=ambient")
	if amb == nil || !amb.Enabled {
		t.Fatalf("profile=ambient: the CNI agent's ConfigMap says ambient is off: %+v", amb)
	}
	ambientNS := map[string]string{"istio.io/dataplane-mode": "ambient"}
	mode := func(v string) map[string]string { return map[string]string{"istio.io/dataplane-mode": v} }
	for _, c := range []struct {
		name     string
		cni      *CNI
		pod      *corev1.Pod
		ns       map[string]string
		want     Rule
		selector int
	}{
		{"the namespace labelled ambient", amb, pod("shop", nil, nil, false), ambientNS, RuleSelector, 2},
		{"the pod labelled ambient", amb, pod("shop", mode("ambient"), nil, false), nil, RuleSelector, 1},
		{"the pod labelled none in an ambient namespace", amb, pod("shop", mode("none"), nil, false), ambientNS, RuleNoSelector, 0},
		{"no label anywhere", amb, pod("shop", nil, nil, false), nil, RuleNoSelector, 0},
		{"a hostNetwork pod", amb, pod("shop", mode("ambient"), nil, true), ambientNS, RuleHostNetwork, 0},
		{"a pod with a sidecar", amb, pod("shop", nil, map[string]string{"sidecar.istio.io/status": "{}"}, false), ambientNS, RuleSidecar, 0},
		{"kube-system", amb, pod("kube-system", mode("ambient"), nil, false), ambientNS, RuleExcludedNamespace, 0},
		{"the default profile", renderedCNI(t), pod("shop", mode("ambient"), nil, false), ambientNS, RuleNotInstalled, 0},
		{"CNI without ambient", renderedCNI(t, "components.cni.enabled=true"), pod("shop", mode("ambient"), nil, false), ambientNS, RuleNotInstalled, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, err := c.cni.Enrol(c.pod, c.ns)
			if err != nil {
				t.Fatal(err)
			}
			if e.Rule != c.want || e.Joins != (c.want == RuleSelector) || e.Selector != c.selector {
				t.Fatalf("got %+v, want rule %s, selector %d", e, c.want, c.selector)
			}
			if c.want == RuleSelector && !strings.Contains(e.PodSelector+e.NamespaceSelector, "istio.io/dataplane-mode") {
				t.Fatalf("the selector does not name the label: %+v", e)
			}
		})
	}
}

// TestEnrolSelectors: the rule follows the selectors the chart was given, and a selector the agent
// could not parse is the agent's error.
func TestEnrolSelectors(t *testing.T) {
	own := &CNI{Enabled: true, Selectors: "- podSelector:\n    matchLabels: {team: mesh}\n"}
	if e, err := own.Enrol(pod("shop", map[string]string{"team": "mesh"}, nil, false), nil); err != nil || !e.Joins || e.Selector != 1 || e.PodSelector != "team=mesh" || e.NamespaceSelector != "" {
		t.Fatalf("a pod the only selector matches: %+v %v", e, err)
	}
	if e, err := own.Enrol(pod("shop", nil, nil, false), map[string]string{"istio.io/dataplane-mode": "ambient"}); err != nil || e.Joins || e.Rule != RuleNoSelector {
		t.Fatalf("an ambient namespace the selectors do not name: %+v %v", e, err)
	}
	bad := &CNI{Enabled: true, Selectors: "- podSelector: {matchExpressions: [{key: a, operator: Sideways}]}\n"}
	if _, err := bad.Enrol(pod("shop", nil, nil, false), nil); err == nil || !strings.Contains(err.Error(), "enablement") {
		t.Fatalf("a selector with an unknown operator: %v", err)
	}
	if _, err := CNIFromConfigMap(map[string]string{"AMBIENT_ENABLED": "sometimes"}); err == nil {
		t.Fatal("AMBIENT_ENABLED=sometimes was read")
	}
}
