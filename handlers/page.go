package handlers

import (
	"cmp"
	"context"
	"encoding/json"
	"net/url"
	"slices"
	"strings"

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
		if len(searchTerms(v.query)) > 0 {
			p.Panel, p.Search.NoMatch = searchedPanel(catalog.DefaultCatalog(), v.query)
		}
	}
	p.Lab = statics.lab().forState(l, st) // swapped after each action: the current step moves
	p.Head = playgroundHead(v, tl)
	p.Active = activeAnnotations(st.Steps)
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

// Bounds on what a page says about itself (web.Head bounds the worded title and description
// the same way): the user's values are capped here too (templ escapes them).
const (
	maxTitle       = 100
	maxDescription = 300
	maxStepValue   = 24
)

const titleSuffix = " — sidecarlab"

// playgroundHead names a view so that links pasted in a chat can be told apart: the workload,
// the annotation steps, the tab and step shown, presenter mode. For example
// "Deployment/checkout · proxyCPU=200m, hold — sidecarlab". The page words it in the reader's
// language (web.HeadView); the values here are the user's, bounded.
func playgroundHead(v view, tl *engine.Timeline) web.Head {
	hv := &web.HeadView{Istio: engine.Version().Istio, Present: v.present, Step: v.step}
	hv.Workload, hv.More = workloadName(tl)
	if hv.Workload != "" {
		hv.Namespace = workloadNamespace(tl)
	}
	for _, s := range v.state.Steps {
		hv.Steps = append(hv.Steps, shortStep(s))
		hv.StepsLong = append(hv.StepsLong, bound(s.String(), maxDescription))
	}
	if v.tab != "" && v.tab != web.DefaultTab {
		for _, t := range web.Tabs() {
			if t.ID == v.tab {
				hv.Tab = t.ID
			}
		}
	}
	return web.Head{View: hv}
}

// compareHead names a comparison by its two sides.
func compareHead(c *web.ComparePage) web.Head {
	return web.Head{View: &web.HeadView{Compare: true, A: c.A.Label, B: c.B.Label}}
}

// workloadName is the first injectable document as kind/name, and how many others there are
// ("" when nothing was read).
func workloadName(tl *engine.Timeline) (string, int) {
	if tl == nil || len(tl.Steps) == 0 {
		return "", 0
	}
	var names []string
	for _, d := range tl.Steps[0].Documents {
		if d.Injectable && d.Kind != "" {
			names = append(names, d.Kind+"/"+cmp.Or(d.Name, "(unnamed)"))
		}
	}
	switch len(names) {
	case 0:
		return "", 0
	case 1:
		return bound(names[0], 60), 0
	default:
		return bound(names[0], 50), len(names) - 1
	}
}

func workloadNamespace(tl *engine.Timeline) string {
	for _, d := range tl.Steps[0].Documents {
		if d.Injectable && d.Kind != "" {
			return bound(d.Namespace, 40)
		}
	}
	return ""
}

// shortStep is a step as a title shows it: the annotation's name without its domain, its value
// cut short; "hold" for proxy.istio.io/config setting holdApplicationUntilProxyStarts; "−name" for
// a removal.
func shortStep(s input.Step) string {
	name := s.Key
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	if s.Remove {
		return "−" + name
	}
	value := strings.Join(strings.Fields(s.Value), " ")
	if s.Key == "proxy.istio.io/config" && strings.Contains(value, "holdApplicationUntilProxyStarts: true") {
		return "hold"
	}
	return name + "=" + bound(value, maxStepValue)
}

// bound cuts s to at most n runes, ending in "…" when cut (web.Bound).
func bound(s string, n int) string { return web.Bound(s, n) }
