package handlers

import (
	"context"
	"net/http"
	"slices"
	"strconv"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/web"
)

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
		at := st
		at.Steps = st.Steps[:step]
		if err := s.work(r.Context(), at); err != nil {
			return err
		}
		all, err := s.eng().Explain(r.Context(), []byte(at.Manifest), at.Steps, at.Settings)
		if err != nil {
			return err
		}
		chosen, doc, found := engine.FieldProvenance(all, doc, path)
		if !found || len(chosen) == 0 {
			return httpError{status: http.StatusNotFound, id: "errors.why.no-field", args: []any{"Doc", doc, "Path", web.Bound(path, 120)}}
		}
		in, err := s.eng().Install(r.Context(), at.Settings.Install)
		if err != nil {
			return err
		}
		l := i18n.FromContext(r.Context())
		back := view{state: st, step: step}.permalink()
		page := &web.WhyPage{Version: versionLine(), Path: path, Doc: doc, Back: back}
		page.Head = web.Head{Title: l.T("page.why.title", "Path", web.Bound(path, 80))}
		page.Groups, page.Hidden = web.WhyGroups(l, chosen, in.TemplateText, back+"#manifest", back+"#settings-fields", s.tries(r.Context(), at, doc, chosen))
		return render(w, r, http.StatusOK, web.WhyPageView(page))
	})
}
