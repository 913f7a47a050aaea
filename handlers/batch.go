package handlers

import (
	"net/http"
	"strings"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/web"
)

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

// batchView shapes the batch rows as the table, with its download links.
func batchView(v view, enc string, step int, rows []engine.BatchRow) web.BatchView {
	bv := web.BatchView{Columns: engine.BatchColumns()}
	for _, r := range rows {
		bv.Rows = append(bv.Rows, r.Cells())
	}
	q := strings.TrimPrefix(v.linkWith(enc, "", step), "/")
	bv.CSVHref, bv.MarkdownHref, bv.JSONHref = "/batch.csv"+q, "/batch.md"+q, "/batch.json"+q
	return bv
}
