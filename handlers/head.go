package handlers

import (
	"cmp"
	"strings"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/web"
)

// Bounds on what a page says about itself (web.Head bounds the worded title and description
// the same way): the user's values are capped here too (templ escapes them).
const (
	maxTitle       = 100
	maxDescription = 300
	maxStepValue   = 24
)

const titleSuffix = " — sidecarlab"

// playgroundHead names a view so that links pasted in a chat can be told apart: the workload,
// the annotation steps, the tab and step shown, presenter mode. For example
// "Deployment/checkout · proxyCPU=200m, hold — sidecarlab". The page words it in the reader's
// language (web.HeadView); the values here are the user's, bounded.
func playgroundHead(v view, tl *engine.Timeline) web.Head {
	hv := &web.HeadView{Istio: engine.Version().Istio, Present: v.present, Step: v.step}
	hv.Workload, hv.More = workloadName(tl)
	if hv.Workload != "" {
		hv.Namespace = workloadNamespace(tl)
	}
	for _, s := range v.state.Steps {
		hv.Steps = append(hv.Steps, shortStep(s))
		hv.StepsLong = append(hv.StepsLong, bound(s.String(), maxDescription))
	}
	if v.tab != "" && v.tab != web.DefaultTab {
		for _, t := range web.Tabs() {
			if t.ID == v.tab {
				hv.Tab = t.ID
			}
		}
	}
	return web.Head{View: hv}
}

// compareHead names a comparison by its two sides.
func compareHead(c *web.ComparePage) web.Head {
	return web.Head{View: &web.HeadView{Compare: true, A: c.A.Label, B: c.B.Label}}
}

// workloadName is the first injectable document as kind/name, and how many others there are
// ("" when nothing was read).
func workloadName(tl *engine.Timeline) (string, int) {
	if tl == nil || len(tl.Steps) == 0 {
		return "", 0
	}
	var names []string
	for _, d := range tl.Steps[0].Documents {
		if d.Injectable && d.Kind != "" {
			names = append(names, d.Kind+"/"+cmp.Or(d.Name, "(unnamed)"))
		}
	}
	switch len(names) {
	case 0:
		return "", 0
	case 1:
		return bound(names[0], 60), 0
	default:
		return bound(names[0], 50), len(names) - 1
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
func shortStep(s input.Step) string {
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

// bound cuts s to at most n runes, ending in "…" when cut (web.Bound).
func bound(s string, n int) string { return web.Bound(s, n) }
