package handlers

import (
	"net/http"
	"strconv"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/web"
)

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
		page.Groups, page.Hidden = web.WhyGroups(l, chosen, in.TemplateText, back+"#manifest", back+"#settings-fields")
		return render(w, r, http.StatusOK, web.WhyPageView(page))
	})
}
