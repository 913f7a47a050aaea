package handlers

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/sidecarlab/sidecarlab/engine/lifecycle"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/sidecarlab/sidecarlab/admission"
	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/permalink"
	"github.com/sidecarlab/sidecarlab/web"
	"github.com/sidecarlab/sidecarlab/wording"
)

// clusterView runs the admission of a state and shapes it as the Cluster tab. An input error
// (the manifest, the settings) is said in the tab; anything else is the request's error.
func (s *server) clusterView(ctx context.Context, st api.State) (web.ClusterView, []admission.Result, error) {
	l := i18n.FromContext(ctx)
	words := wording.In(l)
	cv := web.ClusterView{Namespace: namespaceText(l, namespaceOf(st.Settings)), Version: st.Settings.KubernetesVersion,
		CheckedKubernetes: admission.CheckedKubernetes, CheckedIstio: engine.Version().Istio}
	if cv.Version == "" {
		cv.Version = engine.DefaultKubernetesVersion
	}
	rs, err := s.admit(ctx, st)
	var ie *input.Error
	if errors.As(err, &ie) {
		cv.Error = words.Input(ie).Summary
		return cv, nil, nil
	}
	if err != nil {
		return cv, nil, err
	}
	for i, a := range words.Admissions(rs) {
		r := rs[i]
		d := web.ClusterDoc{Doc: a.Doc, Kind: a.Kind, Name: a.Name, Injected: a.Injected, Admitted: a.Admitted,
			Pod: a.Pod, PodNote: podNote(l, a), Namespace: a.Namespace, Violations: a.Violations, Warnings: a.Warnings, Error: a.Error}
		for _, t := range a.Trace {
			d.Trace = append(d.Trace, web.TraceLine{ID: t.ID, Text: t.Text, Quote: t.Params["message"]})
		}
		if a.Ambient != nil {
			d.Ambient = &web.AmbientView{Joins: a.Ambient.Joins, Rule: string(a.Ambient.Rule), Text: a.Ambient.Text, RunTime: a.Ambient.RunTime}
		}
		for _, w := range a.Webhooks {
			d.Webhooks = append(d.Webhooks, web.WebhookRow{Configuration: w.Configuration, Name: w.Name,
				NamespaceSelector: w.NamespaceSelector, ObjectSelector: w.ObjectSelector,
				NamespaceMatch: w.NamespaceMatch, ObjectMatch: w.ObjectMatch, Called: w.Called})
		}
		if a.Admitted {
			// The Lifecycle of the Pod as the cluster admits it (injected or not).
			if lc, ok := engine.PodLifecycle(r.Doc, r.Kind, r.Name, r.Final); ok {
				lv := web.LifecycleViews(l, []lifecycle.Lifecycle{lc}, nil, 0)[0]
				lv.Title = l.T("lab.cluster.lifecycle", "Title", lv.Title)
				d.Lifecycle = &lv
			}
		}
		cv.Docs = append(cv.Docs, d)
	}
	// Documents that name a namespace of their own are created there, with the settings' labels:
	// when all of them run in one, the header names it, not the settings' (the default one).
	if ns := namespaceOf(st.Settings); len(cv.Docs) > 0 {
		one := cv.Docs[0].Namespace
		for _, d := range cv.Docs[1:] {
			if d.Namespace != one {
				one = ""
			}
		}
		if one != "" && one != ns.Name {
			settings := ns.Name
			ns.Name = one
			cv.Namespace = namespaceText(l, ns) + l.T("results.cluster.namespace-documents", "Settings", settings)
		}
	}
	cv.Fixes = settingsFixes(rs, st.Settings, func(option string) bool {
		if st.Settings.Install.Mesh.IsZero() {
			// Rendered from the options alone, the installation takes a --set: the render that
			// would say so (a worker's, on a server) is left to the fix's own request.
			return true
		}
		takes, err := s.eng().OptionTakes(ctx, st.Settings.Install, option)
		return err != nil || takes // an option that fails to render says so when applied
	})
	fixTexts(words, cv.Fixes, func(option string) string { return upgradeHref(st, option) })
	return cv, rs, nil
}

// podNote says which part of a Pod's name the controller or the API server would write.
func podNote(l *i18n.Localizer, a wording.Admission) string {
	var parts []string
	if strings.Contains(a.Pod, "<hash>") {
		parts = append(parts, l.T("lab.cluster.pod.template-hash"))
	}
	if a.Kind == "CronJob" {
		parts = append(parts, l.T("lab.cluster.pod.cronjob"))
	}
	if strings.HasSuffix(a.Pod, "-") {
		parts = append(parts, l.T("lab.cluster.pod.generate-name"))
	}
	return strings.Join(parts, l.T("lab.cluster.pod.separator"))
}

// admissionCell is a workload's admission in a batch table cell: "injected in shop, admitted",
// "rejected under baseline".
func admissionCell(l *i18n.Localizer, r admission.Result, ns engine.Namespace) web.BatchCell {
	if r.Error != "" {
		return web.BatchCell{Text: l.T("lab.cluster.cell.no-pod"), Note: r.Error}
	}
	where := ns.Name
	if r.Pod != nil && r.Pod.Namespace != "" {
		where = r.Pod.Namespace
	}
	id := "lab.cluster.cell.not-injected-"
	if r.Injected {
		id = "lab.cluster.cell.injected-"
	}
	switch {
	case r.WebhookError != "":
		return web.BatchCell{Text: l.T(id+"webhook", "Namespace", where)}
	case !r.Admitted:
		return web.BatchCell{Text: l.T(id+"rejected", "Namespace", where, "Level", ns.Labels[labelEnforce])}
	}
	return web.BatchCell{Text: l.T(id+"admitted", "Namespace", where)}
}

// admissionColumn is the batch table's column with each workload's admission. The engine's
// batch rows know nothing of admission (the engine does not import package admission, which
// imports it), so the column is added here, to the rows the page shows.
func admissionColumn(l *i18n.Localizer, b *web.BatchView, rs []admission.Result, ns engine.Namespace) {
	byDoc := map[int]admission.Result{}
	for _, r := range rs {
		byDoc[r.Doc] = r
	}
	b.Columns = append(b.Columns, "admission")
	for i := range b.Rows {
		cell := web.BatchCell{Text: "—"}
		if r, ok := byDoc[b.Rows[i].Doc]; ok {
			cell = admissionCell(l, r, ns)
		}
		b.Rows[i].Cells = append(b.Rows[i].Cells, cell)
	}
}

// lazyTabs are the tabs of a state whose content costs an admission: the Cluster tab, and the
// batch table when a namespace is set (its admission column). A page renders them only when
// they are the selected tab.
func lazyTabs(st api.State) []string {
	if st.Settings.Namespace.Name != "" || len(st.Settings.Namespace.Labels) > 0 {
		return []string{"batch", web.ClusterTab}
	}
	return []string{web.ClusterTab}
}

// addAdmission runs the admission for the page's selected tab when it shows one: the Cluster
// tab, or the batch table of the last step when a namespace is set. Any other page does not pay
// for it.
func (s *server) addAdmission(ctx context.Context, v view, p *web.Page) error {
	switch {
	case v.tab == web.ClusterTab:
		cv, _, err := s.clusterView(ctx, v.state)
		if err != nil {
			return err
		}
		// As the other tabs: the first documents (see view.docLimit); the API has every one.
		if lim := v.docLimit(); len(cv.Docs) > lim {
			cv.Hidden = len(cv.Docs) - lim
			cv.Docs = cv.Docs[:lim]
			mv := v
			mv.limit = lim + defaultLimit
			cv.MoreHref = mv.linkWith(permalink.Encode(v.state), web.ClusterTab, v.step)
		}
		p.Results.Cluster = cv
	case v.tab == "batch" && slices.Contains(lazyTabs(v.state), "batch") && p.Results.Selected == len(p.Results.Steps)-1:
		rs, err := s.admit(ctx, v.state)
		var ie *input.Error
		if errors.As(err, &ie) {
			return nil // the Cluster tab says why; the table stays as it is
		}
		if err != nil {
			return err
		}
		admissionColumn(i18n.FromContext(ctx), &p.Results.Batch, rs, namespaceOf(v.state.Settings))
	}
	return nil
}
