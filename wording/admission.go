package wording

import (
	"slices"
	"strconv"
	"strings"

	"github.com/sidecarlab/sidecarlab/admission"
	"github.com/sidecarlab/sidecarlab/engine/ambient"
)

// traceWords are the rules of an admission trace (admission.TraceIDs) that sidecarlab words
// (wording.trace.<id>, with the step's params): the message a step's params choose, "" for the
// rule's own.
var traceWords = map[string]func(p map[string]string) string{
	"namespace": func(p map[string]string) string {
		if p["labels"] == "" {
			return "namespace-unlabelled"
		}
		return ""
	},
	"webhook-namespace-mismatch": nil,
	"webhook-object-mismatch":    nil,
	"webhook-rules-mismatch":     nil,
	"webhook-called":             nil,
	"webhook-refused":            nil,
	"policy-host-network":        nil,
	"policy-ignored-namespace":   nil,
	"policy-label":               nil,
	"policy-annotation":          nil,
	"policy-invalid-value": func(p map[string]string) string {
		if p["source"] == "policy-label" {
			return "policy-invalid-value-label"
		}
		return ""
	},
	"policy-never-selector":  nil,
	"policy-always-selector": nil,
	"policy-default": func(p map[string]string) string {
		if p["inject"] == "true" {
			return "policy-default-inject"
		}
		return ""
	},
	"injected": nil,
	"not-injected-no-webhook": func(p map[string]string) string {
		if p["ambient"] == "true" {
			return "not-injected-no-webhook-ambient"
		}
		return ""
	},
	"hint-annotation-not-label": nil,
	"not-injected-policy":       nil,
	"admitted":                  nil,
	"rejected-pod-security":     nil,
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
	choose, ok := traceWords[s.ID]
	if !ok {
		return s.ID
	}
	id := s.ID
	if choose != nil {
		if c := choose(s.Params); c != "" {
			id = c
		}
	}
	data := s.Params
	if v, ok := s.Params["value"]; ok {
		data = with(s.Params, "valueQ", strconv.Quote(v))
	}
	return w.tmap("wording.trace."+id, data)
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
	// Refused: kubectl refuses the document (admission.Result.Refused).
	Refused bool `json:"refused,omitempty"`
	// Ambient is whether the Pod joins ambient once it runs (admission.Result.Ambient), worded.
	Ambient *Ambient `json:"ambient,omitempty"`
}

// Ambient is an ambient enrolment with its sentence and, for a Pod that joins, what happens at
// run time.
type Ambient struct {
	ambient.Enrolment
	Text    string   `json:"text"`
	RunTime []string `json:"runtime,omitempty"`
}

// Ambient words an enrolment of a Pod in namespace.
func (w Words) Ambient(e ambient.Enrolment, namespace string) *Ambient {
	orAny := func(sel string) string {
		if sel == "" {
			return w.loc().T("ambient.enrol.any")
		}
		return sel
	}
	a := &Ambient{Enrolment: e, Text: w.loc().T(e.Rule.MessageID(), "Namespace", namespace, "Number", e.Selector,
		"Pods", orAny(e.PodSelector), "Namespaces", orAny(e.NamespaceSelector), "Error", e.Error)}
	if e.Joins {
		for _, id := range ambient.RunTime() {
			a.RunTime = append(a.RunTime, w.loc().T(id))
		}
	}
	return a
}

// Admissions words the results.
func (w Words) Admissions(rs []admission.Result) []Admission {
	out := make([]Admission, 0, len(rs))
	for _, r := range rs {
		a := Admission{Doc: r.Doc, Kind: r.Kind, Name: r.Name, Injected: r.Injected, Admitted: r.Admitted,
			InjectReasons: []string{}, Violations: []string{}, Warnings: r.Warnings, Webhooks: r.Webhooks, Trace: w.Trace(r.Trace), Error: w.AdmissionError(r), Refused: r.Refused}
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
		if r.Ambient != nil {
			a.Ambient = w.Ambient(*r.Ambient, a.Namespace)
		}
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

// AdmissionError is why a document has no Pod to admit, in w's language: an error of ours or
// Istio's worded (Result.Err), kubectl's own words as they are.
func (w Words) AdmissionError(r admission.Result) string {
	if r.Err != nil {
		return w.InputErrorText(r.Err)
	}
	return r.Error
}
