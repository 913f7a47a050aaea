package wording

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/admission"
	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/i18n"
)

// TestTraceWords: every rule a trace may hold is worded, no words exist for a rule that is never
// given, and a rule's sentence names its params.
func TestTraceWords(t *testing.T) {
	ids := admission.TraceIDs()
	for _, id := range ids {
		if _, ok := traceWords[id]; !ok {
			t.Errorf("trace rule %q has no words", id)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(traceWords)) {
		if !slices.Contains(ids, id) {
			t.Errorf("words for %q, a rule no trace gives", id)
		}
	}
	cases := []struct {
		step admission.Step
		want []string
	}{
		{admission.Step{ID: "namespace", Params: map[string]string{"name": "shop", "labels": "istio-injection=enabled"}}, []string{"shop", "istio-injection=enabled"}},
		{admission.Step{ID: "namespace", Params: map[string]string{"name": "shop"}}, []string{"shop", "no labels"}},
		{admission.Step{ID: "webhook-namespace-mismatch", Params: map[string]string{"webhook": "namespace.sidecar-injector.istio.io", "requirement": "istio-injection in (enabled)"}}, []string{"namespace.sidecar-injector.istio.io", "istio-injection in (enabled)", "namespaceSelector"}},
		{admission.Step{ID: "webhook-called", Params: map[string]string{"webhook": "rev.namespace.sidecar-injector.istio.io", "configuration": "istio-revision-tag-prod", "path": "/inject"}}, []string{"rev.namespace.sidecar-injector.istio.io", "istio-revision-tag-prod", "/inject"}},
		{admission.Step{ID: "policy-invalid-value", Params: map[string]string{"value": "no", "source": "policy-label"}}, []string{`"no"`, "label", "default policy"}},
		{admission.Step{ID: "policy-default", Params: map[string]string{"policy": "enabled", "inject": "true"}}, []string{"enabled", "inject."}},
		{admission.Step{ID: "policy-default", Params: map[string]string{"policy": "disabled", "inject": "false"}}, []string{"disabled", "do not inject"}},
		{admission.Step{ID: "not-injected-no-webhook"}, []string{"Label the namespace"}},
		{admission.Step{ID: "not-injected-no-webhook", Params: map[string]string{"ambient": "true"}}, []string{"out of ambient"}},
		{admission.Step{ID: "rejected-pod-security", Params: map[string]string{"message": `violates PodSecurity "baseline:latest"`}}, []string{`violates PodSecurity "baseline:latest"`}},
	}
	for _, c := range cases {
		got := English.TraceText(c.step)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", c.step.ID, got, w)
			}
		}
	}
	if got := English.TraceText(admission.Step{ID: "no-such-rule"}); got != "no-such-rule" {
		t.Errorf("an unknown rule: %q", got)
	}
}

// TestAdmissionError: why a document has no Pod is worded in the reader's language when it is an
// error of ours (Result.Err), and kept as it is when it is kubectl's own words.
func TestAdmissionError(t *testing.T) {
	ours := admission.Result{Error: "Service is not a kind that makes Pods", Err: &input.Error{ID: "not-a-pod-maker", Params: input.Params("kind", "Service")}}
	if got := English.AdmissionError(ours); got != ours.Error {
		t.Errorf("English: %q, want %q", got, ours.Error)
	}
	for _, lang := range []string{"ja", "ko"} {
		if got := In(i18n.For(lang)).AdmissionError(ours); got == ours.Error || !strings.Contains(got, "Service") || !nonASCII.MatchString(got) {
			t.Errorf("%s: %q", lang, got)
		}
	}
	kubectl := admission.Result{Error: `the namespace from the provided object "a" does not match the namespace "b".`, Refused: true}
	if got := In(i18n.For("ja")).AdmissionError(kubectl); got != kubectl.Error {
		t.Errorf("kubectl's words: %q", got)
	}
}
