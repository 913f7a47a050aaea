package admission

import (
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/sidecarlab/sidecarlab/engine"
)

// createPods is a webhook rule that covers creating v1 Pods.
var createPods = []admissionregistrationv1.RuleWithOperations{{
	Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
	Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
}}

// TestNamespaceNameLabel: a webhook that selects namespaces by kubernetes.io/metadata.name (the
// label the API server sets on every namespace, whatever the user wrote) calls the namespace it
// names and no other, though the settings' labels do not carry it.
func TestNamespaceNameLabel(t *testing.T) {
	h := admissionregistrationv1.MutatingWebhook{Name: "by-name.example.com", Rules: createPods,
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "shop"}}}
	for _, c := range []struct {
		ns   engine.Namespace
		want bool
	}{
		{engine.Namespace{Name: "shop"}, true},
		{engine.Namespace{Name: "other", Labels: map[string]string{"team": "shop"}}, false},
	} {
		m, _, err := match("cfg", h, nsLabels(c.ns), labels.Set{})
		if err != nil {
			t.Fatal(err)
		}
		if m.NamespaceMatch != c.want || m.Called != c.want {
			t.Errorf("namespace %s: match %v, called %v; want %v", c.ns.Name, m.NamespaceMatch, m.Called, c.want)
		}
	}
}

// TestRulesWildcard: "*" in a rule's groups, versions, resources or operations covers creating a
// Pod, as the API server reads it; a rule of another group, version, resource or operation does
// not.
func TestRulesWildcard(t *testing.T) {
	rule := func(op admissionregistrationv1.OperationType, group, version, resource string) []admissionregistrationv1.RuleWithOperations {
		return []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{op},
			Rule: admissionregistrationv1.Rule{APIGroups: []string{group}, APIVersions: []string{version}, Resources: []string{resource}}}}
	}
	create := admissionregistrationv1.Create
	for _, c := range []struct {
		name  string
		rules []admissionregistrationv1.RuleWithOperations
		want  bool
	}{
		{"pods", createPods, true},
		{"every group, version and resource", rule(create, "*", "*", "*"), true},
		{"every operation", rule(admissionregistrationv1.OperationAll, "", "v1", "pods"), true},
		{"another group", rule(create, "apps", "*", "*"), false},
		{"another version", rule(create, "", "v2", "pods"), false},
		{"another resource", rule(create, "", "v1", "services"), false},
		{"another operation", rule(admissionregistrationv1.Update, "*", "*", "*"), false},
	} {
		if got := rulesMatchPodCreate(c.rules); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
