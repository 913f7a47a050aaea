package web

import (
	"strings"

	"github.com/sidecarlab/sidecarlab/engine/lifecycle"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/wording"
)

// LifecycleViews shapes each workload's sequence for its diagram, with its verdicts and capacity,
// in loc's language.
func LifecycleViews(loc *i18n.Localizer, ls []lifecycle.Lifecycle, rows []engine.BatchRow, replicas int) []LifecycleView {
	w := wording.In(loc)
	var out []LifecycleView
	for _, l := range ls {
		lv := LifecycleView{Title: l.Kind + "/" + l.Name, Ready: l.Ready, Sequence: sequenceOf(w, l)}
		for _, v := range l.Verdicts {
			lv.Verdicts = append(lv.Verdicts, VerdictView{ID: v.ID, Question: w.Question(v), Answer: string(v.Answer), AnswerText: w.Answer(v.Answer), Why: w.Why(v), Goodness: string(v.Goodness)})
		}
		for _, e := range l.Start {
			lv.Start = append(lv.Start, e.Container+": "+w.What(e))
		}
		for _, e := range l.Stop {
			lv.Stop = append(lv.Stop, e.Container+": "+w.What(e))
		}
		for _, r := range rows {
			if r.Doc != l.Doc || r.Proxy == "" {
				continue
			}
			c := r.Capacity
			n, fromSpec := c.Replicas, true
			if replicas > 0 {
				n, fromSpec = replicas, false
			}
			if n == 0 {
				n = 1 // a DaemonSet: one per node; the person types the node count
				fromSpec = false
			}
			tot := c.For(n)
			lv.Capacity = CapacityView{Known: true, PerPodRequests: r.Requests, PerPodLimits: r.Limits, Replicas: n, ReplicasFromSpec: fromSpec,
				TotalRequests: engine.Resources{CPU: tot.RequestsCPU, Memory: tot.RequestsMem}.String(), TotalLimits: engine.Resources{CPU: tot.LimitsCPU, Memory: tot.LimitsMem}.String()}
		}
		out = append(out, lv)
	}
	return out
}

// sequenceOf is a lifecycle as its diagram draws it (Sequence), its events worded by w.
func sequenceOf(w wording.Words, l lifecycle.Lifecycle) Sequence {
	var s Sequence
	for _, c := range l.Containers {
		role := c.Role
		if c.Proxy {
			role = "proxy"
		}
		s.Lanes = append(s.Lanes, SequenceLane{Name: c.Name, Role: role})
	}
	event := func(e lifecycle.Event) SequenceEvent {
		return SequenceEvent{Containers: strings.Split(e.Container, ", "), Label: w.Short(e), Blocks: e.Blocks}
	}
	for _, e := range l.Start {
		s.Start = append(s.Start, event(e))
	}
	for _, e := range l.Stop {
		s.Stop = append(s.Stop, event(e))
	}
	return s
}
