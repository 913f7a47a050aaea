package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/a-h/templ"
	"istio.io/api/annotation"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/explain"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/web"
)

// statusWords are the message ids of a document's status, as the documents table says it.
var statusWords = map[engine.Status]string{
	engine.StatusInjected:      "results.status.injected",
	engine.StatusSkipped:       "results.status.skipped",
	engine.StatusPassedThrough: "results.status.passed-through",
	engine.StatusError:         "results.status.error",
}

// modeLabel is a mode's message id (results.mode.kube-inject, …): its value stays as it is.
func modeLabel(m engine.Mode) string { return "results.mode." + string(m) }

// openGroups start expanded in the annotation panel.
var openGroups = []engine.Group{engine.GroupResources, engine.GroupProxy, engine.GroupLifecycle}

// versionLine is the Istio inside, as the layout shows it.
func versionLine() web.VersionLine {
	v := engine.Version()
	return web.VersionLine{Istio: v.Istio, Module: v.Module, Commit: v.Commit}
}

// pageStatics are the parts of a page that never change while the server runs, made once.
type pageStatics struct {
	panel func() templ.Component
	lab   func() *labPath
}

// buildPage shapes a timeline (or the error that prevented one) into the page's view model. A
// fragment (full false) leaves out what never changes between actions: presets, modes, the panel;
// its results are the selected tab's, and those of the tabs named in also. The results are worded
// in l's language.
//
// The rows' changes and unified diffs are computed here when a row has not made them yet, within
// ctx's deadline: its error is the page's.
func buildPage(ctx context.Context, l *i18n.Localizer, v view, statics pageStatics, tl *engine.Timeline, reqErr *engine.InputError, full bool, also ...string) (*web.Page, error) {
	w := explain.In(l)
	st := v.state
	enc := EncodeState(st)
	p := &web.Page{
		Version:   versionLine(),
		Permalink: v.linkWith(enc, v.tab, v.step),
		Form:      formOf(v),
	}
	if st.Istio != "" && st.Istio != p.Version.Istio {
		p.Banner = l.T("results.other-istio", "Made", st.Istio, "Inside", p.Version.Istio)
	}
	// The settings' fields are in every answer: a fix may change them.
	mode := st.Settings.Mode
	if mode == "" {
		mode = engine.ModeKubeInject
	}
	for _, m := range engine.Modes() {
		p.Modes = append(p.Modes, web.Option{Value: string(m), Label: l.T(modeLabel(m)), Selected: m == mode})
	}
	if full {
		for _, pr := range web.Presets() {
			p.Presets = append(p.Presets, web.PresetOption{ID: pr.ID, Title: pr.TitleIn(l)})
		}
		p.Panel = statics.panel()
		p.Search.Query = v.query
		if len(searchTerms(v.query)) > 0 {
			p.Panel, p.Search.NoMatch = searchedPanel(engine.DefaultCatalog(), v.query)
		}
	}
	p.Lab = statics.lab().forState(l, st) // swapped after each action: the current step moves
	p.Head = playgroundHead(v, tl)
	p.Active = activeAnnotations(st.Steps)
	for i := range p.Active {
		// The whole value is in the timeline; the list shows a preview.
		p.Active[i].Value, _ = cutText(l, p.Active[i].Value, maxTitleValue)
	}
	// The tabs whose content costs an admission are made only when shown (see addAdmission).
	lazy := lazyTabs(st)
	var err error
	p.Results, err = buildResults(ctx, l, v, enc, tl, reqErr, func(tab string) bool {
		return tab == v.tab || slices.Contains(also, tab) || full && !slices.Contains(lazy, tab)
	})
	if err != nil {
		return nil, err
	}
	p.Results.OnlySelected = !full
	p.Results.Lazy = lazy
	p.Present = v.present
	pv := v
	pv.present, pv.step, pv.tab = true, firstSlide(st), "diff"
	p.PresentHref = pv.linkWith(enc, "diff", pv.step)
	p.EmbedHref = "/embed?s=" + url.QueryEscape(enc)
	if v.present && tl != nil {
		n := len(tl.Steps)
		cur := selectedStep(v.step, n)
		// The slides: each step's diff, then the lifecycle of the last step (the lifecycle tab).
		p.Slides = web.Slides{Current: cur, Count: n, Lifecycle: v.tab == "lifecycle", None: n <= 1}
		switch {
		case p.Slides.None:
		case p.Slides.Lifecycle:
			p.Slides.PrevHref = v.linkWith(enc, "diff", n-1)
		case cur < n-1:
			p.Slides.NextHref = v.linkWith(enc, "diff", cur+1)
		default:
			p.Slides.NextHref = v.linkWith(enc, "lifecycle", n-1)
		}
		if !p.Slides.Lifecycle && cur > 0 {
			p.Slides.PrevHref = v.linkWith(enc, "diff", cur-1)
		}
		ev := v
		ev.present = false
		p.Slides.ExitHref = ev.linkWith(enc, v.tab, -1)
	}
	if reqErr != nil && reqErr.Line > 0 && reqErr.Field == "manifest" {
		p.Form.ErrorLine, p.Form.ErrorMsg = reqErr.Line, w.Input(reqErr).Reason
	}
	if tl != nil {
		for _, d := range tl.Steps[p.Results.Selected].Documents {
			if d.Error != nil && d.Error.Line > 0 {
				// The marker sits on the line: say the document and the words, once.
				p.Form.ErrorLine, p.Form.ErrorMsg = d.Error.Line, l.T("results.marker", "Doc", d.Index, "Reason", w.Input(d.Error).Reason)
				break
			}
		}
	}
	p.Form.MarksJSON = "[]"
	if tl != nil && p.Results.Selected == len(tl.Steps)-1 {
		// The marks are the last step's findings, as the Pitfalls tab's (and its count).
		last := tl.Steps[len(tl.Steps)-1]
		p.Form.Marks = findingMarks(w, tl.Findings, last.Documents, st.Steps)
		if len(p.Form.Marks) > 0 {
			b, _ := json.Marshal(p.Form.Marks)
			p.Form.MarksJSON = string(b)
		}
	}
	for _, t := range web.Tabs() {
		link := web.TabLink{Tab: t, Href: v.linkWith(enc, t.ID, v.step), Selected: t.ID == p.Results.Tab}
		if t.ID == "pitfalls" {
			link.Count = len(p.Results.Findings)
		}
		if t.ID == "warnings" {
			link.Count = len(p.Results.Warnings)
			link.Count += p.Results.DocErrors
		}
		p.TabLinks = append(p.TabLinks, link)
	}
	return p, nil
}

// formOf is the view's state as the form shows it.
func formOf(v view) web.Form {
	st := v.state
	nsForm := namespaceForm(st.Settings.Namespace)
	if v.nsForm != nil {
		nsForm = *v.nsForm
	}
	stepsJSON, _ := json.Marshal(st.Steps)
	if len(st.Steps) == 0 {
		stepsJSON = []byte("[]")
	}
	mesh, meshRev, meshIstio, meshOther := meshForm(st.Settings.Install)
	return web.Form{
		Mesh:               mesh,
		MeshRevision:       meshRev,
		MeshIstioTemplates: meshIstio,
		MeshOtherIstio:     meshOther,
		Manifest:           st.Manifest,
		StepsJSON:          string(stepsJSON),
		Mode:               string(st.Settings.Mode),
		KubernetesVersion:  st.Settings.KubernetesVersion,
		Set:                strings.Join(st.Settings.Install.Set, "\n"),
		Overlay:            st.Settings.Install.Overlay,
		Tab:                v.tab,
		Step:               v.step,
		Cols:               v.cols,
		Namespace:          nsForm,
	}
}

// renderPanel renders the catalog part of the annotation panel to HTML once per language: the
// server keeps the full panel for the life of the process (the catalog is Istio's, compiled in),
// and a search renders its filtered groups the same way.
func renderPanel(groups []web.AnnotationGroup) templ.Component {
	return &panelMemo{groups: groups, html: map[string]templ.Component{}}
}

// panelMemo is the panel rendered to HTML, once per language the pages are read in: at most one
// render per language sidecarlab speaks (i18n.Codes), so it is bounded.
type panelMemo struct {
	groups []web.AnnotationGroup
	mu     sync.Mutex
	html   map[string]templ.Component // by language code
}

// Render writes the panel in the language of ctx, rendering it the first time.
func (m *panelMemo) Render(ctx context.Context, w io.Writer) error {
	return m.in(i18n.FromContext(ctx)).Render(ctx, w)
}

func (m *panelMemo) in(l *i18n.Localizer) templ.Component {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.html[l.Lang()]; ok {
		return c
	}
	groups := make([]web.AnnotationGroup, len(m.groups))
	for i, g := range m.groups {
		if id, ok := groupNames[g.Name]; ok {
			g.Name = l.T(id)
		}
		groups[i] = g
	}
	var buf bytes.Buffer
	if err := web.AnnotationGroups(groups).Render(i18n.NewContext(context.Background(), l), &buf); err != nil {
		return web.AnnotationGroups(groups)
	}
	c := templ.Raw(buf.String())
	m.html[l.Lang()] = c
	return c
}

// activeAnnotations is what the steps leave set, in the order each key was first set.
func activeAnnotations(steps []engine.Step) []web.ActiveAnnotation {
	var out []web.ActiveAnnotation
	for _, s := range steps {
		i := slices.IndexFunc(out, func(a web.ActiveAnnotation) bool { return a.Key == s.Key })
		switch {
		case s.Remove && i >= 0:
			out = slices.Delete(out, i, i+1)
		case !s.Remove && i >= 0:
			out[i].Value = s.Value
		case !s.Remove:
			out = append(out, web.ActiveAnnotation{Key: s.Key, Value: s.Value})
		}
	}
	return out
}

// annotationGroups lays the catalog out as the panel: grouped, typed, prefilled with an example.
// It does not depend on the state, so actions never need to re-render it. Istio's hidden
// annotations, and the one its injector writes itself (the status), are left out of the panel
// (the API lists them).
//
// The lab's annotations come first, in a group of their own (labPanel); proxy.istio.io/config
// gets its typed editor. What the search matches is searchText.
func annotationGroups(cat *engine.Catalog) []web.AnnotationGroup {
	lab := web.AnnotationGroup{Name: labGroup, Open: true}
	for _, name := range labPanel {
		if a, ok := cat.Lookup(name); ok && !a.Hidden {
			it := annotationItem(a)
			if s := labSummaries[name]; s != "" {
				it.Summary = "lab.panel.summary." + s // ours, shown in the reader's language
			}
			lab.Items = append(lab.Items, it)
		}
	}
	groups := []web.AnnotationGroup{lab}
	for _, g := range engine.Groups() {
		wg := web.AnnotationGroup{Name: string(g), Open: slices.Contains(openGroups, g)}
		for _, a := range cat.All() {
			if a.Group != g || a.Hidden || a.WrittenByInjector || slices.Contains(labPanel, a.Name) {
				continue
			}
			wg.Items = append(wg.Items, annotationItem(a))
		}
		if len(wg.Items) > 0 {
			groups = append(groups, wg)
		}
	}
	return groups
}

// annotationItem is one annotation as the panel shows it: typed input, prefilled with an example.
func annotationItem(a engine.Annotation) web.AnnotationItem {
	val := a.Example
	it := web.AnnotationItem{Name: a.Name, Description: a.Description, FeatureStatus: a.FeatureStatus, Kind: string(a.Kind), Deprecated: a.Deprecated,
		Field: "v:" + a.Name, Value: val, Input: "text"}
	if a.Name == annotation.ProxyConfig.Name {
		it.ConfigFields = configFields()
	}
	it.Search = searchText(a, it)
	switch a.Kind {
	case engine.KindBool:
		it.Input = "select"
		for _, o := range []string{"true", "false"} {
			it.Options = append(it.Options, web.Option{Value: o, Label: o, Selected: o == val})
		}
	case engine.KindEnum:
		it.Input = "select"
		for _, o := range a.Enum {
			it.Options = append(it.Options, web.Option{Value: o, Label: o, Selected: o == val})
		}
	case engine.KindYAML, engine.KindJSON:
		it.Input = "textarea"
	}
	return it
}

// buildResults shapes the results in l's language. want says whether a tab's content will be
// rendered: the batch rows, lifecycles and compare links are made only for a page that shows them.
func buildResults(ctx context.Context, l *i18n.Localizer, v view, enc string, tl *engine.Timeline, reqErr *engine.InputError, want func(tab string) bool) (web.Results, error) {
	w := explain.In(l)
	res := web.Results{Tab: v.tab}
	if reqErr != nil {
		words := w.Input(reqErr)
		res.Error, res.ErrorDetails = words.Summary, words.Details
	}
	if tl == nil {
		return res, nil
	}
	res.Selected = selectedStep(v.step, len(tl.Steps))
	res.All = v.step < 0
	multi := len(tl.Steps[0].Documents) > 1
	// A large manifest is shown in part (see web.More): its first lim documents' changes, at
	// most maxChanges changes and maxLines unified lines a step.
	lim := v.docLimit()
	maxChanges, maxLines := changesPerDoc*lim, linesPerDoc*lim
	var prev []engine.Document // the documents of the step before, nil for row 0
	for _, s := range tl.Steps {
		sv := web.StepView{Index: s.Index, Title: l.T("results.step.injection"), Cause: l.T("results.step.cause-injection"), RemoveStep: s.Index}
		if s.Step != nil {
			stepTitle(l, &sv, *s.Step)
		}
		var err error
		shownChanges := 0 // of injection's, on the page
		if sv.Replaces, err = replacesNotice(ctx, l, s); err != nil {
			return res, err
		}
		sv.Href = v.linkWith(enc, "diff", s.Index)
		sv.Selected = s.Index == res.Selected
		sv.Open = s.Index > 0 || len(tl.Steps) == 1 || !res.All
		// The field changes are computed for the tabs that count or show them (the diff and the
		// unified diff head each step with its counts and notes, the timeline counts), and turned
		// into rows (their values into YAML) only for the one that shows them; the unified diff
		// only for its own tab. A fragment carries one tab: what that tab shows must not depend on
		// which other tabs the answer renders.
		if want("diff") || want("timeline") || want("unified") {
			changes, err := s.Changes(ctx)
			if err != nil {
				return res, err
			}
			var cs changeSet
			if want("diff") {
				// Shaped once per row, limit and language, and kept with the memoised row: the rows
				// before the one a toggle adds are not shaped again. The rows hold words (a moved
				// entry, a flag's meaning), so each language has its own (three at most).
				cs = s.View(fmt.Sprintf("web.changes/%s/%d/%t", l.Lang(), lim, multi), func() any {
					return stepChanges(l, changes, s.Documents, lim, maxChanges, multi, s.Index)
				}).(changeSet)
			} else {
				cs = countChanges(changes, lim, maxChanges)
			}
			sv.ChangeCount, sv.Changes, sv.Serializer, sv.HiddenChanges = cs.count, cs.changes, cs.serializer, cs.hidden
			sv.SerializerCount, shownChanges = cs.shownSerializer, cs.shown
			sv.Notes = docNotes(l, s.Documents[:min(lim, len(s.Documents))], prev, len(changes) == 0)
		}
		if want("unified") {
			// Of the documents shown only: the raw diff.txt has them all.
			u, err := s.Unified(ctx, lim)
			if err != nil {
				return res, err
			}
			sv.Unified = unifiedLines(u)
			if len(sv.Unified) > maxLines {
				sv.HiddenLines = len(sv.Unified) - maxLines
				sv.Unified = sv.Unified[:maxLines]
			}
			for i, dl := range sv.Unified {
				var cut bool
				if sv.Unified[i].Text, cut = cutText(l, dl.Text, maxShownLine); cut {
					res.More.CutLines++
				}
			}
		}
		if sv.HiddenChanges > 0 || sv.HiddenLines > 0 {
			res.More.Truncated, res.More.Partial = true, true
		}
		for _, d := range s.Documents {
			if d.Error != nil {
				sv.Errors++
			}
			if st, _ := d.Status(); st == engine.StatusInjected {
				sv.Injected++
			}
		}
		sv.Failed = sv.Errors > 0 && shownChanges == 0
		if want("diff") {
			// The step's HTML, kept with the row like its rows of changes: a toggle renders only
			// its own step, and sends the others as placeholders when the page holds them.
			sv.Body = s.View(fmt.Sprintf("web.stepbody/%s/%d/%t", l.Lang(), lim, multi), func() any {
				b, err := web.RenderStepBody(i18n.NewContext(context.Background(), l), sv)
				if err != nil {
					return web.Kept{} // rendered with the tab, which reports the error
				}
				return b
			}).(web.Kept)
		}
		prev = s.Documents
		res.Steps = append(res.Steps, sv)
	}
	sel := tl.Steps[res.Selected]
	shown := sel.Documents[:min(lim, len(sel.Documents))]
	if want("yaml") { // the YAML is made from the output's JSON only for the tab that shows it
		res.Output = sel.Output()
		if len(shown) < len(sel.Documents) {
			res.Output = outputOf(shown)
		}
		var cut int
		res.Output, cut = cutLines(l, res.Output, maxShownLine)
		res.More.CutLines += cut
	}
	res.More.Shown, res.More.Total = len(shown), len(sel.Documents)
	if len(shown) < len(sel.Documents) {
		res.More.Truncated, res.More.Partial = true, true
	}
	if res.More.CutLines > 0 {
		res.More.Truncated = true
	}
	if res.More.Truncated {
		mv := v
		mv.limit = lim + defaultLimit
		res.More.Href, res.More.Step = mv.linkWith(enc, v.tab, v.step), defaultLimit
		res.More.MaxChanges, res.More.MaxLines, res.More.MaxLine = maxChanges, maxLines, maxShownLine
		res.More.InjectedHref = "/injected.yaml" + strings.TrimPrefix(v.linkWith(enc, "", res.Selected), "/")
		res.More.DiffHref = "/diff.txt?s=" + url.QueryEscape(enc)
	}
	var findings []engine.Finding
	if res.Selected == len(tl.Steps)-1 {
		findings = tl.Findings
		res.Ignored = w.Ignored(len(tl.Ignored))
	}
	res.Findings = findingViews(l, findings, sel.Documents) // counted on the tab, so always
	res.Banner = pitfallBanner(w, findings, v.linkWith(enc, "pitfalls", v.step))
	if want("lifecycle") || want("batch") {
		rows := engine.Batch(sel.Documents, findings)
		if want("lifecycle") {
			res.Lifecycles = lifecycleViews(l, engine.Lifecycles(shown), rows, v.replicas)
			for i := range res.Lifecycles {
				res.Lifecycles[i].Capacity.Recount = true
			}
			res.Compare = compareLinksIn(l, v.state, sel.Documents)
		}
		if want("batch") {
			res.Batch = batchView(l, v, enc, res.Selected, rows)
			res.Batch.Rows = res.Batch.Rows[:min(lim, len(res.Batch.Rows))]
		}
	}
	res.DownloadHref = "/download" + strings.TrimPrefix(v.linkWith(enc, "", res.Selected), "/")
	for _, d := range sel.Documents {
		status, reason := d.Status()
		reasonLang := ""
		switch status {
		case engine.StatusError:
			reason = w.Input(d.Error).Summary // with the document and line, which the table's row also names
			res.DocErrors++
		case engine.StatusPassedThrough:
			reason = l.T("results.status.passed-through-reason")
		case engine.StatusSkipped:
			reasonLang = "en" // Istio's own words
		}
		res.Warnings = append(res.Warnings, d.Warnings...)
		if d.Index > lim {
			continue
		}
		dv := web.DocView{Index: d.Index, Line: d.Line, Kind: d.Kind, Name: d.Name, Status: string(status), Reason: reason, ReasonLang: reasonLang,
			StatusText: l.T(statusWords[status])}
		res.Documents = append(res.Documents, dv)
	}
	return res, nil
}

// Bounds on what a page shows of one value: the values a person typed are shown in full once
// (a step's in the timeline) and by a preview elsewhere; a line of output or diff is cut past
// maxShownLine bytes (no line of a normal output is near it). The raw outputs have everything.
// So a page is at most about twice its state and its fixed parts, whatever the state holds.
const (
	maxTitleValue = 120
	maxShownLine  = 4096
)

// stepTitle sets a step's title and what its changes say caused them: "key=value", or "remove
// key". A value over maxTitleValue bytes is a preview in the title, and the whole of it is the
// step's Value, which the timeline shows; its changes name the step instead of repeating it.
func stepTitle(l *i18n.Localizer, sv *web.StepView, st engine.Step) {
	if st.Remove {
		sv.Cause, sv.Title = st.String(), l.T("results.step.remove", "Key", st.Key)
		return
	}
	preview, cut := cutText(l, st.Value, maxTitleValue)
	sv.Title, sv.Cause = st.Key+"="+preview, st.Key+"="+preview
	if cut {
		sv.Cause, sv.Value = l.T("results.step.cause-ref", "Key", st.Key, "Step", sv.Index), st.Value
	}
}

// cutText is s whole when it has at most max bytes, else its first max bytes (at a character's
// start) and how many it has in all; cut says which.
func cutText(l *i18n.Localizer, s string, max int) (text string, cut bool) {
	if len(s) <= max {
		return s, false
	}
	n := max
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + l.N("results.cut", len(s)), true
}

// cutLines is text with every line over max bytes cut (cutText), and how many were.
func cutLines(l *i18n.Localizer, text string, max int) (string, int) {
	long := func(line string) bool { return len(strings.TrimSuffix(line, "\n")) > max }
	if len(text) <= max {
		return text, 0
	}
	found := false
	for line := range strings.Lines(text) {
		if found = long(line); found {
			break
		}
	}
	if !found {
		return text, 0
	}
	var b strings.Builder
	n := 0
	for line := range strings.Lines(text) {
		if !long(line) {
			b.WriteString(line)
			continue
		}
		body, nl := strings.CutSuffix(line, "\n")
		c, _ := cutText(l, body, max)
		b.WriteString(c)
		if nl {
			b.WriteByte('\n')
		}
		n++
	}
	return b.String(), n
}

// changeSet is a step's changes as the diff tab shows them: injection's own and the
// serializer's, at most maxChanges of them from the first lim documents, and how many are not
// shown. Shared between requests: never modified once made.
type changeSet struct {
	// count is injection's changes, shown or not; hidden those not shown (of either); shown and
	// shownSerializer those shown, of injection's and of the serializer's.
	count, hidden, shown, shownSerializer int
	changes, serializer                   []web.ChangeView
}

// stepChanges is the changeSet of row step, its rows made (changeView) in l's language.
func stepChanges(l *i18n.Localizer, changes []engine.Change, docs []engine.Document, lim, maxChanges int, multi bool, step int) changeSet {
	return selectChanges(changes, lim, maxChanges, func(cs *changeSet, c engine.Change) {
		if c.Serializer {
			cs.serializer = append(cs.serializer, changeView(l, c, docs, multi, step))
		} else {
			cs.changes = append(cs.changes, changeView(l, c, docs, multi, step))
		}
	})
}

// countChanges is the changeSet's counts alone, without its rows: what a step's heading says on
// a tab that does not list the changes.
func countChanges(changes []engine.Change, lim, maxChanges int) changeSet {
	return selectChanges(changes, lim, maxChanges, func(*changeSet, engine.Change) {})
}

// selectChanges counts changes as the diff tab shows them and calls shown for each it shows.
func selectChanges(changes []engine.Change, lim, maxChanges int, shown func(*changeSet, engine.Change)) changeSet {
	var cs changeSet
	for _, c := range changes {
		if !c.Serializer {
			cs.count++
		}
		if c.Doc > lim || cs.shown+cs.shownSerializer >= maxChanges {
			cs.hidden++
			continue
		}
		if c.Serializer {
			cs.shownSerializer++
		} else {
			cs.shown++
		}
		shown(&cs, c)
	}
	return cs
}

// outputOf is the injected manifest of docs, as engine.Injection.Output writes it.
func outputOf(docs []engine.Document) string {
	return (&engine.Injection{Documents: docs}).Output()
}

// changeKinds are the message ids of the kinds of change.
var changeKinds = map[engine.ChangeKind]string{
	engine.Added: "results.diff.kind.added", engine.Removed: "results.diff.kind.removed",
	engine.Changed: "results.diff.kind.changed", engine.Moved: "results.diff.kind.moved",
}

// changeView is one change as the diff shows it, worded in l's language: a change of row step
// of the timeline, or, when step is negative, of the one diff of the compare page.
func changeView(l *i18n.Localizer, c engine.Change, docs []engine.Document, multi bool, step int) web.ChangeView {
	cv := web.ChangeView{Kind: string(c.Kind), KindText: l.T(changeKinds[c.Kind]), Path: c.Path, DocIndex: c.Doc}
	cv.Anchor, cv.LinkLabel = deepLink(l, c, multi, step)
	if multi && c.Doc >= 1 && c.Doc <= len(docs) {
		d := docs[c.Doc-1]
		cv.Doc = l.T("results.diff.doc", "Doc", c.Doc, "Kind", d.Kind, "Name", d.Name)
	}
	show := func(v any, omitted int) web.Value { return withSummary(l, showValueIn(l, v, omitted)) }
	if c.Flag != "" {
		// One flag of istio-iptables' command line: shown as written, with what it means.
		cv.Flag, cv.FlagMeaning = c.Flag, explain.In(l).IptablesFlag(c.FlagName)
		show = func(v any, omitted int) web.Value {
			if omitted > 0 {
				return withSummary(l, showValueIn(l, v, omitted))
			}
			return flagValue(c.Flag, v)
		}
	}
	switch c.Kind {
	case engine.Added:
		cv.Sign, cv.New = "+", show(c.New, c.NewBytes)
	case engine.Removed:
		cv.Sign, cv.Old = "−", show(c.Old, c.OldBytes)
	case engine.Changed:
		cv.Sign, cv.Old, cv.New = "~", show(c.Old, c.OldBytes), show(c.New, c.NewBytes)
	case engine.Moved:
		cv.Sign = "↕"
		if c.OldPath != "" {
			cv.Moved = l.T("results.diff.moved-from", "Path", c.OldPath)
		} else {
			cv.Moved = l.T("results.diff.moved-position", "From", c.From+1, "To", c.To+1)
		}
	}
	return cv
}

// deepLink is a change's deep link fragment and the words that name it for a screen reader. The
// fragment reads like a query: "step=N&" names the change's row of the timeline (the same path
// changes in several steps), "doc=D&" its document on a page of several (the same path changes in
// each), and "path=" its path, escaped, last so that a path may hold any character. A link made
// before steps were named, "path=…" alone, still opens the first row with that path (the page's
// script, highlightDeepLink).
func deepLink(l *i18n.Localizer, c engine.Change, multi bool, step int) (anchor, label string) {
	var b strings.Builder
	if step >= 0 {
		fmt.Fprintf(&b, "step=%d&", step)
	}
	if multi {
		fmt.Fprintf(&b, "doc=%d&", c.Doc)
	}
	b.WriteString("path=" + url.PathEscape(c.Path))
	switch {
	case step >= 0 && multi:
		label = l.T("results.diff.link-label-step-doc", "Path", c.Path, "Step", step, "Doc", c.Doc)
	case step >= 0:
		label = l.T("results.diff.link-label-step", "Path", c.Path, "Step", step)
	case multi:
		label = l.T("results.diff.link-label-doc", "Path", c.Path, "Doc", c.Doc)
	default:
		label = l.T("results.diff.link-label", "Path", c.Path)
	}
	return b.String(), label
}

// withSummary is v with the words its fold shows (its name, if it has one, and its length),
// made with the memoised row rather than on every render.
func withSummary(l *i18n.Localizer, v web.Value) web.Value {
	switch {
	case !v.Block || !v.Fold:
	case v.Name != "":
		v.Summary = l.N("results.diff.fold-named", v.Lines, "Name", v.Name)
	default:
		v.Summary = l.N("results.diff.fold", v.Lines)
	}
	return v
}

func unifiedLines(u string) []web.DiffLine {
	if u == "" {
		return nil
	}
	var out []web.DiffLine
	for _, l := range strings.Split(strings.TrimSuffix(u, "\n"), "\n") {
		k := "ctx"
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
			k = "file"
		case strings.HasPrefix(l, "@@"):
			k = "hunk"
		case strings.HasPrefix(l, "+"):
			k = "add"
		case strings.HasPrefix(l, "-"):
			k = "del"
		}
		out = append(out, web.DiffLine{Kind: k, Text: l})
	}
	return out
}

// docNotes say, for one step, what happened to every document that was not simply injected, so
// an empty diff is never mistaken for "injection changed nothing": a document Istio rejected
// (with Istio's message, at every step it fails); a workload Istio skipped (with Istio's reason,
// at row 0 and at the step that made Istio skip it); a kind Istio does not inject (at row 0, and
// at a later step with no change at all). prev are the documents of the step before (nil for row
// 0); empty says the step changed nothing.
func docNotes(l *i18n.Localizer, docs, prev []engine.Document, empty bool) []web.DocNote {
	var out []web.DocNote
	for i, d := range docs {
		status, reason := d.Status()
		n := web.DocNote{Doc: d.Index, Status: string(status)}
		switch status {
		case engine.StatusError:
			// Said once, in words, with the line; the parser's own text behind a toggle.
			words := explain.In(l).Input(d.Error)
			n.Text, n.Detail, n.Parser = l.T("results.note.failed", "Doc", d.Index), words.Summary, words.Details
		case engine.StatusPassedThrough:
			if prev != nil && !empty {
				continue
			}
			if d.Kind == "" {
				n.Text = l.T("results.note.passed-through-unknown", "Doc", d.Index)
			} else {
				n.Text = l.T("results.note.passed-through", "Doc", d.Index, "Kind", d.Kind)
			}
		case engine.StatusSkipped:
			if prev != nil && i < len(prev) && prev[i].Skipped {
				continue
			}
			// Istio's reason, in its words.
			n.Text, n.Detail, n.DetailLang = l.T("results.note.skipped", "Doc", d.Index, "Kind", d.Kind, "Name", d.Name), reason, "en"
		default:
			continue
		}
		out = append(out, n)
	}
	return out
}
