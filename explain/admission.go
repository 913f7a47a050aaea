package explain

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sidecarlab/sidecarlab/admission"
)

// traceWords word the rules of an admission trace (admission.TraceIDs), with their params.
var traceWords = map[string]func(p map[string]string) string{
	"namespace": func(p map[string]string) string {
		if p["labels"] == "" {
			return fmt.Sprintf("The Pod is created in namespace %s, which has no labels of its own.", p["name"])
		}
		return fmt.Sprintf("The Pod is created in namespace %s, labelled %s.", p["name"], p["labels"])
	},
	"webhook-namespace-mismatch": func(p map[string]string) string {
		return fmt.Sprintf("The API server does not call webhook %s: its namespaceSelector requires %s, which the namespace does not meet.", p["webhook"], p["requirement"])
	},
	"webhook-object-mismatch": func(p map[string]string) string {
		return fmt.Sprintf("The API server does not call webhook %s: its objectSelector requires %s, which the Pod's labels do not meet.", p["webhook"], p["requirement"])
	},
	"webhook-rules-mismatch": func(p map[string]string) string {
		return fmt.Sprintf("The API server does not call webhook %s: its rules do not cover creating Pods.", p["webhook"])
	},
	"webhook-called": func(p map[string]string) string {
		return fmt.Sprintf("The API server calls Istio's webhook %s of %s (path %s) with the Pod.", p["webhook"], p["configuration"], p["path"])
	},
	"webhook-refused": func(p map[string]string) string {
		return fmt.Sprintf("Istio's webhook %s refused the Pod (failurePolicy Fail: the Pod is not created): %s", p["webhook"], p["message"])
	},
	"policy-host-network": words("Istio skips the Pod: it uses hostNetwork, and its iptables rules would change the node's networking."),
	"policy-ignored-namespace": func(p map[string]string) string {
		return fmt.Sprintf("Istio skips the Pod: %s is one of the system namespaces it never injects.", p["namespace"])
	},
	"policy-label": func(p map[string]string) string {
		return fmt.Sprintf("The Pod's label sidecar.istio.io/inject is %q: Istio follows it (the label wins over the annotation).", p["value"])
	},
	"policy-annotation": func(p map[string]string) string {
		return fmt.Sprintf("The Pod's annotation sidecar.istio.io/inject is %q: Istio follows it.", p["value"])
	},
	"policy-invalid-value": func(p map[string]string) string {
		what := "annotation"
		if p["source"] == "policy-label" {
			what = "label"
		}
		return fmt.Sprintf("The Pod's %s sidecar.istio.io/inject is %q, which is neither \"true\" nor \"false\": Istio ignores it and falls back to its default policy.", what, p["value"])
	},
	"policy-never-selector": func(p map[string]string) string {
		return fmt.Sprintf("The Pod's labels match the injector's neverInjectSelector %s: Istio does not inject it.", p["selector"])
	},
	"policy-always-selector": func(p map[string]string) string {
		return fmt.Sprintf("The Pod's labels match the injector's alwaysInjectSelector %s: Istio injects it.", p["selector"])
	},
	"policy-default": func(p map[string]string) string {
		if p["inject"] == "true" {
			return fmt.Sprintf("Nothing on the Pod decides, so Istio's default policy (%s) does: inject.", p["policy"])
		}
		return fmt.Sprintf("Nothing on the Pod decides, so Istio's default policy (%s) does: do not inject.", p["policy"])
	},
	"injected":                  words("Injected: Istio's webhook patched the Pod with the proxy."),
	"not-injected-no-webhook":   words("Not injected: no webhook selected the Pod, so Istio never saw it. Label the namespace (istio-injection=enabled, or istio.io/rev=<revision>) or the Pod (sidecar.istio.io/inject=true)."),
	"hint-annotation-not-label": words("The Pod asks for injection with the annotation sidecar.istio.io/inject: \"true\", but the webhooks' selectors read labels, not annotations: Istio reads the annotation only once its webhook is called. Put the label sidecar.istio.io/inject: \"true\" on the pod template instead (or label the namespace)."),
	"not-injected-policy":       words("Not injected: Istio's webhook saw the Pod and its policy said no."),
	"admitted":                  words("Admitted: Pod Security Admission lets the Pod in."),
	"rejected-pod-security": func(p map[string]string) string {
		return "Rejected by Pod Security Admission: " + p["message"]
	},
}

// TraceStep is one rule of an admission trace with its words, as the API gives it.
type TraceStep struct {
	admission.Step
	Text string `json:"text"`
}

// Trace words a trace.
func (w Words) Trace(steps []admission.Step) []TraceStep {
	out := make([]TraceStep, len(steps))
	for i, s := range steps {
		out[i] = TraceStep{Step: s, Text: w.TraceText(s)}
	}
	return out
}

// TraceText is one rule in a sentence.
func (w Words) TraceText(s admission.Step) string {
	if w, ok := traceWords[s.ID]; ok {
		return w(s.Params)
	}
	return s.ID
}

// Admission is one document's admission with its words, as the API and the CLI give it.
type Admission struct {
	Doc       int    `json:"doc"`
	Kind      string `json:"kind,omitempty"`
	Name      string `json:"name,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	// Pod is the created Pod's name, or its generateName (ending in "-").
	Pod      string `json:"pod,omitempty"`
	Injected bool   `json:"injected"`
	// InjectReasons are the rules that decided injection, in words, in the cluster's order.
	InjectReasons []string `json:"injectReasons"`
	Admitted      bool     `json:"admitted"`
	// Violations are Pod Security Admission's messages and Istio's webhook's refusal, verbatim.
	Violations []string                 `json:"violations"`
	Warnings   []string                 `json:"warnings,omitempty"`
	Webhooks   []admission.WebhookMatch `json:"webhooks,omitempty"`
	Trace      []TraceStep              `json:"trace"`
	Error      string                   `json:"error,omitempty"`
}

// Admissions words the results.
func (w Words) Admissions(rs []admission.Result) []Admission {
	out := make([]Admission, 0, len(rs))
	for _, r := range rs {
		a := Admission{Doc: r.Doc, Kind: r.Kind, Name: r.Name, Injected: r.Injected, Admitted: r.Admitted,
			InjectReasons: []string{}, Violations: []string{}, Warnings: r.Warnings, Webhooks: r.Webhooks, Trace: w.Trace(r.Trace), Error: r.Error}
		if r.Pod != nil {
			a.Namespace, a.Pod = r.Pod.Namespace, r.Pod.Name
			if a.Pod == "" {
				a.Pod = r.Pod.GenerateName
			}
		}
		if r.WebhookError != "" {
			a.Violations = append(a.Violations, r.WebhookError)
		}
		a.Violations = append(a.Violations, r.Violations...)
		// The reasons: when no webhook was called, why each was not; otherwise the webhook
		// that was, Istio's rule that decided, and the verdict.
		called := slices.ContainsFunc(r.Trace, func(s admission.Step) bool { return s.ID == "webhook-called" })
		for _, s := range r.Trace {
			switch {
			case s.ID == "namespace" || s.ID == "admitted" || s.ID == "rejected-pod-security" || s.ID == "webhook-refused":
			case called && strings.HasPrefix(s.ID, "webhook-") && s.ID != "webhook-called":
			default:
				a.InjectReasons = append(a.InjectReasons, w.TraceText(s))
			}
		}
		out = append(out, a)
	}
	return out
}
