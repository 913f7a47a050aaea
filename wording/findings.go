package wording

import (
	"strconv"
	"strings"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/sidecarlab/sidecarlab/engine"
)

// checkWords are a check's sentences, in the catalogs as wording.check.<id>.summary (a one-line
// description, for lists of checks), .message (what a finding says) and .fix (what its fix
// says). params turns a finding's parameters into the message's data and chooses the message
// (a variant for an optional part); nil is the parameters as they are.
type checkWords struct {
	fix    bool
	params func(p map[string]string) (variant string, data map[string]string)
}

var checks = map[engine.CheckID]checkWords{
	engine.CheckWorkloadMetadataAnnotation:   {fix: true},
	engine.CheckCronjobPodTemplateAnnotation: {fix: true},
	engine.CheckUnknownIstioAnnotation:       {fix: true},
	engine.CheckDeprecatedAnnotation: {fix: true, params: func(p map[string]string) (string, map[string]string) {
		if p["key"] == "sidecar.istio.io/inject" {
			// The lab teaches this annotation: say what deprecated means for it.
			return "message_inject", with(p, "descriptionQ", strconv.Quote(p["description"]))
		}
		return "message", p
	}},
	engine.CheckInjectValue: {fix: true, params: func(p map[string]string) (string, map[string]string) {
		// kube-inject falls back to the policy "enabled"; a skipped pod was skipped for another
		// reason (host network, a system namespace), which its status gives.
		v := "message"
		if p["result"] == string(engine.StatusSkipped) {
			v = "message_skipped"
		}
		return v, with(p, "valueQ", strconv.Quote(p["value"]))
	}},
	engine.CheckLenientNativeSidecar: {fix: true, params: quoted("value")},
	engine.CheckLenientBoolRead:      {params: quoted("value")},
	engine.CheckLenientBoolIgnored:   {fix: true, params: quoted("value")},
	engine.CheckLenientPortZero:      {fix: true},
	engine.CheckLenientUnchecked: {params: func(p map[string]string) (string, map[string]string) {
		v := "message"
		if p["enum"] != "" {
			v = "message_enum"
		}
		return v, with(p, "valueQ", strconv.Quote(p["value"]))
	}},
	engine.CheckUnknownProxyConfigField:         {fix: true, params: quoted("field", "suggestion")},
	engine.CheckHoldSwallowedByGlobalLifecycle:  {fix: true},
	engine.CheckHoldIgnoredNativeSidecar:        {},
	engine.CheckJobClassicSidecar:               {fix: true},
	engine.CheckNativeSidecarUnsupported:        {fix: true},
	engine.CheckWebhookAutoStaysClassic:         {},
	engine.CheckResourceAnnotationDropsDefaults: {},
	engine.CheckTemplateInjectedNothing: {params: func(p map[string]string) (string, map[string]string) {
		switch p["cause"] {
		case "template-key":
			return "message_template_key", p
		case "delimiters":
			return "message_delimiters", p
		}
		return "message", p
	}},
	engine.CheckIgnoreUnknownCheck: {params: quoted("id")},
	engine.CheckDuplicateKey: {params: func(p map[string]string) (string, map[string]string) {
		if _, scalar := p["value"]; !scalar {
			return "message_nested", p // the last is a map or a list: it is kept whole
		}
		return "message", p
	}},
	engine.CheckAmbientNeedsWaypoint: {params: waypointVariant},
	engine.CheckAmbientPolicyL4:      {},
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
var suggests = map[engine.CheckID]bool{engine.CheckUnknownIstioAnnotation: true, engine.CheckUnknownProxyConfigField: true}

// Summary is a check's one-line description; empty for a check sidecarlab has no words for.
func (w Words) Summary(check engine.CheckID) string {
	if _, ok := checks[check]; !ok {
		return ""
	}
	return w.loc().T("wording.check." + string(check) + ".summary")
}

// Message is what a finding says.
func (w Words) Message(f engine.Finding) string {
	c, ok := checks[f.Check]
	if !ok {
		return string(f.Check)
	}
	variant, data := "message", f.Params
	if c.params != nil {
		variant, data = c.params(f.Params)
	}
	s := w.tmap("wording.check."+string(f.Check)+"."+variant, data)
	if suggests[f.Check] && f.Params["suggestion"] != "" {
		s += w.tmap("wording.check."+string(f.Check)+".suggest", data)
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
	return w.tmap("wording.check."+string(f.Check)+".fix", f.Params)
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
	where := w.where(f.Doc, 0, 0, "")
	if f.Path != "" {
		where += " " + f.Path
	}
	s := string(f.Severity) + " [" + string(f.Check) + "] " + w.at(where, w.Message(f))
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
	Text  string       `json:"text"`
	Steps []input.Step `json:"steps,omitempty"`
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
