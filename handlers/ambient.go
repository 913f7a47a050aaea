package handlers

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/sidecarlab/sidecarlab/engine/lifecycle"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/sidecarlab/sidecarlab/admission"
	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/ambient"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/permalink"
	"github.com/sidecarlab/sidecarlab/web"
	"github.com/sidecarlab/sidecarlab/wording"
)

// A sidecar-or-ambient comparison sets each workload of a state, injected with Istio's ambient
// profile (CNI on), beside itself as written in an ambient namespace (ambient.Compare), with Pod
// Security's verdicts on both sides (admission.ComparePodSecurity): /ambient?s=STATE&nodes=N,
// and POST /api/v1/ambient.

// ambientHref is the comparison of a state, with the nodes given (0: the default).
func ambientHref(st api.State, nodes int) string {
	q := url.Values{"s": {permalink.Encode(st)}}
	if nodes > 0 {
		q.Set("nodes", strconv.Itoa(nodes))
	}
	return "/ambient?" + q.Encode()
}

// compareAmbient runs the comparison of st on nodes nodes (0: engine.DefaultAmbientNodes) once
// the request holds a work slot, costed as the sidecar side's injection.
func (s *server) compareAmbient(ctx context.Context, st api.State, nodes int) (*ambient.Comparison, error) {
	if nodes == 0 {
		nodes = engine.DefaultAmbientNodes
	}
	side := st
	var err error
	if side.Settings.Install, err = engine.AmbientInstall(st.Settings.Install); err != nil {
		return nil, err
	}
	if err := s.work(ctx, side); err != nil {
		return nil, err
	}
	c, err := ambient.Compare(ctx, s.eng(), []byte(st.Manifest), st.Steps, st.Settings, nodes)
	if err != nil {
		return nil, err
	}
	return c, admission.ComparePodSecurity(ctx, c, st.Settings)
}

// nodesParam reads the page's node count: absent or empty is the default (0); anything else
// must be a whole number, which the engine bounds.
func nodesParam(v string) (int, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n == 0 {
		return 0, &input.Error{Field: "nodes", ID: "ambient-nodes", Params: map[string]string{"max": strconv.Itoa(engine.MaxAmbientNodes)}}
	}
	return n, nil
}

// handleAmbient is GET /ambient?s=STATE[&nodes=N]: the comparison of STATE.
func (s *server) handleAmbient() http.Handler {
	return s.handler(func(w http.ResponseWriter, r *http.Request) error {
		q := r.URL.Query()
		st, err := decodeState(q.Get("s"))
		if err != nil {
			return err
		}
		nodes, err := nodesParam(q.Get("nodes"))
		if err != nil {
			return err
		}
		c, err := s.compareAmbient(r.Context(), st, nodes)
		if err != nil {
			return err
		}
		l := i18n.FromContext(r.Context())
		page := ambientPage(l, wording.In(l).AmbientComparison(c))
		page.Version, page.State, page.Back = versionLine(), q.Get("s"), view{state: st, step: -1}.permalink()
		page.Lab = s.statics.lab().forAmbient(l, st)
		page.Head = web.Head{View: &web.HeadView{Compare: true, A: page.SidecarLabel, B: page.AmbientLabel}}
		page.Presenting = presenting(r, i18n.FromContext(r.Context()).T("page.ambient.heading"))
		for _, w := range page.Workloads {
			for _, l := range []*web.LifecycleView{w.SidecarLifecycle, w.AmbientLifecycle} {
				if l != nil {
					l.Phases = page.Presenting.On // a phase a slide, as the playground's slides
				}
			}
		}
		return render(w, r, http.StatusOK, web.AmbientPageView(page))
	})
}

// ambientPage shapes a worded comparison as the page shows it, in l's language.
func ambientPage(l *i18n.Localizer, c wording.AmbientComparison) *web.AmbientPage {
	p := &web.AmbientPage{Install: strings.Join(c.Settings.Install.Set, " "), Nodes: c.Capacity.Nodes, MaxNodes: engine.MaxAmbientNodes,
		SidecarLabel: l.T("page.ambient.sidecar"), AmbientLabel: l.T("page.ambient.ambient")}
	k := c.Capacity
	p.Capacity = web.AmbientCapacityView{Nodes: k.Nodes, Pods: k.Pods, Sidecars: engine.Resources{CPU: k.SidecarsCPU, Memory: k.SidecarsMemory}.String(),
		HasZtunnel: k.ZtunnelCPU != "" || k.ZtunnelMemory != "", Ztunnel: engine.Resources{CPU: k.ZtunnelCPU, Memory: k.ZtunnelMemory}.String(), Ztunnels: engine.Resources{CPU: k.ZtunnelsCPU, Memory: k.ZtunnelsMemory}.String(),
		Waypoint: engine.Resources{CPU: k.WaypointCPU, Memory: k.WaypointMemory}.String()}
	for _, cw := range c.Workloads {
		v := web.AmbientWorkloadView{Doc: l.T("results.cluster.doc", "Doc", cw.Doc, "Kind", cw.Kind, "Name", cw.Name), Error: cw.Error, InjectLabel: cw.InjectLabel}
		if cw.Status != engine.StatusInjected && cw.Error == "" {
			v.NotInjected = cw.Reason
		}
		if e := cw.Enrolment; e != nil {
			v.Joins, v.Enrolment, v.RunTime = e.Joins, e.Text, e.RunTime
		}
		for _, ch := range cw.Changes {
			v.Changes = append(v.Changes, web.ChangeViewOf(l, ch, nil, false, -1))
		}
		v.SidecarLifecycle = lifecycleOne(l, cw.SidecarLifecycle)
		v.AmbientLifecycle = lifecycleOne(l, cw.AmbientLifecycle)
		for _, f := range cw.Facts {
			v.Facts = append(v.Facts, f.Text)
		}
		v.SidecarPSA, v.AmbientPSA = psaViews(cw.SidecarPodSecurity), psaViews(cw.AmbientPodSecurity)
		for _, r := range cw.Annotations {
			rv := web.AmbientRowView{Annotation: r.Annotation, Verdict: string(r.Verdict), Text: r.Text, Why: r.Why, Where: r.Where}
			for _, src := range r.Sources {
				rv.Sources = append(rv.Sources, src.URL)
			}
			v.Annotations = append(v.Annotations, rv)
		}
		// A long value's lines are cut, as in the YAML tab.
		v.Sidecar, _ = web.CutLines(l, cw.Sidecar, web.MaxShownLine)
		v.Ambient, _ = web.CutLines(l, cw.Ambient, web.MaxShownLine)
		p.Workloads = append(p.Workloads, v)
	}
	return p
}

// lifecycleOne is one worded lifecycle as the lifecycle view draws it; nil for none.
func lifecycleOne(l *i18n.Localizer, wl *wording.Lifecycle) *web.LifecycleView {
	if wl == nil {
		return nil
	}
	lv := web.LifecycleViews(l, []lifecycle.Lifecycle{wl.Lifecycle}, nil, 0)
	return &lv[0]
}

// psaViews are Pod Security's verdicts as the page lists them.
func psaViews(ps []ambient.PodSecurity) []web.PSAView {
	var out []web.PSAView
	for _, p := range ps {
		out = append(out, web.PSAView{Level: p.Level, Allowed: p.Allowed, Violations: p.Violations})
	}
	return out
}

// handleAPIAmbient is POST /api/v1/ambient.
func (s *server) handleAPIAmbient() http.Handler {
	return s.handler(func(w http.ResponseWriter, r *http.Request) error {
		var req api.AmbientRequest
		st, err := s.apiRequest(w, r, &req, &req.InjectRequest)
		if err != nil {
			return err
		}
		c, err := s.compareAmbient(r.Context(), st, req.Nodes)
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, api.AmbientResponse{AmbientComparison: wording.For(r.Context()).AmbientComparison(c), Compare: ambientHref(st, req.Nodes)})
	})
}
