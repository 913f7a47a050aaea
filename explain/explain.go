// Package explain words what the engine reports. The engine is language-free: a finding, a fix,
// a lifecycle event and a verdict carry ids and parameters, and this package, at the edge (the web
// pages, the JSON API, the CLI), turns them into sentences a person reads. Every sentence here
// is sidecarlab's own, in English; other languages come in beside it, with no engine change.
package explain

import (
	"context"
	"fmt"
	"strings"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/i18n"
)

// Words words what the engine reports in one language.
type Words struct {
	l *i18n.Localizer
}

// In words in l's language.
func In(l *i18n.Localizer) Words { return Words{l: l} }

// For words in the request's language (i18n.FromContext).
func For(ctx context.Context) Words { return In(i18n.FromContext(ctx)) }

// English words in English: the JSON the CLI writes, which never changes with the language.
var English = In(i18n.For(i18n.Default))

// checkWords are a check's sentences: a one-line summary (for lists of checks), what a finding
// says, and what its fix says. Message and FixText read the finding's parameters.
type checkWords struct {
	summary string
	message func(p map[string]string) string
	fix     func(p map[string]string) string
}

var checks = map[string]checkWords{
	"workload-metadata-annotation": {
		summary: "Istio annotation on the workload's own metadata, which Istio never reads",
		message: func(p map[string]string) string {
			return fmt.Sprintf("%s is on the %s's own metadata; Istio reads annotations only from %s, so it has no effect.", p["key"], p["kind"], p["readFrom"])
		},
		fix: func(map[string]string) string { return "Move it to the pod template." },
	},
	"cronjob-pod-template-annotation": {
		summary: "CronJob annotation on the pod template; kube-inject reads spec.jobTemplate.metadata",
		message: func(p map[string]string) string {
			return fmt.Sprintf("For a CronJob, istioctl kube-inject reads annotations from spec.jobTemplate.metadata, so %s on the pod template has no effect here (the in-cluster webhook, which sees the Pod, would read it).", p["key"])
		},
		fix: func(map[string]string) string {
			return "Set it on spec.jobTemplate.metadata, where kube-inject reads it."
		},
	},
	"unknown-istio-annotation": {
		summary: "an annotation under an Istio prefix that Istio does not know",
		message: func(p map[string]string) string {
			s := fmt.Sprintf("%s is not an annotation Istio knows; Istio ignores it without a word.", p["key"])
			if p["suggestion"] != "" {
				s += fmt.Sprintf(" Did you mean %s?", p["suggestion"])
			}
			return s
		},
		fix: func(p map[string]string) string { return "Use " + p["suggestion"] + "." },
	},
	"deprecated-annotation": {
		summary: "an annotation Istio's catalog marks deprecated",
		message: func(p map[string]string) string {
			if p["key"] == "sidecar.istio.io/inject" {
				// The lab teaches this annotation: say what deprecated means for it.
				return fmt.Sprintf("The annotation %s is deprecated in Istio's catalog (%q): the label of the same name on the pod template is preferred. The annotation still works — Istio reads it when the pod has no such label; when both are set, the label wins.", p["key"], p["description"])
			}
			return fmt.Sprintf("%s is deprecated in Istio's catalog: %s", p["key"], p["description"])
		},
		fix: func(map[string]string) string {
			return "Use the sidecar.istio.io/inject label on the pod template instead."
		},
	},
	"inject-value": {
		summary: `sidecar.istio.io/inject with a value other than "true" or "false"`,
		message: func(p map[string]string) string {
			// kube-inject falls back to the policy "enabled"; a skipped pod was skipped for another
			// reason (host network, a system namespace), which its status gives.
			outcome := "which injects: the pod IS injected"
			if p["result"] == string(engine.StatusSkipped) {
				outcome = "which injects, but this pod is skipped for another reason (see the document's status)"
			}
			return fmt.Sprintf(`sidecar.istio.io/inject is %q, which Istio does not read as true or false: it takes exactly "true" and "false", so it ignored %q and fell back to the default injection policy, %s.`, p["value"], p["value"], outcome)
		},
		fix: func(map[string]string) string { return `Write "true" or "false", in lower case.` },
	},
	"lenient-native-sidecar": {
		summary: `sidecar.istio.io/nativeSidecar with a value other than "true" or "false": native sidecars on`,
		message: func(p map[string]string) string {
			return fmt.Sprintf(`%s is %q; Istio's injection template turns native sidecars on for every value except exactly "false", so %q made istio-proxy a native sidecar.`, p["key"], p["value"], p["value"])
		},
		fix: func(map[string]string) string { return `Write "true" or "false", in lower case.` },
	},
	"lenient-bool-read": {
		summary: "a boolean annotation in another spelling that Istio reads with Go's strconv.ParseBool",
		message: func(p map[string]string) string {
			return fmt.Sprintf(`%s is %q; Istio reads this annotation with Go's strconv.ParseBool, which takes %q as %s, so it is honoured. The same spelling is not read that way everywhere: on sidecar.istio.io/inject it is ignored, and on sidecar.istio.io/nativeSidecar anything but "false" means true.`, p["key"], p["value"], p["value"], p["read"])
		},
	},
	"lenient-bool-ignored": {
		summary: "a boolean annotation Istio cannot read, so the installation's setting is used",
		message: func(p map[string]string) string {
			return fmt.Sprintf(`%s is %q, which Go's strconv.ParseBool (Istio's reader) does not take: Istio ignored it and used the installation's setting, values.sidecarInjectorWebhook.rewriteAppHTTPProbe = %s.`, p["key"], p["value"], p["used"])
		},
		fix: func(map[string]string) string { return `Write "true" or "false".` },
	},
	"lenient-port-zero": {
		summary: "port 0 in a port list: Istio passes it on, and it matches no connection",
		message: func(p map[string]string) string {
			return fmt.Sprintf("%s names port 0; Istio accepts it and passes the list to istio-init as written, but no connection uses port 0, so the rule for it matches nothing.", p["key"])
		},
		fix: func(map[string]string) string { return "Remove port 0, or name the port you meant." },
	},
	"lenient-unchecked": {
		summary: "a value that is not of the annotation's kind, which Istio does not check",
		message: func(p map[string]string) string {
			want := p["kind"]
			if p["enum"] != "" {
				want += " (one of " + p["enum"] + ")"
			}
			return fmt.Sprintf("%s is %q, which does not fit its kind, %s; Istio has no check for this annotation, so it took the value as written (see the output) and a mistake shows only when the pod runs.", p["key"], p["value"], want)
		},
	},
	"unknown-proxy-config-field": {
		summary: "a field of proxy.istio.io/config that ProxyConfig does not have",
		message: func(p map[string]string) string {
			s := fmt.Sprintf("ProxyConfig has no field %q; Istio ignores it without a word.", p["field"])
			if p["suggestion"] != "" {
				s += fmt.Sprintf(" Did you mean %q?", p["suggestion"])
			}
			return s
		},
		fix: func(p map[string]string) string { return "Use " + p["suggestion"] + "." },
	},
	"hold-swallowed-by-global-lifecycle": {
		summary: "holdApplicationUntilProxyStarts without its postStart, because a global proxy lifecycle replaced it",
		message: func(map[string]string) string {
			return `holdApplicationUntilProxyStarts is on, but values.global.proxy.lifecycle is set, and Istio's template then writes that lifecycle instead of the postStart "pilot-agent wait": the app can start before the proxy is ready.`
		},
		fix: func(map[string]string) string {
			return "Add the wait to the global lifecycle in the IstioOperator: values.global.proxy.lifecycle.postStart.exec.command: [pilot-agent, wait], next to your preStop."
		},
	},
	"hold-ignored-native-sidecar": {
		summary: "holdApplicationUntilProxyStarts with a native sidecar, which starts first anyway",
		message: func(map[string]string) string {
			return "holdApplicationUntilProxyStarts has no effect on a native sidecar: the kubelet starts istio-proxy, an init container with restartPolicy Always, before the app containers anyway (and Istio adds no postStart)."
		},
	},
	"job-classic-sidecar": {
		summary: "a Job or CronJob with a classic sidecar: the pod never completes",
		message: func(map[string]string) string {
			return "This Job's pod gets istio-proxy as a regular container, which keeps running after the job's work ends, so the pod never completes. The old workaround — calling the agent's /quitquitquit at the end of the job's script — never runs when the job fails."
		},
		fix: func(map[string]string) string { return "Inject a native sidecar (Kubernetes ≥ 1.29)." },
	},
	"native-sidecar-unsupported": {
		summary: "a native sidecar on Kubernetes older than 1.29",
		message: func(p map[string]string) string {
			return fmt.Sprintf("Native sidecars (init containers with restartPolicy Always) need Kubernetes 1.29 or later; on %s the API server rejects or ignores restartPolicy and the pod does not start as intended.", p["version"])
		},
		fix: func(map[string]string) string { return "Opt out of native sidecars on this cluster." },
	},
	"webhook-auto-stays-classic": {
		summary: "the webhook's auto mode keeps classic sidecars on nodes older than 1.33",
		message: func(p map[string]string) string {
			return fmt.Sprintf("Istio's webhook in its default auto mode uses native sidecars only when every node runs Kubernetes 1.33 or later; with %s nodes it stays classic.", p["version"])
		},
	},
	"resource-annotation-drops-defaults": {
		summary: "one resource annotation drops the proxy's other default requests and limits",
		message: func(p map[string]string) string {
			return fmt.Sprintf("With %s set, Istio's template emits only the annotated resources: istio-proxy has no %s now (the defaults are dropped, not kept).", p["set"], p["missing"])
		},
	},
	"ignore-unknown-check": {
		summary: "sidecarlab.dev/ignore names something that is not one of sidecarlab's checks",
		message: func(p map[string]string) string {
			return fmt.Sprintf("sidecarlab.dev/ignore names %q, which is not one of sidecarlab's checks, so it ignores nothing.", p["id"])
		},
	},
}

// Summary is a check's one-line description.
func (w Words) Summary(check string) string { return checks[check].summary }

// Message is what a finding says.
func (w Words) Message(f engine.Finding) string {
	c, ok := checks[f.Check]
	if !ok {
		return f.Check
	}
	return c.message(f.Params)
}

// Gist is a finding in a few words, for a banner: its sentence up to the first pause.
func (w Words) Gist(f engine.Finding) string {
	m := w.Message(f)
	cut := len(m)
	for _, sep := range []string{"; ", ". ", ": ", " (", " — "} {
		if i := strings.Index(m, sep); i > 0 && i < cut {
			cut = i
		}
	}
	return strings.TrimSuffix(m[:cut], ".")
}

// FixText is what a finding's fix says; empty when the finding has no fix.
func (w Words) FixText(f engine.Finding) string {
	c, ok := checks[f.Check]
	if f.Fix == nil || !ok || c.fix == nil {
		return ""
	}
	return c.fix(f.Params)
}

// Ignored says how many findings the manifest opted out of with sidecarlab.dev/ignore; empty
// for none.
func (w Words) Ignored(n int) string {
	switch n {
	case 0:
		return ""
	case 1:
		return "1 finding ignored by the manifest (sidecarlab.dev/ignore)."
	}
	return fmt.Sprintf("%d findings ignored by the manifest (sidecarlab.dev/ignore).", n)
}

// Line is a finding on one line, as the CLI prints it.
func (w Words) Line(f engine.Finding) string {
	s := fmt.Sprintf("%s [%s] document %d", f.Severity, f.Check, f.Doc)
	if f.Path != "" {
		s += " " + f.Path
	}
	s += ": " + w.Message(f)
	if t := w.FixText(f); t != "" {
		s += " Fix: " + t
	}
	return s
}

// Finding is a finding with its words, as the JSON API and the CLI's JSON give it.
type Finding struct {
	engine.Finding
	Message string `json:"message"`
	// Fix replaces the engine's fix with one that has its text.
	Fix *Fix `json:"fix,omitempty"`
}

// Fix is a fix with its words.
type Fix struct {
	Text  string        `json:"text"`
	Steps []engine.Step `json:"steps,omitempty"`
}

// Findings words findings for JSON.
func (w Words) Findings(fs []engine.Finding) []Finding {
	out := make([]Finding, 0, len(fs))
	for _, f := range fs {
		wf := Finding{Finding: f, Message: w.Message(f)}
		if f.Fix != nil {
			wf.Fix = &Fix{Text: w.FixText(f), Steps: f.Fix.Steps}
		}
		out = append(out, wf)
	}
	return out
}

// questions are the verdicts' questions, by verdict id.
var questions = map[string]string{
	"app-before-proxy":   "Can the app send traffic before the proxy is ready?",
	"job-completes":      "Does a Job's pod complete when its work ends?",
	"proxy-outlives-app": "Does the proxy keep running until the app has stopped?",
}

// reasons are the verdicts' reasons, by verdict id and reason.
var reasons = map[string]map[string]func(p map[string]string) string{
	"app-before-proxy": {
		"no-proxy": func(map[string]string) string { return "No proxy was injected." },
		"native-startup-probe": func(p map[string]string) string {
			on := p["path"]
			if on == "" {
				on = "its endpoint"
			}
			return "istio-proxy is a native sidecar with a startupProbe on " + on + ": the kubelet starts the app containers only after it passes."
		},
		"native-no-startup-probe": func(map[string]string) string {
			return "istio-proxy is a native sidecar without a startupProbe: the app starts as soon as the proxy process has started, ready or not."
		},
		"first-with-wait": func(map[string]string) string {
			return "istio-proxy is the first container and its postStart hook (pilot-agent wait) returns only when the proxy is ready; the kubelet starts the app after it."
		},
		"first-without-wait": func(map[string]string) string {
			return "istio-proxy starts first, but nothing holds the app back until the proxy is ready (no postStart wait)."
		},
		"not-first": func(p map[string]string) string {
			return fmt.Sprintf("istio-proxy is container %s of %s and the app starts without waiting for it.", p["position"], p["count"])
		},
	},
	"job-completes": {
		"not-a-job": func(map[string]string) string { return "Not a Job." },
		"completes": func(map[string]string) string {
			return "The pod completes when every regular container has exited; a native sidecar does not count."
		},
		"classic-proxy-keeps-running": func(map[string]string) string {
			return "istio-proxy is a regular container that keeps running after the job's container exits, so the pod never completes."
		},
	},
	"proxy-outlives-app": {
		"no-proxy": func(map[string]string) string { return "No proxy was injected." },
		"native": func(map[string]string) string {
			return "A native sidecar is stopped only after every regular container has exited."
		},
		"classic": func(map[string]string) string {
			return "A classic sidecar gets SIGTERM together with the app; the proxy drains for its terminationDrainDuration and exits whether or not the app has finished."
		},
	},
}

// Question is the question a verdict answers.
func (w Words) Question(v engine.Verdict) string {
	if q, ok := questions[v.ID]; ok {
		return q
	}
	return v.ID
}

// Why is the reason for a verdict's answer.
func (w Words) Why(v engine.Verdict) string {
	if r, ok := reasons[v.ID][v.Reason]; ok {
		return r(v.Params)
	}
	return strings.TrimSpace(v.ID + " " + v.Reason)
}

// Verdict is a verdict with its words, as the JSON API gives it.
type Verdict struct {
	engine.Verdict
	Question string `json:"question"`
	Why      string `json:"why"`
}

// eventWords are a lifecycle event's words: what happens, in a sentence, and in a few words for
// a diagram.
type eventWords struct {
	what, short func(p map[string]string) string
}

func words(s string) func(map[string]string) string {
	return func(map[string]string) string { return s }
}

var events = map[string]eventWords{
	"init-runs": {words("runs to completion before anything after it starts"), words("runs to completion")},
	"sidecar-starts": {
		words("starts and keeps running (restartPolicy Always); the next container starts as soon as it has started"),
		words("starts, keeps running"),
	},
	"sidecar-starts-probe": {
		func(p map[string]string) string {
			s := "starts and keeps running (restartPolicy Always); the next container waits for its startupProbe"
			if p["path"] != "" {
				s += " (" + p["path"] + ")"
			}
			return s
		},
		words("starts, waits for probe"),
	},
	"starts": {words("starts; the next container starts right after"), words("starts")},
	"starts-post-start": {
		func(p map[string]string) string {
			return "starts; its postStart hook (" + p["hook"] + ") must return before the next container starts"
		},
		func(p map[string]string) string { return "starts · postStart: " + p["hook"] },
	},
	"sigterm": {words("gets SIGTERM"), words("SIGTERM")},
	"pre-stop": {
		func(p map[string]string) string { return "preStop hook (" + p["hook"] + ") runs, then SIGTERM" },
		words("preStop, then SIGTERM"),
	},
	"apps-exited":     {words("the regular containers exit; only then are sidecars stopped"), words("all regular containers exited")},
	"sidecar-sigterm": {words("gets SIGTERM (in reverse order of start)"), words("SIGTERM")},
	"sidecar-pre-stop": {
		func(p map[string]string) string {
			return "preStop hook (" + p["hook"] + ") runs, then SIGTERM (in reverse order of start)"
		},
		words("preStop drain, then SIGTERM"),
	},
}

// What is a lifecycle event in a sentence.
func (w Words) What(e engine.LifecycleEvent) string {
	if w, ok := events[e.Event]; ok {
		return w.what(e.Params)
	}
	return e.Event
}

// Short is a lifecycle event in a few words, for a diagram.
func (w Words) Short(e engine.LifecycleEvent) string {
	if w, ok := events[e.Event]; ok {
		return w.short(e.Params)
	}
	return e.Event
}

// Event is a lifecycle event with its words, as the JSON API gives it.
type Event struct {
	engine.LifecycleEvent
	What  string `json:"what"`
	Short string `json:"short"`
}

// Lifecycle is a lifecycle with worded events and verdicts, as the JSON API gives it.
type Lifecycle struct {
	engine.Lifecycle
	Start    []Event   `json:"start"`
	Stop     []Event   `json:"stop"`
	Verdicts []Verdict `json:"verdicts"`
}

// Lifecycles words lifecycles for JSON.
func (w Words) Lifecycles(ls []engine.Lifecycle) []Lifecycle {
	out := make([]Lifecycle, 0, len(ls))
	for _, l := range ls {
		wl := Lifecycle{Lifecycle: l}
		for _, e := range l.Start {
			wl.Start = append(wl.Start, Event{LifecycleEvent: e, What: w.What(e), Short: w.Short(e)})
		}
		for _, e := range l.Stop {
			wl.Stop = append(wl.Stop, Event{LifecycleEvent: e, What: w.What(e), Short: w.Short(e)})
		}
		for _, v := range l.Verdicts {
			wl.Verdicts = append(wl.Verdicts, Verdict{Verdict: v, Question: w.Question(v), Why: w.Why(v)})
		}
		out = append(out, wl)
	}
	return out
}
