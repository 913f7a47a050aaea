package handlers

import (
	"context"
	"encoding/json"
	"net/url"
	"slices"

	"github.com/a-h/templ"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/catalog"
	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/permalink"
	"github.com/sidecarlab/sidecarlab/web"
	"github.com/sidecarlab/sidecarlab/wording"
)

// modeLabel is a mode's message id (results.mode.kube-inject, …): its value stays as it is.
func modeLabel(m engine.Mode) string { return "results.mode." + string(m) }

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
func buildPage(ctx context.Context, l *i18n.Localizer, v view, statics pageStatics, tl *engine.Timeline, reqErr *input.Error, full bool, also ...string) (*web.Page, error) {
	w := wording.In(l)
	st := v.state
	enc := permalink.Encode(st)
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
		if len(web.SearchTerms(v.query)) > 0 {
			p.Panel, p.Search.NoMatch = searchedPanel(catalog.DefaultCatalog(), v.query)
		}
	}
	p.Lab = statics.lab().forState(l, st) // swapped after each action: the current step moves
	p.Head = web.PlaygroundHead(tl, v.state.Steps, v.step, v.tab, v.present)
	p.Active = web.ActiveAnnotations(st.Steps)
	for i := range p.Active {
		// The whole value is in the timeline; the list shows a preview.
		p.Active[i].Value, _ = web.CutText(l, p.Active[i].Value, web.MaxTitleValue)
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
	pv.present, pv.step, pv.tab = true, firstSlide(st), slideTab(v.tab)
	p.PresentHref = pv.linkWith(enc, pv.tab, pv.step)
	p.EmbedHref = "/embed?s=" + url.QueryEscape(enc)
	if v.present && tl != nil {
		n := len(tl.Steps)
		cur := selectedStep(v.step, n)
		// The slides: each step's diff, then the lifecycle of the last step (the lifecycle tab).
		// A state with no annotation step is presented too: its workload as injected (step 0),
		// then its lifecycle.
		p.Slides = web.Slides{Current: cur, Count: n, Lifecycle: v.tab == "lifecycle"}
		switch deck := slideTab(v.tab); {
		case deck != "diff":
			// The batch table's and the Cluster tab's decks: the tab at each step.
			if cur < n-1 {
				p.Slides.NextHref = v.linkWith(enc, deck, cur+1)
			}
		case p.Slides.Lifecycle:
			p.Slides.PrevHref = v.linkWith(enc, "diff", n-1)
		case cur < n-1:
			p.Slides.NextHref = v.linkWith(enc, "diff", cur+1)
		default:
			p.Slides.NextHref = v.linkWith(enc, "lifecycle", n-1)
		}
		if !p.Slides.Lifecycle && cur > 0 {
			p.Slides.PrevHref = v.linkWith(enc, slideTab(v.tab), cur-1)
		}
		ev := v
		ev.present = false
		p.Slides.ExitHref = ev.linkWith(enc, v.tab, -1)
	}
	if reqErr != nil && reqErr.Line > 0 && reqErr.Field == "manifest" {
		reason := w.Input(reqErr).Reason
		p.Form.ErrorLine, p.Form.ErrorColumn, p.Form.ErrorMsg, p.Form.ErrorText = reqErr.Line, reqErr.Column, reason, w.At(0, reqErr.Line, reqErr.Column, "", reason)
	}
	if tl != nil {
		for _, d := range tl.Steps[p.Results.Selected].Documents {
			if d.Error != nil && d.Error.Line > 0 {
				// The marker sits on the line: it says the document and the words, once; the
				// text under the editor says the line too.
				reason := w.Input(d.Error).Reason
				p.Form.ErrorLine, p.Form.ErrorColumn, p.Form.ErrorMsg = d.Error.Line, d.Error.Column, w.At(d.Index, 0, 0, "", reason)
				p.Form.ErrorText = w.At(d.Index, d.Error.Line, d.Error.Column, "", reason)
				break
			}
		}
	}
	p.Form.MarksJSON = "[]"
	if tl != nil && p.Results.Selected == len(tl.Steps)-1 {
		// The marks are the last step's findings, as the Pitfalls tab's (and its count).
		last := tl.Steps[len(tl.Steps)-1]
		p.Form.Marks = web.FindingMarks(w, tl.Findings, last.Documents, st.Steps)
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

// slideTab is the deck presenter mode makes of a view on tab: the batch table's and the Cluster
// tab's are that tab at each step; every other tab's is the steps' diffs, then the lifecycle.
func slideTab(tab string) string {
	if tab == "batch" || tab == "cluster" {
		return tab
	}
	return "diff"
}
