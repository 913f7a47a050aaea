package wording

import (
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/ambient"
	"github.com/sidecarlab/sidecarlab/engine/lifecycle"
)

// AmbientComparison is a sidecar-or-ambient comparison (ambient.Comparison) with its sentences,
// as the JSON API and `sidecarlab diff --ambient -o json` give it.
type AmbientComparison struct {
	Settings  engine.Settings        `json:"settings"`
	Capacity  engine.AmbientCapacity `json:"capacity"`
	Workloads []AmbientWorkload      `json:"workloads"`
}

// AmbientWorkload is one workload of a comparison, worded: its lifecycles, its enrolment, the
// facts of its lifecycle in ambient and its annotations' rows.
type AmbientWorkload struct {
	ambient.Workload
	SidecarLifecycle *Lifecycle   `json:"sidecarLifecycle,omitempty"`
	AmbientLifecycle *Lifecycle   `json:"ambientLifecycle,omitempty"`
	Enrolment        *Ambient     `json:"enrolment,omitempty"`
	Facts            []Fact       `json:"facts,omitempty"`
	Annotations      []AmbientRow `json:"annotations"`
}

// Fact is a fact's id with its sentence.
type Fact struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

// AmbientRow is what ambient does with an annotation (ambient.Row), worded: the verdict (Text),
// the reason (Why) and the places ambient serves the need instead (Where).
type AmbientRow struct {
	ambient.Row
	Text  string   `json:"text"`
	Why   string   `json:"why"`
	Where []string `json:"where,omitempty"`
}

// AmbientRows words rows of the annotation table.
func (w Words) AmbientRows(rows []ambient.Row) []AmbientRow {
	out := make([]AmbientRow, 0, len(rows))
	for _, r := range rows {
		ar := AmbientRow{Row: r, Text: w.loc().T(r.Verdict.MessageID()), Why: w.loc().T(r.Reason.MessageID())}
		for _, p := range r.Places {
			ar.Where = append(ar.Where, w.loc().T(p.MessageID()))
		}
		out = append(out, ar)
	}
	return out
}

// AmbientComparison words a comparison.
func (w Words) AmbientComparison(c *ambient.Comparison) AmbientComparison {
	out := AmbientComparison{Settings: c.Settings, Capacity: c.Capacity, Workloads: make([]AmbientWorkload, 0, len(c.Workloads))}
	worded := func(l *lifecycle.Lifecycle) *Lifecycle {
		if l == nil {
			return nil
		}
		return &w.Lifecycles([]lifecycle.Lifecycle{*l})[0]
	}
	for _, cw := range c.Workloads {
		aw := AmbientWorkload{Workload: cw, SidecarLifecycle: worded(cw.SidecarLifecycle), AmbientLifecycle: worded(cw.AmbientLifecycle),
			Annotations: w.AmbientRows(cw.Annotations)}
		if cw.Enrolment != nil {
			ns := ""
			if cw.AmbientPod != nil {
				ns = cw.AmbientPod.Namespace
			}
			aw.Enrolment = w.Ambient(*cw.Enrolment, ns)
		}
		for _, id := range cw.Facts {
			aw.Facts = append(aw.Facts, Fact{ID: id, Text: w.loc().T(id)})
		}
		out.Workloads = append(out.Workloads, aw)
	}
	return out
}
