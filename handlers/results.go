package handlers

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/diff"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/web"
	"github.com/sidecarlab/sidecarlab/wording"
)

// buildResults shapes the results in l's language. want says whether a tab's content will be
// rendered: the batch rows, lifecycles and compare links are made only for a page that shows them.
// stepView is the key of a view the page keeps with a memoised row (engine.View): what it is
// (the rows of changes, the step's HTML) and what it depends on — the language, the documents
// shown, whether the manifest has several.
type stepView struct {
	kind, lang string
	lim        int
	multi      bool
}

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
			stepTitle(l, &sv, *s.Step)
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
			var cs changeSet
			if want("diff") {
				// Shaped once per row, limit and language, and kept with the memoised row: the rows
				// before the one a toggle adds are not shaped again. The rows hold words (a moved
				// entry, a flag's meaning), so each language has its own (three at most).
				cs = engine.View(s, stepView{kind: "changes", lang: l.Lang(), lim: lim, multi: multi}, func() changeSet {
					return stepChanges(l, changes, s.Documents, lim, maxChanges, multi, s.Index)
				})
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
	res.DevImage = devImageNote(l, shown)
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
			}
			res.Compare = compareLinksIn(l, v.state, sel.Documents)
		}
		if want("batch") {
			res.Batch = batchView(l, v, enc, res.Selected, rows, share)
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
			StatusText: wording.In(l).Status(status)}
		res.Documents = append(res.Documents, dv)
	}
	return res, nil
}

// stepTitle sets a step's title and what its changes say caused them: "key=value", or "remove
// key". A value over web.MaxTitleValue bytes is a preview in the title, and the whole of it is the
// step's Value, which the timeline shows; its changes name the step instead of repeating it.
func stepTitle(l *i18n.Localizer, sv *web.StepView, st input.Step) {
	if st.Remove {
		sv.Cause, sv.Title = st.String(), l.T("results.step.remove", "Key", st.Key)
		return
	}
	preview, cut := web.CutText(l, st.Value, web.MaxTitleValue)
	sv.Title, sv.Cause = st.Key+"="+preview, st.Key+"="+preview
	if cut {
		sv.Cause, sv.Value = l.T("results.step.cause-ref", "Key", st.Key, "Step", sv.Index), st.Value
	}
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
func stepChanges(l *i18n.Localizer, changes []diff.Change, docs []engine.Document, lim, maxChanges int, multi bool, step int) changeSet {
	return selectChanges(changes, lim, maxChanges, func(cs *changeSet, c diff.Change) {
		if c.Serializer {
			cs.serializer = append(cs.serializer, changeView(l, c, docs, multi, step))
		} else {
			cs.changes = append(cs.changes, changeView(l, c, docs, multi, step))
		}
	})
}

// countChanges is the changeSet's counts alone, without its rows: what a step's heading says on
// a tab that does not list the changes.
func countChanges(changes []diff.Change, lim, maxChanges int) changeSet {
	return selectChanges(changes, lim, maxChanges, func(*changeSet, diff.Change) {})
}

// selectChanges counts changes as the diff tab shows them and calls shown for each it shows.
func selectChanges(changes []diff.Change, lim, maxChanges int, shown func(*changeSet, diff.Change)) changeSet {
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
var changeKinds = map[diff.ChangeKind]string{
	diff.Added: "results.diff.kind.added", diff.Removed: "results.diff.kind.removed",
	diff.Changed: "results.diff.kind.changed", diff.Moved: "results.diff.kind.moved",
}

// changeView is one change as the diff shows it, worded in l's language: a change of row step
// of the timeline, or, when step is negative, of the one diff of the compare page.
func changeView(l *i18n.Localizer, c diff.Change, docs []engine.Document, multi bool, step int) web.ChangeView {
	cv := web.ChangeView{Kind: string(c.Kind), KindText: l.T(changeKinds[c.Kind]), Path: c.Path, DocIndex: c.Doc}
	cv.Anchor, cv.LinkLabel = deepLink(l, c, multi, step)
	if multi && c.Doc >= 1 && c.Doc <= len(docs) {
		d := docs[c.Doc-1]
		cv.Doc = l.T("results.diff.doc", "Doc", c.Doc, "Kind", d.Kind, "Name", d.Name)
	}
	show := func(v any, omitted int) web.Value { return withSummary(l, web.ShowValueIn(l, v, omitted)) }
	if c.Flag != "" {
		// One flag of istio-iptables' command line: shown as written, with what it means.
		cv.Flag, cv.FlagMeaning = c.Flag, wording.In(l).IptablesFlag(c.FlagName)
		show = func(v any, omitted int) web.Value {
			if omitted > 0 {
				return withSummary(l, web.ShowValueIn(l, v, omitted))
			}
			return web.FlagValue(c.Flag, v)
		}
	}
	switch c.Kind {
	case diff.Added:
		cv.Sign, cv.New = "+", show(c.New, c.NewBytes)
	case diff.Removed:
		cv.Sign, cv.Old = "−", show(c.Old, c.OldBytes)
	case diff.Changed:
		cv.Sign, cv.Old, cv.New = "~", show(c.Old, c.OldBytes), show(c.New, c.NewBytes)
	case diff.Moved:
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
func deepLink(l *i18n.Localizer, c diff.Change, multi bool, step int) (anchor, label string) {
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
// devImageNote says whose the embedded Istio's development image is (engine.EmbeddedProxyImage)
// when one of docs injects it, as the results and each side of a comparison say it; "" otherwise.
func devImageNote(l *i18n.Localizer, docs []engine.Document) string {
	img := engine.EmbeddedProxyImage()
	if !slices.ContainsFunc(docs, func(d engine.Document) bool { return d.InjectsImage(img) }) {
		return ""
	}
	return l.T("page.results.devImage", "Image", img, "Embedded", engine.Version().Istio)
}

// failedNote is the note on a document that failed, by the kind of its error (wording.ErrorKind).
var failedNote = map[string]string{
	wording.KindYAML: "results.note.failed-yaml", wording.KindSchema: "results.note.failed-schema", wording.KindIstio: "results.note.failed",
}

func docNotes(l *i18n.Localizer, docs, prev []engine.Document, empty bool) []web.DocNote {
	var out []web.DocNote
	for i, d := range docs {
		status, reason := d.Status()
		n := web.DocNote{Doc: d.Index, Status: string(status)}
		switch status {
		case engine.StatusError:
			// Said once, in words, with the line; the parser's own text behind a toggle.
			words := wording.In(l).Input(d.Error)
			n.Text, n.Detail, n.Parser = l.T(failedNote[wording.ErrorKind(d.Error)], "Doc", d.Index), words.Summary, words.Details
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
