// Package wording words what the engine reports. The engine is language-free: a finding, a fix,
// a lifecycle event and a verdict carry ids and parameters, and this package, at the edge (the web
// pages, the JSON API, the CLI), turns them into sentences a person reads. Every sentence here
// is sidecarlab's own, in the catalogs of package i18n (locales/wording.LANG.toml), in the
// language of the Words' Localizer (English: SARIF and logs).
package wording

import (
	"context"
	"strconv"
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

// loc is the Localizer of w; English for the zero Words, so that a Words nobody set still speaks.
func (w Words) loc() *i18n.Localizer {
	if w.l == nil {
		return i18n.For(i18n.Default)
	}
	return w.l
}

// English words in English: the JSON the CLI writes, which never changes with the language.
var English = In(i18n.For(i18n.Default))

// checkWords are a check's sentences, in the catalogs as wording.check.<id>.summary (a one-line
// description, for lists of checks), .message (what a finding says) and .fix (what its fix
// says). params turns a finding's parameters into the message's data and chooses the message
// (a variant for an optional part); nil is the parameters as they are.
type checkWords struct {
	fix    bool
	params func(p map[string]string) (variant string, data map[string]string)
}

// with is p with extra data (quoted values and the like), p left as it is.
func with(p map[string]string, kv ...string) map[string]string {
	out := make(map[string]string, len(p)+len(kv)/2)
	for k, v := range p {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// paramNames are every parameter the wording messages use.
var paramNames = []string{
	"key", "kind", "readFrom", "suggestion", "suggestionQ", "description", "descriptionQ", "value", "valueQ",
	"read", "used", "enum", "field", "fieldQ", "version", "set", "missing", "id", "idQ",
	"path", "position", "count", "hook",
	"name", "labels", "webhook", "requirement", "configuration", "message", "namespace", "selector", "policy",
	"workloads", "attributes", "action", "target",
}

// noValue is what a message's template prints for a parameter its data lacks.
const noValue = "<no value>"

// tmap words the message id with the parameters p. A parameter p lacks is worded as nothing, as
// the words always had it, not as the template's "<no value>": only then is p completed, so
// that the common case costs one look.
func (w Words) tmap(id string, p map[string]string) string {
	s := w.loc().TMap(id, p)
	if strings.Contains(s, noValue) {
		s = w.loc().TMap(id, complete(p))
	}
	return s
}

// complete is p with every parameter of paramNames, the missing ones empty.
func complete(p map[string]string) map[string]string {
	out := with(p)
	for _, n := range paramNames {
		if _, ok := out[n]; !ok {
			out[n] = ""
		}
	}
	return out
}

// quoted is p with each named value also quoted, as NAMEQ: Go's %q, which the words use to
// show a value exactly as written.
func quoted(names ...string) func(p map[string]string) (string, map[string]string) {
	return func(p map[string]string) (string, map[string]string) {
		out := with(p)
		for _, n := range names {
			out[n+"Q"] = strconv.Quote(p[n])
		}
		return "message", out
	}
}

var checks = map[string]checkWords{
	"workload-metadata-annotation":    {fix: true},
	"cronjob-pod-template-annotation": {fix: true},
	"unknown-istio-annotation":        {fix: true},
	"deprecated-annotation": {fix: true, params: func(p map[string]string) (string, map[string]string) {
		if p["key"] == "sidecar.istio.io/inject" {
			// The lab teaches this annotation: say what deprecated means for it.
			return "message_inject", with(p, "descriptionQ", strconv.Quote(p["description"]))
		}
		return "message", p
	}},
	"inject-value": {fix: true, params: func(p map[string]string) (string, map[string]string) {
		// kube-inject falls back to the policy "enabled"; a skipped pod was skipped for another
		// reason (host network, a system namespace), which its status gives.
		v := "message"
		if p["result"] == string(engine.StatusSkipped) {
			v = "message_skipped"
		}
		return v, with(p, "valueQ", strconv.Quote(p["value"]))
	}},
	"lenient-native-sidecar": {fix: true, params: quoted("value")},
	"lenient-bool-read":      {params: quoted("value")},
	"lenient-bool-ignored":   {fix: true, params: quoted("value")},
	"lenient-port-zero":      {fix: true},
	"lenient-unchecked": {params: func(p map[string]string) (string, map[string]string) {
		v := "message"
		if p["enum"] != "" {
			v = "message_enum"
		}
		return v, with(p, "valueQ", strconv.Quote(p["value"]))
	}},
	"unknown-proxy-config-field":         {fix: true, params: quoted("field", "suggestion")},
	"hold-swallowed-by-global-lifecycle": {fix: true},
	"hold-ignored-native-sidecar":        {},
	"job-classic-sidecar":                {fix: true},
	"native-sidecar-unsupported":         {fix: true},
	"webhook-auto-stays-classic":         {},
	"resource-annotation-drops-defaults": {},
	"ignore-unknown-check":               {params: quoted("id")},
	"ambient-needs-waypoint":             {params: waypointVariant},
	"ambient-policy-l4":                  {},
}

// waypointVariant chooses what ambient-needs-waypoint says by what makes the policy L7: an
// AuthorizationPolicy's HTTP attributes (ALLOW and DENY differ), its action, its targetRefs, its
// dry run, or a kind that is L7 through and through.
func waypointVariant(p map[string]string) (string, map[string]string) {
	switch {
	case p["attributes"] != "":
		return "message_http_" + strings.ToLower(p["action"]), p
	case p["target"] != "":
		return "message_target", p
	case p["key"] != "":
		return "message_dry_run", p
	case p["action"] != "":
		return "message_action", p
	}
	return "message_" + strings.ToLower(p["kind"]), p
}

// suggests are the checks whose message ends in "Did you mean …?" when the finding has a
// suggestion (wording.check.<id>.suggest).
var suggests = map[string]bool{"unknown-istio-annotation": true, "unknown-proxy-config-field": true}

// Summary is a check's one-line description; empty for a check sidecarlab has no words for.
func (w Words) Summary(check string) string {
	if _, ok := checks[check]; !ok {
		return ""
	}
	return w.loc().T("wording.check." + check + ".summary")
}

// Message is what a finding says.
func (w Words) Message(f engine.Finding) string {
	c, ok := checks[f.Check]
	if !ok {
		return f.Check
	}
	variant, data := "message", f.Params
	if c.params != nil {
		variant, data = c.params(f.Params)
	}
	s := w.tmap("wording.check."+f.Check+"."+variant, data)
	if suggests[f.Check] && f.Params["suggestion"] != "" {
		s += w.tmap("wording.check."+f.Check+".suggest", data)
	}
	return s
}

// pauses are where a sentence first pauses, in the languages the catalogs have: the gist of a
// finding ends at the first of them.
var pauses = []string{"; ", ". ", ": ", " (", " — ", "。", "；", "：", "（"}

// Gist is a finding in a few words, for a banner: its sentence up to the first pause.
func (w Words) Gist(f engine.Finding) string {
	m := w.Message(f)
	cut := len(m)
	for _, sep := range pauses {
		if i := strings.Index(m, sep); i > 0 && i < cut {
			cut = i
		}
	}
	return strings.TrimSuffix(m[:cut], ".")
}

// FixText is what a finding's fix says; empty when the finding has no fix.
func (w Words) FixText(f engine.Finding) string {
	c, ok := checks[f.Check]
	if f.Fix == nil || !ok || !c.fix {
		return ""
	}
	return w.tmap("wording.check."+f.Check+".fix", f.Params)
}

// Ignored says how many findings the manifest opted out of with sidecarlab.dev/ignore; empty
// for none.
func (w Words) Ignored(n int) string {
	if n == 0 {
		return ""
	}
	return w.loc().N("wording.ignored", n)
}

// Line is a finding on one line, as the CLI prints it.
func (w Words) Line(f engine.Finding) string {
	where := w.where(f.Doc, 0, "")
	if f.Path != "" {
		where += " " + f.Path
	}
	s := string(f.Severity) + " [" + f.Check + "] " + w.at(where, w.Message(f))
	if t := w.FixText(f); t != "" {
		s += w.loc().T("wording.line.fix", "text", t)
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

// questions are the verdicts' questions (wording.verdict.<id>.question), by verdict id.
var questions = map[string]string{
	"app-before-proxy":   "wording.verdict.app-before-proxy.question",
	"job-completes":      "wording.verdict.job-completes.question",
	"proxy-outlives-app": "wording.verdict.proxy-outlives-app.question",
}

// reasons are the verdicts' reasons (wording.reason.<verdict>.<reason>), by verdict id and
// reason: the message a verdict's parameters choose, "" for the reason's own.
var reasons = map[string]map[string]func(p map[string]string) string{
	"app-before-proxy": {
		"no-proxy": nil,
		"native-startup-probe": func(p map[string]string) string {
			if p["path"] == "" {
				return "native-startup-probe-no-path"
			}
			return ""
		},
		"native-no-startup-probe": nil,
		"first-with-wait":         nil,
		"first-without-wait":      nil,
		"not-first":               nil,
	},
	"job-completes": {
		"not-a-job":                   nil,
		"completes":                   nil,
		"classic-proxy-keeps-running": nil,
	},
	"proxy-outlives-app": {
		"no-proxy": nil,
		"native":   nil,
		"classic":  nil,
	},
}

// Question is the question a verdict answers; its id for a verdict sidecarlab has no words for.
func (w Words) Question(v engine.Verdict) string {
	if q, ok := questions[v.ID]; ok {
		return w.loc().T(q)
	}
	return v.ID
}

// Why is the reason for a verdict's answer; its id and reason for one sidecarlab has no words
// for.
func (w Words) Why(v engine.Verdict) string {
	choose, ok := reasons[v.ID][v.Reason]
	if !ok {
		return strings.TrimSpace(v.ID + " " + v.Reason)
	}
	r := v.Reason
	if choose != nil {
		if c := choose(v.Params); c != "" {
			r = c
		}
	}
	return w.tmap("wording.reason."+v.ID+"."+r, v.Params)
}

// Verdict is a verdict with its words, as the JSON API gives it.
type Verdict struct {
	engine.Verdict
	Question string `json:"question"`
	Why      string `json:"why"`
}

// events are the lifecycle events sidecarlab words (wording.event.<id>.what, a sentence, and
// .short, a few words for a diagram): the variant of what an event's parameters choose, "" for
// what itself.
var events = map[string]func(p map[string]string) string{
	"init-runs":      nil,
	"sidecar-starts": nil,
	"sidecar-starts-probe": func(p map[string]string) string {
		if p["path"] != "" {
			return "what_path"
		}
		return ""
	},
	"starts":            nil,
	"starts-post-start": nil,
	"sigterm":           nil,
	"pre-stop":          nil,
	"apps-exited":       nil,
	"sidecar-sigterm":   nil,
	"sidecar-pre-stop":  nil,
}

// What is a lifecycle event in a sentence.
func (w Words) What(e engine.LifecycleEvent) string {
	choose, ok := events[e.Event]
	if !ok {
		return e.Event
	}
	v := "what"
	if choose != nil {
		if c := choose(e.Params); c != "" {
			v = c
		}
	}
	return w.tmap("wording.event."+e.Event+"."+v, e.Params)
}

// Short is a lifecycle event in a few words, for a diagram.
func (w Words) Short(e engine.LifecycleEvent) string {
	if _, ok := events[e.Event]; !ok {
		return e.Event
	}
	return w.tmap("wording.event."+e.Event+".short", e.Params)
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
