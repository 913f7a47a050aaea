package handlers

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	psaapi "k8s.io/pod-security-admission/api"

	"github.com/sidecarlab/sidecarlab/admission"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/explain"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/web"
)

// The namespace labels the settings' quick toggles stand for.
const (
	labelInjection = "istio-injection"
	labelRev       = "istio.io/rev"
	labelEnforce   = psaapi.EnforceLevelLabel
)

// maxNamespaceLabels bounds a namespace's labels (a real namespace has a handful).
const maxNamespaceLabels = 64

// nsError is a namespace the API server would refuse. It is an *engine.InputError in English
// (its Unwrap: what the API, a link's decoding and the logs say) that also keeps its message's
// id and parameters in the catalogs, so that the settings' form says it in the reader's language
// (postedNamespaceForm).
type nsError struct {
	*engine.InputError
	field, id string
	args      []any
}

func (e *nsError) Unwrap() error { return e.InputError }

// newNSError is the error of the namespace group's field (lab.ns.field.FIELD) at line (0: none)
// with the message id and its parameters.
func newNSError(field string, line int, id string, args ...any) *nsError {
	en := i18n.For(i18n.Default)
	return &nsError{InputError: &engine.InputError{Field: en.T("lab.ns.field." + field), Line: line, Msg: en.T(id, args...)},
		field: field, id: id, args: args}
}

// in is the error in l's language.
func (e *nsError) in(l *i18n.Localizer) string {
	field, msg := l.T("lab.ns.field."+e.field), l.T(e.id, e.args...)
	if e.Line > 0 {
		return l.T("lab.ns.error-line", "Line", e.Line, "Field", field, "Msg", msg)
	}
	return l.T("lab.ns.error", "Field", field, "Msg", msg)
}

// readNamespace reads the settings' namespace group from a posted form: the name, the labels
// typed as KEY=VALUE lines, then the toggles' labels. A label typed twice, or typed and set by
// a toggle to another value, is an error rather than a silent choice.
func readNamespace(f url.Values) (engine.Namespace, error) {
	ns := engine.Namespace{Name: strings.TrimSpace(f.Get("nsName"))}
	add := func(k, v, field string, line int) error {
		if ns.Labels == nil {
			ns.Labels = map[string]string{}
		}
		if old, ok := ns.Labels[k]; ok && old != v {
			return newNSError(field, line, "lab.ns.twice", "Key", shortName(k), "Old", fmt.Sprintf("%q", shortName(old)), "New", fmt.Sprintf("%q", shortName(v)))
		}
		ns.Labels[k] = v
		return nil
	}
	for i, l := range strings.Split(strings.ReplaceAll(f.Get("nsLabels"), "\r\n", "\n"), "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			return ns, newNSError("labels", i+1, "lab.ns.key-value")
		}
		if err := add(strings.TrimSpace(k), strings.TrimSpace(v), "labels", i+1); err != nil {
			return ns, err
		}
	}
	if f.Get("nsInjection") != "" {
		if err := add(labelInjection, "enabled", "labels", 0); err != nil {
			return ns, err
		}
	}
	if rev := strings.TrimSpace(f.Get("nsRev")); rev != "" {
		if err := add(labelRev, rev, "revision", 0); err != nil {
			return ns, err
		}
	}
	if lvl := f.Get("nsEnforce"); lvl != "" {
		if !slices.Contains(enforceLevels, lvl) {
			return ns, newNSError("enforce", 0, "lab.ns.levels")
		}
		if err := add(labelEnforce, lvl, "enforce", 0); err != nil {
			return ns, err
		}
	}
	return ns, checkNamespace(ns)
}

// checkNamespace holds a namespace, from a form or a link, to what the API server accepts: a
// DNS-1123 label as its name, qualified names and label values as its labels (apimachinery's
// validation), a Pod Security level where Pod Security reads one, and a bounded count.
func checkNamespace(ns engine.Namespace) error {
	if ns.Name != "" {
		if errs := validation.IsDNS1123Label(ns.Name); len(errs) > 0 {
			return newNSError("name", 0, "lab.ns.name", "Name", shortName(ns.Name), "Reason", errs[0])
		}
	}
	if len(ns.Labels) > maxNamespaceLabels {
		return newNSError("labels", 0, "lab.ns.too-many", "Count", len(ns.Labels), "Max", maxNamespaceLabels)
	}
	for _, k := range slices.Sorted(maps.Keys(ns.Labels)) {
		v := ns.Labels[k]
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return newNSError("labels", 0, "lab.ns.key", "Key", shortName(k), "Reason", errs[0])
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return newNSError("labels", 0, "lab.ns.value", "Label", shortName(k)+"="+shortName(v), "Reason", errs[0])
		}
		if strings.HasPrefix(k, "pod-security.kubernetes.io/") && !strings.HasSuffix(k, "-version") {
			if _, err := psaapi.ParseLevel(v); err != nil {
				return newNSError("labels", 0, "lab.ns.label-levels", "Label", shortName(k)+"="+shortName(v))
			}
		}
	}
	return nil
}

// namespaceForm is a namespace as the settings show it: the toggles' labels apart, the others
// as KEY=VALUE lines.
func namespaceForm(ns engine.Namespace) web.NamespaceForm {
	nf := web.NamespaceForm{Name: ns.Name}
	var lines []string
	for _, k := range slices.Sorted(maps.Keys(ns.Labels)) {
		v := ns.Labels[k]
		switch {
		case k == labelInjection && v == "enabled":
			nf.Injection = true
		case k == labelRev:
			nf.Rev = v
		case k == labelEnforce && slices.Contains(enforceLevels, v):
			nf.Enforce = v
		default:
			lines = append(lines, k+"="+v)
		}
	}
	nf.Labels = strings.Join(lines, "\n")
	nf.Enforces = enforceOptions(nf.Enforce)
	return nf
}

var enforceLevels = []string{string(psaapi.LevelPrivileged), string(psaapi.LevelBaseline), string(psaapi.LevelRestricted)}

func enforceOptions(sel string) []web.Option {
	out := []web.Option{{Value: "", Label: "not set (privileged)", Selected: sel == ""}}
	for _, l := range enforceLevels {
		out = append(out, web.Option{Value: l, Label: l, Selected: l == sel})
	}
	return out
}

// postedNamespaceForm is the namespace group as it was posted, with what is wrong with it: the
// form shows the person's text again, beside the error, in l's language.
func postedNamespaceForm(l *i18n.Localizer, f url.Values, err error) *web.NamespaceForm {
	nf := &web.NamespaceForm{Name: f.Get("nsName"), Injection: f.Get("nsInjection") != "", Rev: f.Get("nsRev"),
		Enforce: f.Get("nsEnforce"), Labels: strings.ReplaceAll(f.Get("nsLabels"), "\r\n", "\n")}
	nf.Enforces = enforceOptions(nf.Enforce)
	nf.Error = err.Error()
	var ne *nsError
	var ie *engine.InputError
	switch {
	case errors.As(err, &ne):
		nf.Error = ne.in(l)
	case errors.As(err, &ie):
		nf.Error = explain.In(l).InputErrorText(ie)
	}
	return nf
}

// The fixes that change the settings, by the id their buttons post.
const (
	fixLabelInjection = "label-injection"
	fixCNI            = "cni"
	fixSeccomp        = "seccomp"
	// fixLabel edits the manifest rather than the settings: the pod templates' annotation
	// sidecar.istio.io/inject: "true" becomes a label (engine.LabelInsteadOfAnnotation).
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
// words are explain.Words.SettingsFix).
var settingsFixOptions = map[string]string{fixCNI: cniOption, fixSeccomp: seccompOption}

// settingsFixes are the fixes that change the settings, decided by what the admission found:
// labelling the namespace when a webhook would take the Pod but for the namespace's labels, and
// Istio CNI when Pod Security rejects istio-init's capabilities. Their ids only: the view words
// them in the reader's language (fixTexts).
func settingsFixes(rs []admission.Result, set engine.Settings) []web.SettingsFix {
	var label, cni, seccomp, podLabel bool
	for _, r := range rs {
		if r.Error != "" {
			continue
		}
		called := slices.ContainsFunc(r.Webhooks, func(w admission.WebhookMatch) bool { return w.Called })
		if !called && slices.ContainsFunc(r.Webhooks, func(w admission.WebhookMatch) bool { return w.ObjectMatch && !w.NamespaceMatch }) {
			label = true
		}
		if !r.Admitted && slices.ContainsFunc(r.Violations, func(v string) bool {
			return strings.Contains(v, `container "istio-init"`) && strings.Contains(v, `"NET_ADMIN"`)
		}) {
			cni = true
		}
		if !r.Admitted && slices.ContainsFunc(r.Violations, istioSeccompViolation) {
			seccomp = true
		}
		if slices.ContainsFunc(r.Trace, func(s admission.Step) bool { return s.ID == "hint-annotation-not-label" }) {
			podLabel = true
		}
	}
	var out []web.SettingsFix
	if podLabel {
		out = append(out, web.SettingsFix{ID: fixLabel})
	}
	if label && set.Namespace.Labels[labelInjection] != "enabled" {
		out = append(out, web.SettingsFix{ID: fixLabelInjection})
	}
	if cni && !slices.Contains(set.Install.Set, cniOption) {
		out = append(out, web.SettingsFix{ID: fixCNI})
	}
	if seccomp && !slices.Contains(set.Install.Set, seccompOption) {
		out = append(out, web.SettingsFix{ID: fixSeccomp})
	}
	return out
}

// fixTexts words the fixes' buttons.
func fixTexts(w explain.Words, fixes []web.SettingsFix) {
	for i := range fixes {
		fixes[i].Text = w.SettingsFix(fixes[i].ID, settingsFixOptions[fixes[i].ID])
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

// applyClusterFix changes the state as the fix with the id says: its settings, or (fixLabel)
// its manifest.
func applyClusterFix(id string, st *State) error {
	if id == fixLabel {
		m, err := engine.LabelInsteadOfAnnotation([]byte(st.Manifest))
		if errors.Is(err, engine.ErrNothingToMove) {
			return httpError{status: http.StatusUnprocessableEntity, id: "errors.fix.nothing-to-move"}
		}
		if err != nil {
			return httpError{status: http.StatusUnprocessableEntity, id: "errors.fix.failed", args: []any{"Reason", err.Error()}}
		}
		st.Manifest = string(m)
		return nil
	}
	return applySettingsFix(id, &st.Settings)
}

// applySettingsFix changes the settings as the fix with the id says.
func applySettingsFix(id string, set *engine.Settings) error {
	switch id {
	case fixLabelInjection:
		labels := maps.Clone(set.Namespace.Labels)
		if labels == nil {
			labels = map[string]string{}
		}
		labels[labelInjection] = "enabled"
		set.Namespace.Labels = labels
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

// namespaceOf is the namespace the admission runs in, with the default's name when none is set.
func namespaceOf(set engine.Settings) engine.Namespace {
	ns := set.Namespace
	if ns.Name == "" {
		ns.Name = admission.DefaultNamespace
	}
	return ns
}

// namespaceText is a namespace and its labels in a line.
func namespaceText(l *i18n.Localizer, ns engine.Namespace) string {
	if len(ns.Labels) == 0 {
		return l.T("lab.cluster.no-labels", "Name", ns.Name)
	}
	var ls []string
	for _, k := range slices.Sorted(maps.Keys(ns.Labels)) {
		ls = append(ls, k+"="+ns.Labels[k])
	}
	return l.T("lab.cluster.labels", "Name", ns.Name, "Labels", strings.Join(ls, ", "))
}

// clusterView runs the admission of a state and shapes it as the Cluster tab. An input error
// (the manifest, the settings) is said in the tab; anything else is the request's error.
func (s *server) clusterView(ctx context.Context, st State) (web.ClusterView, []admission.Result, error) {
	l := i18n.FromContext(ctx)
	words := explain.In(l)
	cv := web.ClusterView{Namespace: namespaceText(l, namespaceOf(st.Settings)), Version: st.Settings.KubernetesVersion,
		CheckedKubernetes: admission.CheckedKubernetes, CheckedIstio: engine.Version().Istio}
	if cv.Version == "" {
		cv.Version = engine.DefaultKubernetesVersion
	}
	rs, err := s.admit(ctx, st)
	var ie *engine.InputError
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
			d.Trace = append(d.Trace, web.TraceLine{ID: t.ID, Text: t.Text})
		}
		for _, w := range a.Webhooks {
			d.Webhooks = append(d.Webhooks, web.WebhookRow{Configuration: w.Configuration, Name: w.Name,
				NamespaceSelector: w.NamespaceSelector, ObjectSelector: w.ObjectSelector,
				NamespaceMatch: w.NamespaceMatch, ObjectMatch: w.ObjectMatch, Called: w.Called})
		}
		if a.Admitted {
			// The Lifecycle of the Pod as the cluster admits it (injected or not).
			if lc, ok := engine.PodLifecycle(r.Doc, r.Kind, r.Name, r.Final); ok {
				lv := lifecycleViews(l, []engine.Lifecycle{lc}, nil, 0)[0]
				lv.Title = l.T("lab.cluster.lifecycle", "Title", lv.Title)
				d.Lifecycle = &lv
			}
		}
		cv.Docs = append(cv.Docs, d)
	}
	cv.Fixes = settingsFixes(rs, st.Settings)
	fixTexts(words, cv.Fixes)
	return cv, rs, nil
}

// podNote says which part of a Pod's name the controller or the API server would write.
func podNote(l *i18n.Localizer, a explain.Admission) string {
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
func lazyTabs(st State) []string {
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
			cv.MoreHref = mv.linkWith(EncodeState(v.state), web.ClusterTab, v.step)
		}
		p.Results.Cluster = cv
	case v.tab == "batch" && slices.Contains(lazyTabs(v.state), "batch") && p.Results.Selected == len(p.Results.Steps)-1:
		rs, err := s.admit(ctx, v.state)
		var ie *engine.InputError
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
