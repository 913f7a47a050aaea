package web

import (
	"cmp"
	"strings"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/input"
)

// maxStepValue bounds a step's value in a title (its whole is in the description, bounded too):
// the user's values are capped here, as Head caps the worded title and description (templ
// escapes them).
const maxStepValue = 24

// PlaygroundHead names a view so that links pasted in a chat can be told apart: the workload,
// the annotation steps, the tab and step shown, presenter mode. For example
// "Deployment/checkout · proxyCPU=200m, hold — sidecarlab". The page words it in the reader's
// language (HeadView); the values here are the user's, bounded.
func PlaygroundHead(tl *engine.Timeline, steps []input.Step, step int, tab string, present bool) Head {
	hv := &HeadView{Istio: engine.Version().Istio, Present: present, Step: step}
	hv.Workload, hv.More = workloadName(tl)
	if hv.Workload != "" {
		hv.Namespace = workloadNamespace(tl)
	}
	for _, s := range steps {
		hv.Steps = append(hv.Steps, shortStep(s))
		hv.StepsLong = append(hv.StepsLong, Bound(s.String(), MaxDescription))
	}
	if tab != "" && tab != DefaultTab {
		for _, t := range Tabs() {
			if t.ID == tab {
				hv.Tab = t.ID
			}
		}
	}
	return Head{View: hv}
}

// CompareHead names a comparison by its two sides.
func CompareHead(c *ComparePage) Head {
	return Head{View: &HeadView{Compare: true, A: c.A.Label, B: c.B.Label}}
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
		return Bound(names[0], 60), 0
	default:
		return Bound(names[0], 50), len(names) - 1
	}
}

func workloadNamespace(tl *engine.Timeline) string {
	for _, d := range tl.Steps[0].Documents {
		if d.Injectable && d.Kind != "" {
			return Bound(d.Namespace, 40)
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
	return name + "=" + Bound(value, maxStepValue)
}
