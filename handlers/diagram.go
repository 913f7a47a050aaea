package handlers

import (
	"strings"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/web"
)

const (
	laneW  = 180
	laneX0 = 64
	rowH   = 32
)

// lifecycleViews lays out each workload's sequence as a diagram, with its verdicts and capacity.
func lifecycleViews(ls []engine.Lifecycle, rows []engine.BatchRow, replicas int) []web.LifecycleView {
	var out []web.LifecycleView
	for _, l := range ls {
		lv := web.LifecycleView{Title: l.Kind + "/" + l.Name, Ready: l.Ready, Diagram: layout(l)}
		for _, v := range l.Verdicts {
			lv.Verdicts = append(lv.Verdicts, web.VerdictView{ID: v.ID, Question: v.Question, Answer: v.Answer, Why: v.Why})
		}
		for _, e := range l.Start {
			lv.Start = append(lv.Start, e.Container+": "+e.What)
		}
		for _, e := range l.Stop {
			lv.Stop = append(lv.Stop, e.Container+": "+e.What)
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
func layout(l engine.Lifecycle) web.Diagram {
	d := web.Diagram{Width: laneX0 + len(l.Containers)*laneW + 8}
	lane := map[string]int{}
	for i, c := range l.Containers {
		role := c.Role
		if c.Proxy {
			role = "proxy"
		}
		d.Lanes = append(d.Lanes, web.DiagramLane{X: laneX0 + i*laneW, Name: c.Name, Role: role})
		lane[c.Name] = i
	}
	y := 46
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
		row := web.DiagramRow{X: laneX0 + first*laneW + 6, Y: y, W: (last-first+1)*laneW - 12, Label: e.Short, Blocks: e.Blocks, Span: len(names) > 1}
		row.Role = d.Lanes[first].Role
		d.Rows = append(d.Rows, row)
		y += rowH
	}
	for _, e := range l.Start {
		place(e)
	}
	d.StopY = y + 6
	y += 32
	for _, e := range l.Stop {
		place(e)
	}
	d.Height = y + 12
	return d
}
