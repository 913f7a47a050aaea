package handlers

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/diff"
	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/engine/upgrade"
	"github.com/sidecarlab/sidecarlab/engine/yamldoc"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/web"
	"github.com/sidecarlab/sidecarlab/wording"
)

// stepView is the key of a view the page keeps with a memoised row (engine.View): what it is
// (the rows of changes, the step's HTML) and what it depends on — the language, the documents
// shown, whether the manifest has several.
type stepView struct {
	kind, lang string
	lim        int
	multi      bool
}

// buildResults shapes the results in l's language. want says whether a tab's content will be
// rendered: the batch rows, lifecycles and compare links are made only for a page that shows them.
func buildResults(ctx context.Context, l *i18n.Localizer, v view, enc string, tl *engine.Timeline, reqErr *input.Error, want func(tab string) bool) (web.Results, error) {
	w := wording.In(l)
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
			web.StepTitle(l, &sv, *s.Step)
		}
		var err error
		shownChanges := 0 // of injection's, on the page
		if sv.Replaces, err = replacesNotice(ctx, l, s); err != nil {
			return res, err
		}
		if sv.DefaultConfig, err = defaultConfigNotice(ctx, l, s, tl.Install()); err != nil {
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
			var cs web.ChangeSet
			if want("diff") {
				// Shaped once per row, limit and language, and kept with the memoised row: the rows
				// before the one a toggle adds are not shaped again. The rows hold words (a moved
				// entry, a flag's meaning), so each language has its own (three at most).
				cs = engine.View(s, stepView{kind: "changes", lang: l.Lang(), lim: lim, multi: multi}, func() web.ChangeSet {
					return web.StepChanges(l, changes, s.Documents, lim, maxChanges, multi, s.Index)
				})
			} else {
				cs = web.CountChanges(changes, lim, maxChanges)
			}
			sv.ChangeCount, sv.Changes, sv.Serializer, sv.HiddenChanges = cs.Count, cs.Changes, cs.Serializer, cs.Hidden
			sv.SerializerCount, shownChanges = cs.ShownSerializer, cs.Shown
			sv.Notes = web.DocNotes(l, s.Documents[:min(lim, len(s.Documents))], prev, len(changes) == 0)
		}
		if want("unified") {
			// Of the documents shown only: the raw diff.txt has them all.
			u, err := s.Unified(ctx, lim)
			if err != nil {
				return res, err
			}
			sv.Unified = web.UnifiedLines(u)
			if len(sv.Unified) > maxLines {
				sv.HiddenLines = len(sv.Unified) - maxLines
				sv.Unified = sv.Unified[:maxLines]
			}
			for i, dl := range sv.Unified {
				var cut bool
				if sv.Unified[i].Text, cut = web.CutText(l, dl.Text, web.MaxShownLine); cut {
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
			sv.Body = engine.View(s, stepView{kind: "body", lang: l.Lang(), lim: lim, multi: multi}, func() web.Kept {
				b, err := web.RenderStepBody(i18n.NewContext(context.Background(), l), sv)
				if err != nil {
					return web.Kept{} // rendered with the tab, which reports the error
				}
				return b
			})
		}
		prev = s.Documents
		res.Steps = append(res.Steps, sv)
	}
	sel := tl.Steps[res.Selected]
	shown := sel.Documents[:min(lim, len(sel.Documents))]
	// With a mesh of one's own, its upgrade preview, beside the line that says which mesh injected.
	if !v.state.Settings.Install.Mesh.IsZero() {
		res.UpgradeHref, res.UpgradeLabel = upgradeHref(v.state), l.T("errors.compare.link-upgrade", "Istio", engine.Version().Istio)
	}
	res.DevImage = web.DevImageNote(l, shown)
	if want("yaml") { // the YAML is made from the output's JSON only for the tab that shows it
		res.Output = sel.Output()
		if len(shown) < len(sel.Documents) {
			res.Output = outputOf(shown)
		}
		// Its share first, so that the long lines are looked for in what is shown only.
		var cutYAML bool
		if res.Output, cutYAML = yamlShare(res.Output, lim); cutYAML {
			res.More.CutYAML = byteSizeIn(l, int64(len(res.Output)))
		}
		var cut int
		res.Output, cut = web.CutLines(l, res.Output, web.MaxShownLine)
		res.More.CutLines += cut
	}
	res.More.Shown, res.More.Total = len(shown), len(sel.Documents)
	if len(shown) < len(sel.Documents) {
		res.More.Truncated, res.More.Partial = true, true
	}
	if res.More.CutLines > 0 || res.More.CutYAML != "" {
		res.More.Truncated = true
	}
	if res.More.Truncated {
		mv := v
		mv.limit = lim + defaultLimit
		res.More.Href, res.More.Step = mv.linkWith(enc, v.tab, v.step), defaultLimit
		res.More.MaxChanges, res.More.MaxLines, res.More.MaxLine = maxChanges, maxLines, web.MaxShownLine
		res.More.InjectedHref = "/injected.yaml" + strings.TrimPrefix(v.linkWith(enc, "", res.Selected), "/")
		res.More.DiffHref = "/diff.txt?s=" + url.QueryEscape(enc)
	}
	var findings []engine.Finding
	if res.Selected == len(tl.Steps)-1 {
		findings = tl.Findings
		res.Ignored = w.Ignored(len(tl.Ignored))
	}
	res.Findings = web.FindingViews(l, findings, sel.Documents) // counted on the tab, so always
	res.Banner = web.NewPitfallBanner(w, findings, v.linkWith(enc, "pitfalls", v.step))
	if want("lifecycle") || want("batch") {
		rows, share, err := batchRows(tl, sel.Documents, findings, v.nodes)
		if err != nil {
			return web.Results{}, err
		}
		if want("lifecycle") {
			res.Lifecycles = web.LifecycleViews(l, engine.Lifecycles(shown), rows, v.replicas)
			for i := range res.Lifecycles {
				res.Lifecycles[i].Capacity.Recount = true
				res.Lifecycles[i].Phases = v.present
			}
			res.Compare = compareLinksIn(l, v.state, sel.Documents)
		}
		if want("batch") {
			res.Batch = batchView(l, v, enc, res.Selected, rows, share)
			res.Batch.Rows = res.Batch.Rows[:min(lim, len(res.Batch.Rows))]
		}
	}
	res.DownloadHref = "/download" + strings.TrimPrefix(v.linkWith(enc, "", res.Selected), "/")
	res.WhyState = enc
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
			StatusText: wording.In(l).Status(status)}
		res.Documents = append(res.Documents, dv)
	}
	return res, nil
}

// outputOf is the injected manifest of docs, as engine.Injection.Output writes it.
func outputOf(docs []engine.Document) string {
	return (&engine.Injection{Documents: docs}).Output()
}

// maxWhyTries bounds the steps a why page tries (each an injection with the templates
// observed) to see whether they change the field.
const maxWhyTries = 4

// tries sees, for the steps the chosen leaves' branches suggest (engine.ProvenanceCondition's
// Try), whether adding one to at changes the first leaf under that branch (it goes, or another
// line, value or branch writes it); it answers the playground with the step added for those
// that do, "" for the others.
func (s *server) tries(ctx context.Context, at api.State, doc int, chosen []engine.Provenance) func(input.Step) string {
	seen := map[input.Step]string{}
	for _, p := range chosen {
		for _, c := range p.Conditions {
			if c.Try == nil || len(seen) >= maxWhyTries {
				continue
			}
			if _, ok := seen[*c.Try]; ok {
				continue
			}
			next := at
			next.Steps = append(slices.Clip(at.Steps), *c.Try)
			seen[*c.Try] = ""
			after, err := s.eng().Explain(ctx, []byte(next.Manifest), next.Steps, next.Settings)
			if err != nil {
				continue // a value Istio refuses, or a deadline: no try
			}
			now, _, _ := engine.FieldProvenance(after, doc, p.Path)
			if !sameProvenance(p, now) {
				seen[*c.Try] = view{state: next, step: len(next.Steps)}.permalink()
			}
		}
	}
	return func(st input.Step) string { return seen[st] }
}

// sameProvenance says whether the leaf p is written alike among now (the same leaf after a
// step): there, with the same value, lines and branches taken.
func sameProvenance(p engine.Provenance, now []engine.Provenance) bool {
	for _, q := range now {
		if q.Path != p.Path {
			continue
		}
		taken := func(cs []engine.ProvenanceCondition) []string {
			var out []string
			for _, c := range cs {
				out = append(out, strconv.Itoa(c.Line)+strconv.FormatBool(c.Taken))
			}
			return out
		}
		return q.Value == p.Value && slices.Equal(q.Lines, p.Lines) && slices.Equal(taken(q.Conditions), taken(p.Conditions))
	}
	return false
}

// maxWhyPath bounds the field path a why page takes (and echoes).
const maxWhyPath = 1024

// handleWhy is GET /why?s=STATE&step=K&doc=D&path=P: why field P of document D (the first
// injected one by default) is in the output of STATE's step K (its last by default) — the
// template lines that wrote it, their branches and inputs, or the manifest, or Istio's code. A
// page of its own, so it works without JavaScript; the field diff's why buttons ask for it with
// field=K:D:P (web.WhyField) in place of the three.
func (s *server) handleWhy() http.Handler {
	return s.handler(func(w http.ResponseWriter, r *http.Request) error {
		q := r.URL.Query()
		st, err := decodeState(q.Get("s"))
		if err != nil {
			return err
		}
		step, doc := len(st.Steps), 0
		if f := q.Get("field"); f != "" {
			k, d, p, ok := web.ParseWhyField(f)
			if !ok {
				return httpError{status: http.StatusBadRequest, id: "errors.why.field"}
			}
			q.Set("step", strconv.Itoa(k))
			q.Set("doc", strconv.Itoa(d))
			q.Set("path", p)
		}
		// The timeline's: the fields step changes= changed (with no path asked about).
		ofStep := q.Get("changes") != "" && q.Get("field") == ""
		if ofStep {
			q.Set("step", q.Get("changes"))
		}
		if v := q.Get("step"); v != "" {
			if step, err = strconv.Atoi(v); err != nil || step < 0 || step > len(st.Steps) {
				return httpError{status: http.StatusBadRequest, id: "errors.why.step", args: []any{"Steps", len(st.Steps)}}
			}
		}
		if v := q.Get("doc"); v != "" {
			if doc, err = strconv.Atoi(v); err != nil || doc < 1 {
				return httpError{status: http.StatusBadRequest, id: "errors.why.doc"}
			}
		}
		path := q.Get("path")
		if len(path) > maxWhyPath {
			return httpError{status: http.StatusBadRequest, id: "errors.why.path-long", args: []any{"Max", maxWhyPath}}
		}
		switch {
		case q.Get("upgrade") != "":
			return s.whyUpgrade(w, r, st, max(doc, 1), path)
		case q.Get("ambient") != "":
			return s.whyAmbient(w, r, st, doc, path)
		}
		at := st
		at.Steps = st.Steps[:step]
		if err := s.work(r.Context(), at); err != nil {
			return err
		}
		if v := q.Get("line"); v != "" && q.Get("path") == "" {
			// A line of the YAML view: the field it holds, in the step's output as the view shows it.
			line, err := strconv.Atoi(v)
			if err != nil || line < 1 {
				return httpError{status: http.StatusBadRequest, id: "errors.why.line"}
			}
			tl, err := s.timeline(r.Context(), st) // the page's, which the engine keeps by step
			if err != nil {
				return err
			}
			if doc, path = lineField(tl.Steps[step].Documents, line); path == "" {
				return httpError{status: http.StatusNotFound, id: "errors.why.no-line", args: []any{"Line", line}}
			}
		}
		ofStep = ofStep && path == "" // neither a path nor a line's
		all, err := s.eng().Explain(r.Context(), []byte(at.Manifest), at.Steps, at.Settings)
		if err != nil {
			return err
		}
		var chosen []engine.Provenance
		found := false
		if ofStep {
			if chosen, err = s.stepFields(r.Context(), st, step, doc, all); err != nil {
				return err
			}
			if len(chosen) > 0 {
				doc, found = chosen[0].Doc, true
			}
		} else {
			chosen, doc, found = engine.FieldProvenance(all, doc, path)
		}
		if !found || len(chosen) == 0 {
			return noWhyField(doc, path)
		}
		in, err := s.eng().Install(r.Context(), at.Settings.Install)
		if err != nil {
			return err
		}
		l := i18n.FromContext(r.Context())
		back := view{state: st, step: step}.permalink()
		shown := path
		if ofStep {
			cause := l.T("page.why.injection")
			if step > 0 {
				cause = st.Steps[step-1].Cause()
			}
			shown = l.T("page.why.step", "Step", step, "Cause", cause)
		}
		page := whyPage(l, "page.why.title", shown, doc, back)
		manifest, settings := inputHrefs(back)
		page.Groups, page.Hidden = web.WhyGroups(l, chosen, in.TemplateText, manifest, settings, s.tries(r.Context(), at, doc, chosen))
		return render(w, r, http.StatusOK, web.WhyPageView(page))
	})
}

// whyUpgrade is the why page of a field an upgrade preview of st changes (the preview's query:
// set, chosen, carry): the field on both sides, each side's lines that the other's template has
// not marked.
func (s *server) whyUpgrade(w http.ResponseWriter, r *http.Request, st api.State, doc int, path string) error {
	q := r.URL.Query()
	set, err := upgradeSet(q)
	if err != nil {
		return err
	}
	_, next, err := s.upgradeStates(r, st, carryFrom(q.Get("chosen") != "", q["carry"]), set)
	if err != nil {
		return err
	}
	for _, side := range []api.State{st, next} {
		if err := s.work(r.Context(), side); err != nil {
			return err
		}
	}
	sides, err := upgrade.ExplainSides(r.Context(), s.eng(), []byte(st.Manifest), st.Steps, st.Settings, next.Settings.Install)
	if err != nil {
		return err
	}
	why := sides.Why(doc, "", path)
	if len(why.Old) == 0 && len(why.New) == 0 {
		return noWhyField(doc, path)
	}
	l := i18n.FromContext(r.Context())
	page := whyPage(l, "page.why.upgrade-title", path, doc, "/upgrade?"+url.Values{"s": {q.Get("s")}, "set": set, "chosen": q["chosen"], "carry": q["carry"]}.Encode())
	manifest, settings := inputHrefs(view{state: st, step: -1}.permalink())
	page.Sides = web.NewWhyUpgrade(l, why, upgradeLabels(l, st), sides.Template, manifest, settings)
	return render(w, r, http.StatusOK, web.WhyPageView(page))
}

// whyAmbient is the why page of a field of a sidecar-or-ambient comparison of st (its query:
// nodes, for the way back): the field on the sidecar side (injected with the ambient profile's
// installation, as the comparison injects it), and on the ambient side only what the manifest
// gives.
func (s *server) whyAmbient(w http.ResponseWriter, r *http.Request, st api.State, doc int, path string) error {
	q := r.URL.Query()
	if _, err := nodesParam(q.Get("nodes")); err != nil {
		return err
	}
	side := st
	var err error
	if side.Settings.Install, err = engine.AmbientInstall(st.Settings.Install); err != nil {
		return err
	}
	if err := s.work(r.Context(), side); err != nil {
		return err
	}
	all, err := s.eng().Explain(r.Context(), []byte(side.Manifest), side.Steps, side.Settings)
	if err != nil {
		return err
	}
	chosen, doc, found := engine.FieldProvenance(all, doc, path)
	if !found || len(chosen) == 0 {
		return noWhyField(doc, path)
	}
	in, err := s.eng().Install(r.Context(), side.Settings.Install)
	if err != nil {
		return err
	}
	l := i18n.FromContext(r.Context())
	page := whyPage(l, "page.why.title", path, doc, "/ambient?"+url.Values{"s": {q.Get("s")}, "nodes": q["nodes"]}.Encode())
	manifest, settings := inputHrefs(view{state: st, step: -1}.permalink())
	page.Sides = web.NewWhyAmbient(l, chosen, [2]string{l.T("page.ambient.sidecar"), l.T("page.ambient.ambient")}, in.TemplateText, manifest, settings)
	return render(w, r, http.StatusOK, web.WhyPageView(page))
}

// whyPage is a why page about shown (a field's path, or what a step changed) in document doc,
// its title the catalog's title (with the Path), its way back back.
func whyPage(l *i18n.Localizer, title, shown string, doc int, back string) *web.WhyPage {
	return &web.WhyPage{Version: versionLine(), Path: shown, Doc: doc, Back: back,
		Head: web.Head{Title: l.T(title, "Path", web.Bound(shown, 80))}}
}

// noWhyField is the 404 of a why page whose document has no such field.
func noWhyField(doc int, path string) error {
	return httpError{status: http.StatusNotFound, id: "errors.why.no-field", args: []any{"Doc", doc, "Path", web.Bound(path, 120)}}
}

// inputHrefs are where a why page's inputs are set: the editor and the settings of the
// playground at link.
func inputHrefs(link string) (manifest, settings string) {
	return link + "#manifest", link + "#settings-fields"
}

// lineField is the document and field that line of an injection's output (Injection.Output:
// each document Istio injected, then "---") holds; "" when it holds none.
func lineField(docs []engine.Document, line int) (doc int, path string) {
	first := 1
	for _, d := range docs {
		if d.Error != nil {
			continue
		}
		text := d.Output()
		n := strings.Count(text, "\n")
		if line < first+n {
			return d.Index, yamldoc.PathAt(text, line-first+1)
		}
		first += n + 1 // its lines, and the "---" after them
	}
	return 0, ""
}

// stepFields are the leaves (of all, the explanation at step) of every field step of st added
// or changed in document doc (0: the first it changed), in the order of its changes, each once:
// the timeline's why.
func (s *server) stepFields(ctx context.Context, st api.State, step, doc int, all []engine.Provenance) ([]engine.Provenance, error) {
	tl, err := s.timeline(ctx, st)
	if err != nil {
		return nil, err
	}
	if step >= len(tl.Steps) {
		return nil, nil
	}
	changes, err := tl.Steps[step].Changes(ctx)
	if err != nil {
		return nil, err
	}
	var out []engine.Provenance
	seen := map[string]bool{}
	for _, c := range changes {
		if doc == 0 {
			doc = c.Doc
		}
		if c.Kind == diff.Removed || c.Kind == diff.Moved || c.Doc != doc {
			continue
		}
		under, _, _ := engine.FieldProvenance(all, c.Doc, c.Field())
		for _, p := range under {
			if k := strconv.Itoa(p.Doc) + ":" + p.Path; !seen[k] {
				seen[k] = true
				out = append(out, p)
			}
		}
	}
	return out, nil
}
