package handlers

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/web"
)

// handleCompare shows two states side by side: /compare?a=STATE&b=STATE&la=LABEL&lb=LABEL.
func (s *server) handleCompare() http.Handler {
	return s.pageHandler(func(w http.ResponseWriter, r *http.Request) error {
		q := r.URL.Query()
		l := i18n.FromContext(r.Context())
		page := &web.ComparePage{Version: versionLine()}
		var last [2][]engine.Document
		var states [2]State
		for i, side := range []*web.CompareSide{&page.A, &page.B} {
			key, label := "a", q.Get("la")
			if i == 1 {
				key, label = "b", q.Get("lb")
			}
			if label == "" {
				label = map[int]string{0: "A", 1: "B"}[i]
			}
			st, err := DecodeState(q.Get(key))
			if err != nil {
				return err
			}
			states[i] = st
			side.Label = compareLabel(l, label)
			side.Permalink = view{state: st, step: -1}.permalink()
			tl, err := s.timeline(r.Context(), st)
			var ie *engine.InputError
			if errors.As(err, &ie) {
				side.Error = inputError(l, ie)
				continue
			}
			if err != nil {
				return err
			}
			row := tl.Steps[len(tl.Steps)-1]
			last[i] = row.Documents
			// A long value's lines are cut, as in the YAML tab: the side's link has everything.
			side.Output, _ = cutLines(l, row.Output(), maxShownLine)
			side.Lifecycles = lifecycleViews(i18n.FromContext(r.Context()), engine.Lifecycles(row.Documents), engine.Batch(row.Documents, tl.Findings), 0)
		}
		page.Lab = s.statics.lab().forCompare(i18n.FromContext(r.Context()), states[0], states[1])
		if last[0] != nil && last[1] != nil {
			for _, c := range engine.DiffDocuments(last[0], last[1], "") {
				page.Changes = append(page.Changes, changeView(i18n.FromContext(r.Context()), c, last[1], len(last[1]) > 1))
			}
		}
		page.Head = compareHead(page)
		return render(w, r, http.StatusOK, web.ComparePageView(page))
	})
}

// compareLinks are compareLinksIn English, for a caller that has no request's language yet.
func compareLinks(st State, docs []engine.Document) []web.CompareLink {
	return compareLinksIn(i18n.For(i18n.Default), st, docs)
}

// compareLinksIn are the one-click comparisons that make sense for a state, labelled in l's
// language: a Job classic vs native; any workload without vs with
// holdApplicationUntilProxyStarts.
func compareLinksIn(l *i18n.Localizer, st State, docs []engine.Document) []web.CompareLink {
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
		out = append(out, web.CompareLink{Label: l.T("errors.compare.link-modes"), Href: compareHref(a, b, "classic sidecar", "native sidecar")})
	}
	if hasWorkload {
		b := st
		b.Steps = append(append([]engine.Step(nil), st.Steps...), engine.Step{Key: "proxy.istio.io/config", Value: "holdApplicationUntilProxyStarts: true"})
		out = append(out, web.CompareLink{Label: l.T("errors.compare.link-hold"), Href: compareHref(st, b, "as is", "with holdApplicationUntilProxyStarts")})
	}
	return out
}

func compareHref(a, b State, la, lb string) string {
	q := url.Values{"a": {EncodeState(a)}, "b": {EncodeState(b)}, "la": {la}, "lb": {lb}}
	return "/compare?" + q.Encode()
}

// compareLabels are the labels compareLinks puts into a comparison's address, which stays
// language-free, and the messages that say them in the reader's language.
var compareLabels = map[string]string{
	"classic sidecar":                      "errors.compare.classic",
	"native sidecar":                       "errors.compare.native",
	"as is":                                "errors.compare.as-is",
	"with holdApplicationUntilProxyStarts": "errors.compare.with-hold",
}

// compareLabel is a side's label as the reader reads it: one of compareLinks' in their language,
// any other (a person's own ?la=) as it is.
func compareLabel(l *i18n.Localizer, label string) string {
	if id, ok := compareLabels[label]; ok {
		return l.T(id, "Option", "holdApplicationUntilProxyStarts")
	}
	return label
}
