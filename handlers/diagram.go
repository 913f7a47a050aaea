package handlers

import (
	"strings"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/explain"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/web"
)

// The lifecycle diagram's geometry, in SVG user units (pixels at 1:1). The template (diagram in
// web/results.templ) draws within it: the lane headings above firstRowY, each event as a box 24
// high, and the "start ↓" and "stop ↓" labels in the gutter left of laneX0.
const (
	laneX0 = 64  // where the first lane starts, right of the gutter
	laneW  = 180 // one container's lane
	rowH   = 32  // from one event row to the next: the 24-high box and a gap of 8

	firstRowY   = 46 // the first event row's top, below the lane headings (name, then role)
	boxInset    = 6  // the room between an event's box and the edges of its lanes, on each side
	dividerGap  = 6  // from the row after the last start event to the start/stop divider
	stopGap     = 32 // the same to the first stop event: room for the "stop ↓" label
	rightMargin = 8  // after the last lane
	bottomGap   = 12 // from the row after the last stop event to the bottom
)

// lifecycleViews lays out each workload's sequence as a diagram, with its verdicts and capacity,
// in loc's language.
func lifecycleViews(loc *i18n.Localizer, ls []engine.Lifecycle, rows []engine.BatchRow, replicas int) []web.LifecycleView {
	w := explain.In(loc)
	var out []web.LifecycleView
	for _, l := range ls {
		lv := web.LifecycleView{Title: l.Kind + "/" + l.Name, Ready: l.Ready, Diagram: layout(w, l)}
		for _, v := range l.Verdicts {
			lv.Verdicts = append(lv.Verdicts, web.VerdictView{ID: v.ID, Question: w.Question(v), Answer: v.Answer, AnswerText: loc.T(answerWords(v.Answer)), Why: w.Why(v), Goodness: string(v.Goodness)})
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
			lv.Capacity = web.CapacityView{Known: true, PerPodRequests: r.Requests, PerPodLimits: r.Limits, Replicas: n, ReplicasFromSpec: fromSpec,
				TotalRequests: pair(tot.RequestsCPU, tot.RequestsMem), TotalLimits: pair(tot.LimitsCPU, tot.LimitsMem)}
		}
		out = append(out, lv)
	}
	return out
}

// answerWords is the message id of a verdict's answer ("yes", "no", "n/a").
func answerWords(a string) string {
	return "results.answer." + strings.ReplaceAll(a, "/", "")
}

func pair(cpu, mem string) string {
	var p []string
	if cpu != "" {
		p = append(p, "cpu="+cpu)
	}
	if mem != "" {
		p = append(p, "memory="+mem)
	}
	return strings.Join(p, " ")
}

// layout places the sequence: a lane per container, a row per event, start above stop.
func layout(w explain.Words, l engine.Lifecycle) web.Diagram {
	d := web.Diagram{Width: laneX0 + len(l.Containers)*laneW + rightMargin}
	lane := map[string]int{}
	for i, c := range l.Containers {
		role := c.Role
		if c.Proxy {
			role = "proxy"
		}
		d.Lanes = append(d.Lanes, web.DiagramLane{X: laneX0 + i*laneW, Name: c.Name, Role: role})
		lane[c.Name] = i
	}
	y := firstRowY
	place := func(e engine.LifecycleEvent) {
		names := strings.Split(e.Container, ", ")
		first, last := len(l.Containers), -1
		for _, n := range names {
			if i, ok := lane[n]; ok {
				first, last = min(first, i), max(last, i)
			}
		}
		if last < 0 {
			return
		}
		row := web.DiagramRow{X: laneX0 + first*laneW + boxInset, Y: y, W: (last-first+1)*laneW - 2*boxInset, Label: w.Short(e), Blocks: e.Blocks, Span: len(names) > 1}
		row.Role = d.Lanes[first].Role
		d.Rows = append(d.Rows, row)
		y += rowH
	}
	for _, e := range l.Start {
		place(e)
	}
	d.StopY = y + dividerGap
	y += stopGap
	for _, e := range l.Stop {
		place(e)
	}
	d.Height = y + bottomGap
	return d
}
