package handlers

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/explain"
	"github.com/sidecarlab/sidecarlab/web"
)

// findingViews shapes the last row's pitfalls, each fix as the steps its button adds.
func findingViews(fs []engine.Finding, docs []engine.Document) []web.FindingView {
	var out []web.FindingView
	for _, f := range fs {
		fv := web.FindingView{Severity: string(f.Severity), Check: f.Check, Path: f.Path, Message: explain.Message(f), FixText: explain.FixText(f)}
		if f.Doc >= 1 && f.Doc <= len(docs) {
			d := docs[f.Doc-1]
			fv.Doc = fmt.Sprintf("document %d %s/%s", f.Doc, d.Kind, d.Name)
		}
		if f.Fix != nil && len(f.Fix.Steps) > 0 {
			b, _ := json.Marshal(f.Fix.Steps)
			fv.FixSteps = string(b)
		}
		out = append(out, fv)
	}
	return out
}

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
			lv.Verdicts = append(lv.Verdicts, web.VerdictView{ID: v.ID, Question: explain.Question(v), Answer: v.Answer, Why: explain.Why(v)})
		}
		for _, e := range l.Start {
			lv.Start = append(lv.Start, e.Container+": "+explain.What(e))
		}
		for _, e := range l.Stop {
			lv.Stop = append(lv.Stop, e.Container+": "+explain.What(e))
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
		row := web.DiagramRow{X: laneX0 + first*laneW + 6, Y: y, W: (last-first+1)*laneW - 12, Label: explain.Short(e), Blocks: e.Blocks, Span: len(names) > 1}
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

// batchView shapes the batch rows as the table, with its download links.
func batchView(v view, enc string, step int, rows []engine.BatchRow) web.BatchView {
	bv := web.BatchView{Columns: engine.BatchColumns()}
	for _, r := range rows {
		bv.Rows = append(bv.Rows, r.Cells())
	}
	q := strings.TrimPrefix(v.linkWith(enc, "", step), "/")
	bv.CSVHref, bv.MarkdownHref, bv.JSONHref = "/batch.csv"+q, "/batch.md"+q, "/batch.json"+q
	return bv
}

// compareLinks are the one-click comparisons that make sense for a state: a Job classic vs
// native; any workload without vs with holdApplicationUntilProxyStarts.
func compareLinks(st State, docs []engine.Document) []web.CompareLink {
	var hasJob, hasWorkload bool
	for _, d := range docs {
		hasJob = hasJob || d.Kind == "Job" || d.Kind == "CronJob"
		hasWorkload = hasWorkload || d.Injectable
	}
	var out []web.CompareLink
	if hasJob {
		a, b := st, st
		a.Settings.Mode, b.Settings.Mode = engine.ModeClassic, engine.ModeNative
		a.Settings.KubernetesVersion, b.Settings.KubernetesVersion = "", ""
		out = append(out, web.CompareLink{Label: "Compare classic vs native", Href: compareHref(a, b, "classic sidecar", "native sidecar")})
	}
	if hasWorkload {
		b := st
		b.Steps = append(append([]engine.Step(nil), st.Steps...), engine.Step{Key: "proxy.istio.io/config", Value: "holdApplicationUntilProxyStarts: true"})
		out = append(out, web.CompareLink{Label: "Compare without vs with hold", Href: compareHref(st, b, "as is", "with holdApplicationUntilProxyStarts")})
	}
	return out
}

func compareHref(a, b State, la, lb string) string {
	q := url.Values{"a": {EncodeState(a)}, "b": {EncodeState(b)}, "la": {la}, "lb": {lb}}
	return "/compare?" + q.Encode()
}

func atoiOr(s string, def int) int {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return def
	}
	return n
}

// labPath is the lab's guided path: each step one click away, each a permalink. Annotation steps
// are one annotation on the Deployment preset, so each diff shows exactly that annotation. The
// links never change; the server makes them once.
func labPath() []web.LabStep {
	deploy, _ := web.FindPreset("deployment")
	job, _ := web.FindPreset("job")
	batch, _ := web.FindPreset("lab-batch")
	base := State{Version: StateVersion, Istio: engine.Version().Istio, Manifest: deploy.Manifest}
	one := func(steps ...engine.Step) string {
		st := base
		st.Steps = steps
		return view{state: st, step: -1}.permalink()
	}
	jobState := State{Version: StateVersion, Istio: engine.Version().Istio, Manifest: job.Manifest}
	classic, native := jobState, jobState
	classic.Settings.Mode, native.Settings.Mode = engine.ModeClassic, engine.ModeNative
	batchState := State{Version: StateVersion, Istio: engine.Version().Istio, Manifest: batch.Manifest}
	steps := []web.LabStep{
		{Title: "Default injection", Href: one(), Hint: "What Istio adds to a Deployment with no annotation"},
		{Title: "Resources", Href: one(engine.Step{Key: "sidecar.istio.io/proxyCPU", Value: "200m"}), Hint: "proxyCPU — and the other defaults it drops"},
		{Title: "Proxy config", Href: one(engine.Step{Key: "proxy.istio.io/config", Value: "concurrency: 2\nterminationDrainDuration: 30s"}), Hint: "proxy.istio.io/config becomes the PROXY_CONFIG env"},
		{Title: "Hold", Href: one(engine.Step{Key: "proxy.istio.io/config", Value: "holdApplicationUntilProxyStarts: true"}), Hint: "istio-proxy first, postStart: pilot-agent wait"},
		{Title: "Exclude ports", Href: one(engine.Step{Key: "traffic.sidecar.istio.io/excludeOutboundPorts", Value: "3306,6379"}), Hint: "istio-init's arguments"},
		{Title: "inject: false", Href: one(engine.Step{Key: "sidecar.istio.io/inject", Value: "false"}), Hint: "Nothing injected"},
		{Title: "Job two ways", Href: compareHref(classic, native, "classic sidecar", "native sidecar"), Hint: "Where the proxy lands, and whether the Job completes"},
		{Title: "Batch of 8", Href: view{state: batchState, tab: "batch", step: -1}.permalink(), Hint: "Eight workloads as one table"},
	}
	for i := range steps {
		steps[i].N = i + 1
	}
	return steps
}
