package handlers

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"

	"istio.io/api/label"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/sidecarlab/sidecarlab/admission"
	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/engine/lifecycle"
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
			if r.Final != nil {
				lc := lifecycle.Of(r.Doc, r.Kind, r.Name, &r.Final.Spec)
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
		return web.BatchCell{Text: l.T("lab.cluster.cell.no-pod"), Note: wording.In(l).AdmissionError(r)}
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

// The fixes that change the settings, by the id their buttons post.
const (
	fixLabelInjection = "label-injection"
	fixCNI            = "cni"
	fixSeccomp        = "seccomp"
	// fixLabel edits the manifest rather than the settings: the pod templates' annotation
	// sidecar.istio.io/inject: "true" becomes a label (admission.LabelInsteadOfAnnotation).
	fixLabel = "label-not-annotation"
)

// cniOption is the install option that turns Istio CNI on: it replaces istio-init (and its
// NET_ADMIN, NET_RAW) with istio-validation. values.istio_cni.enabled alone does not, in this
// Istio (see DESIGN.md).
const cniOption = "components.cni.enabled=true"

// seccompOption gives Istio's containers (istio-proxy, istio-init or istio-validation) the
// RuntimeDefault seccomp profile, which the charts leave empty and restricted requires.
const seccompOption = "values.global.proxy.seccompProfile.type=RuntimeDefault"

// settingsFixOptions are the install options the fixes set, shown on their buttons (the fixes'
// words are wording.Words.SettingsFix).
var settingsFixOptions = map[string]string{fixCNI: cniOption, fixSeccomp: seccompOption}

// settingsFixKeys are the keys of the injector's values (the istio-sidecar-injector ConfigMap's
// `values`, istiod's Helm values) the options above set, which the sidecar template reads: what
// a mesh that gives its own values must change in its installation instead.
var settingsFixKeys = map[string]string{fixCNI: "pilot.cni.enabled=true", fixSeccomp: "global.proxy.seccompProfile.type=RuntimeDefault"}

// settingsFixes are the fixes that change the settings, decided by what the admission found:
// labelling the namespace when a webhook would take the Pod but for the namespace's labels, and
// Istio CNI when Pod Security rejects istio-init's capabilities. Their ids only: the view words
// them in the reader's language (fixTexts). takes says whether an install option changes the
// installation at all: one that does not (a mesh that gives its own values is not reinstalled
// by a --set) is offered as what to do instead, in the user's installation.
func settingsFixes(rs []admission.Result, set engine.Settings, takes func(option string) bool) []web.SettingsFix {
	var cni, seccomp, podLabel bool
	var label [2]string
	for _, r := range rs {
		if r.Error != "" {
			continue
		}
		called := slices.ContainsFunc(r.Webhooks, func(w admission.WebhookMatch) bool { return w.Called })
		// A Pod that joins ambient is in the mesh without a sidecar: labelling its namespace for
		// injection would take it out of ambient, so it is not offered.
		joins := r.Ambient != nil && r.Ambient.Joins
		if l, ok := injectionLabel(r.Webhooks, set.Namespace.Labels); ok && !called && !joins && label == [2]string{} {
			label = l
		}
		if !r.Admitted && slices.ContainsFunc(r.Violations, func(v string) bool {
			return strings.Contains(v, `container "istio-init"`) && strings.Contains(v, `"NET_ADMIN"`)
		}) {
			cni = true
		}
		if !r.Admitted && slices.ContainsFunc(r.Violations, istioSeccompViolation) {
			seccomp = true
		}
		if slices.ContainsFunc(r.Trace, func(s admission.Step) bool { return s.ID == "hint-annotation-not-label" }) && labelSelects(r) {
			podLabel = true
		}
	}
	var out []web.SettingsFix
	if podLabel {
		out = append(out, web.SettingsFix{ID: fixLabel, Value: fixLabel})
	}
	if label != [2]string{} {
		out = append(out, web.SettingsFix{ID: fixLabelInjection, Value: fixLabelInjection + ":" + label[0] + "=" + label[1], Label: label[0] + "=" + label[1]})
	}
	for _, f := range []struct {
		id     string
		needed bool
	}{{fixCNI, cni}, {fixSeccomp, seccomp}} {
		if !f.needed || slices.Contains(set.Install.Set, settingsFixOptions[f.id]) {
			continue
		}
		fix := web.SettingsFix{ID: f.id, Value: f.id}
		if !takes(settingsFixOptions[f.id]) {
			fix.Value, fix.Instead = "", true
		}
		out = append(out, fix)
	}
	return out
}

// labelSelects reports whether the label sidecar.istio.io/inject=true on r's Pod has a webhook
// take it: one whose namespace selector the namespace meets and whose object selector the Pod so
// labelled does. A revision's webhooks read istio.io/rev on the Pod instead, and do not.
func labelSelects(r admission.Result) bool {
	if r.Pod == nil {
		return false
	}
	pod := labels.Set{}
	maps.Copy(pod, r.Pod.Labels)
	pod[label.SidecarInject.Name] = "true"
	return slices.ContainsFunc(r.Webhooks, func(w admission.WebhookMatch) bool {
		sel, err := labels.Parse(w.ObjectSelector)
		return err == nil && w.NamespaceMatch && sel.Matches(pod)
	})
}

// injectionLabel is the namespace label that has Istio's webhook take the Pod, for the webhooks
// whose object selector takes it but whose namespace selector does not: a label their namespace
// selector asks for (key in (value), key=value) that, added to the namespace's labels ns, meets
// it — istio-injection=enabled where it serves (Istio's default revision), else the first
// (istio.io/rev=<revision>, a revision's). ok is false when no label would.
func injectionLabel(ws []admission.WebhookMatch, ns map[string]string) (label [2]string, ok bool) {
	var found [][2]string
	for _, w := range ws {
		if !w.ObjectMatch || w.NamespaceMatch {
			continue
		}
		sel, err := labels.Parse(w.NamespaceSelector)
		if err != nil {
			continue
		}
		reqs, _ := sel.Requirements()
		for _, r := range reqs {
			if op := r.Operator(); (op != selection.In && op != selection.Equals && op != selection.DoubleEquals) || r.Values().Len() != 1 {
				continue
			}
			l := [2]string{r.Key(), r.Values().UnsortedList()[0]}
			if v, ok := ns[l[0]]; ok && v == l[1] {
				continue // already there: labelling changes nothing
			}
			with := labels.Set{}
			maps.Copy(with, ns)
			with[l[0]] = l[1]
			if sel.Matches(with) {
				found = append(found, l)
			}
		}
	}
	if i := slices.IndexFunc(found, func(l [2]string) bool { return l[0] == labelInjection }); i >= 0 {
		return found[i], true
	}
	if len(found) == 0 {
		return label, false
	}
	return found[0], true
}

// fixTexts words the fixes: a button's text, or for a fix that cannot apply, what to do in the
// installation instead and a preview of the mesh upgraded with it (previewHref with the option).
func fixTexts(w wording.Words, fixes []web.SettingsFix, previewHref func(option string) string) {
	for i := range fixes {
		f := &fixes[i]
		option := settingsFixOptions[f.ID]
		switch {
		case f.Instead:
			f.Text = w.SettingsFixInstead(f.ID, option, settingsFixKeys[f.ID])
			f.Preview = previewHref(option)
		case f.Label != "":
			f.Text = w.SettingsFixLabel(f.ID, f.Label)
		default:
			f.Text = w.SettingsFix(f.ID, option)
		}
	}
}

// istioSeccompViolation is Pod Security's seccompProfile violation naming one of Istio's
// containers (restricted: `seccompProfile (pod or containers "istio-proxy", … must set …)`).
func istioSeccompViolation(v string) bool {
	_, rest, ok := strings.Cut(v, "seccompProfile (pod or container")
	if !ok {
		return false
	}
	rest, _, _ = strings.Cut(rest, " must set")
	return strings.Contains(rest, `"istio-proxy"`) || strings.Contains(rest, `"istio-init"`) || strings.Contains(rest, `"istio-validation"`)
}

// applyClusterFix changes the state as the fix with the button's value says: its settings, or
// (fixLabel) its manifest.
func applyClusterFix(value string, st *api.State) error {
	if value == fixLabel {
		m, err := admission.LabelInsteadOfAnnotation([]byte(st.Manifest))
		if errors.Is(err, admission.ErrNothingToMove) {
			return httpError{status: http.StatusUnprocessableEntity, id: "errors.fix.nothing-to-move"}
		}
		if err != nil {
			return httpError{status: http.StatusUnprocessableEntity, id: "errors.fix.failed", args: []any{"Reason", err.Error()}}
		}
		st.Manifest = string(m)
		return nil
	}
	return applySettingsFix(value, &st.Settings)
}

// applySettingsFix changes the settings as the fix with the id says: a button's value, the id
// and, for the namespace's label, ":key=value" (istio-injection or istio.io/rev; the id alone is
// istio-injection=enabled).
func applySettingsFix(value string, set *engine.Settings) error {
	id, label, _ := strings.Cut(value, ":")
	if id != fixLabelInjection && label != "" {
		return httpError{status: http.StatusBadRequest, id: "errors.fix.unknown"}
	}
	switch id {
	case fixLabelInjection:
		key, value := labelInjection, "enabled"
		if label != "" {
			var ok bool
			if key, value, ok = strings.Cut(label, "="); !ok || (key != labelInjection && key != labelRev) || len(validation.IsValidLabelValue(value)) > 0 {
				return httpError{status: http.StatusBadRequest, id: "errors.fix.unknown"}
			}
		}
		out := maps.Clone(set.Namespace.Labels)
		if out == nil {
			out = map[string]string{}
		}
		out[key] = value
		set.Namespace.Labels = out
	case fixCNI:
		if !slices.Contains(set.Install.Set, cniOption) {
			set.Install.Set = append(slices.Clip(set.Install.Set), cniOption)
		}
	case fixSeccomp:
		if !slices.Contains(set.Install.Set, seccompOption) {
			set.Install.Set = append(slices.Clip(set.Install.Set), seccompOption)
		}
	default:
		return httpError{status: http.StatusBadRequest, id: "errors.fix.unknown"}
	}
	return nil
}
