package handlers

import (
	"errors"
	"net/http"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/web"
)

// handleCompare shows two states side by side: /compare?a=STATE&b=STATE&la=LABEL&lb=LABEL.
func (s *server) handleCompare() http.Handler {
	return s.pageHandler(func(w http.ResponseWriter, r *http.Request) error {
		q := r.URL.Query()
		page := &web.ComparePage{Version: versionLine()}
		var last [2][]engine.Document
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
			side.Label = label
			side.Permalink = view{state: st, step: -1}.permalink()
			tl, err := s.timeline(r.Context(), st)
			var ie *engine.InputError
			if errors.As(err, &ie) {
				side.Error = ie.Error()
				continue
			}
			if err != nil {
				return err
			}
			row := tl.Steps[len(tl.Steps)-1]
			last[i] = row.Documents
			side.Output = row.Output()
			side.Lifecycles = lifecycleViews(engine.Lifecycles(row.Documents), engine.Batch(row.Documents, tl.Findings), 0)
		}
		if last[0] != nil && last[1] != nil {
			for _, c := range engine.DiffDocuments(last[0], last[1], "") {
				page.Changes = append(page.Changes, changeView(c, last[1], len(last[1]) > 1))
			}
		}
		return render(w, r, http.StatusOK, web.ComparePageView(page))
	})
}

// handleBatchFile serves the batch table of a view's step as CSV, Markdown or JSON.
func (s *server) handleBatchFile(format string) http.Handler {
	return s.pageHandler(func(w http.ResponseWriter, r *http.Request) error {
		v, tl, err := s.viewTimeline(r)
		if err != nil {
			return err
		}
		step := selectedStep(v.step, len(tl.Steps))
		var findings []engine.Finding
		if step == len(tl.Steps)-1 {
			findings = tl.Findings
		}
		rows := engine.Batch(tl.Steps[step].Documents, findings)
		var body []byte
		switch format {
		case "csv":
			w.Header().Set("Content-Type", "text/csv; charset=utf-8")
			body = engine.BatchCSV(rows)
		case "md":
			w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
			body = engine.BatchMarkdown(rows)
		default:
			w.Header().Set("Content-Type", "application/json")
			body = engine.BatchJSON(rows)
		}
		w.Header().Set("Content-Disposition", `attachment; filename="sidecarlab-batch.`+format+`"`)
		_, err = w.Write(body)
		return err
	})
}
