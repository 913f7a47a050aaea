package handlers

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/web"
)

// Bounds on what a page says about itself: a title a tab and a chat preview can show, and an
// Open Graph description about as long as chats display. Both come from the user's state, so they
// are capped here (templ escapes them).
const (
	maxTitle       = 100
	maxDescription = 300
	maxStepValue   = 24
)

const titleSuffix = " — sidecarlab"

// playgroundHead names a view so that links pasted in a chat can be told apart: the workload,
// the annotation steps, the tab and step shown, presenter mode. For example
// "Deployment/checkout · proxyCPU=200m, hold — sidecarlab".
func playgroundHead(v view, tl *engine.Timeline) web.Head {
	workload := workloadName(tl)
	parts := []string{cmp.Or(workload, "Istio sidecar injection playground")}
	var short []string
	for _, s := range v.state.Steps {
		short = append(short, shortStep(s))
	}
	if len(short) > 0 {
		parts = append(parts, strings.Join(short, ", "))
	}
	if v.tab != "" && v.tab != web.DefaultTab {
		for _, t := range web.Tabs() {
			if t.ID == v.tab {
				parts = append(parts, t.Title(context.Background())) // English until the head is worded
			}
		}
	}
	switch {
	case v.present:
		parts = append(parts, "slides, step "+strconv.Itoa(v.step))
	case v.step >= 0 && v.step < len(v.state.Steps):
		parts = append(parts, "step "+strconv.Itoa(v.step))
	}
	h := web.Head{Title: bound(strings.Join(parts, " · "), maxTitle) + titleSuffix}

	istio := engine.Version().Istio
	var d strings.Builder
	if workload == "" {
		fmt.Fprintf(&d, "What Istio %s's sidecar injection does to a workload, field by field.", istio)
	} else {
		fmt.Fprintf(&d, "What Istio %s's sidecar injection does to %s", istio, workload)
		if ns := workloadNamespace(tl); ns != "" {
			fmt.Fprintf(&d, " (namespace %s)", ns)
		}
		d.WriteString(", field by field.")
	}
	if len(v.state.Steps) > 0 {
		d.WriteString(" Annotation steps:")
		for i, s := range v.state.Steps {
			fmt.Fprintf(&d, " %d. %s;", i+1, s.String())
		}
	}
	desc := d.String()
	if len(v.state.Steps) > 0 {
		desc = strings.TrimSuffix(desc, ";") + "."
	}
	h.Description = bound(desc, maxDescription)
	return h
}

// compareHead names a comparison by its two sides.
func compareHead(c *web.ComparePage) web.Head {
	t := "Compare " + c.A.Label + " vs " + c.B.Label
	return web.Head{
		Title:       bound(t, maxTitle) + titleSuffix,
		Description: bound("Istio's sidecar injection two ways, "+c.A.Label+" and "+c.B.Label+": both lifecycles and what changes between the outputs.", maxDescription),
	}
}

// workloadName is the first injectable document as kind/name, "+N more" for the others
// ("" when nothing was read).
func workloadName(tl *engine.Timeline) string {
	if tl == nil || len(tl.Steps) == 0 {
		return ""
	}
	var names []string
	for _, d := range tl.Steps[0].Documents {
		if d.Injectable && d.Kind != "" {
			names = append(names, d.Kind+"/"+cmp.Or(d.Name, "(unnamed)"))
		}
	}
	switch len(names) {
	case 0:
		return ""
	case 1:
		return bound(names[0], 60)
	default:
		return bound(names[0], 50) + " +" + strconv.Itoa(len(names)-1) + " more"
	}
}

func workloadNamespace(tl *engine.Timeline) string {
	for _, d := range tl.Steps[0].Documents {
		if d.Injectable && d.Kind != "" {
			return bound(d.Namespace, 40)
		}
	}
	return ""
}

// shortStep is a step as a title shows it: the annotation's name without its domain, its value
// cut short; "hold" for proxy.istio.io/config setting holdApplicationUntilProxyStarts; "−name" for
// a removal.
func shortStep(s engine.Step) string {
	name := s.Key
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	if s.Remove {
		return "−" + name
	}
	value := strings.Join(strings.Fields(s.Value), " ")
	if s.Key == "proxy.istio.io/config" && strings.Contains(value, "holdApplicationUntilProxyStarts: true") {
		return "hold"
	}
	return name + "=" + bound(value, maxStepValue)
}

// bound cuts s to at most n runes, ending in "…" when cut, with its whitespace collapsed.
func bound(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}
