package handlers

import (
	"cmp"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/sidecarlab/sidecarlab/engine/lifecycle"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/ambient"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/report"
	"github.com/sidecarlab/sidecarlab/web"
	"github.com/sidecarlab/sidecarlab/wording"
)

// handleBatchFile serves the batch table of a view's step as CSV, Markdown or JSON. The files
// keep the engine's English column names and values whatever the page's language: they are data,
// read by programs and diffed between runs. CSV and Markdown have the columns the link chose
// (fileColumns), every column when it chose none; JSON has every field of every row, the shape
// the API gives, whatever the table shows.
func (s *server) handleBatchFile(format string) http.Handler {
	return s.handler(func(w http.ResponseWriter, r *http.Request) error {
		v, tl, err := s.viewTimeline(r)
		if err != nil {
			return err
		}
		step := selectedStep(v.step, len(tl.Steps))
		var findings []engine.Finding
		if step == len(tl.Steps)-1 {
			findings = tl.Findings
		}
		rows, _, err := batchRows(tl, tl.Steps[step].Documents, findings, v.nodes)
		if err != nil {
			return err
		}
		var body []byte
		switch format {
		case "csv":
			w.Header().Set("Content-Type", "text/csv; charset=utf-8")
			body, err = report.BatchFile(rows, report.BatchFormatCSV, fileColumns(v.cols)...)
		case "md":
			w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
			body, err = report.BatchFile(rows, report.BatchFormatMarkdown, fileColumns(v.cols)...)
		default:
			w.Header().Set("Content-Type", "application/json")
			body = report.BatchJSON(rows)
		}
		if err != nil {
			return err
		}
		w.Header().Set("Content-Disposition", `attachment; filename="sidecarlab-batch.`+format+`"`)
		_, err = w.Write(body)
		return err
	})
}

// fileColumns are the engine's columns a download has for a link's chosen columns (readCols;
// nil: every column, for a link that chose none): the table's, as the page shows them — the
// workload first (kind and name), and the reason with the result, which the page shows under it.
func fileColumns(cols []string) []string {
	if cols == nil {
		return nil
	}
	out := []string{"kind", "name"}
	for _, c := range batchColumns {
		if slices.Contains(cols, c.ID) {
			out = append(out, c.Name)
			if c.ID == "result" {
				out = append(out, "reason")
			}
		}
	}
	return out
}

// pageColumn is a column the page's batch table can show (engine.BatchColumn: its ID in a link's
// cols=, its Name in data-col and the downloads) and whether it is shown when the link chooses
// none. The workload (kind and name) is always the first column, a row header; the result
// column carries the reason with it, since a "skipped" is read with its why: those three are
// no choice.
type pageColumn struct {
	engine.BatchColumn
	def bool
}

// batchDefaults are the columns shown when a link chooses none: what the lab's batch is about —
// did it inject, where the proxy sits and whether it starts first (the hold, the lab's point:
// without the column a held workload reads like the others), what one sidecar asks for, what
// fired, and what the pods add up to (the replicas are in the totals row; their own column would
// not fit) — so that at 1440 px they fit beside the editor. The CSV and Markdown downloads have
// the chosen columns (fileColumns), every column when none were chosen.
var batchDefaults = []string{"result", "proxy", "proxy-first", "requests", "limits", "pitfalls", "total-requests"}

// batchColumns are the table's optional columns, in the table's order: the engine's, but for
// the workload and the reason.
var batchColumns = func() []pageColumn {
	var out []pageColumn
	for _, c := range engine.BatchColumns() {
		if c.ID != "kind" && c.ID != "name" && c.ID != "reason" {
			out = append(out, pageColumn{BatchColumn: c, def: slices.Contains(batchDefaults, c.ID)})
		}
	}
	return out
}()

// readCols reads a link's cols= (repeated, or comma-separated) as batchColumns' ids in the
// table's order; unknown ids are dropped (a link from a later version still opens). The default
// set reads as nil, so that links to it stay short.
func readCols(vals []string) []string {
	want := map[string]bool{}
	for _, v := range vals {
		for _, id := range strings.Split(v, ",") {
			want[strings.TrimSpace(id)] = true
		}
	}
	out := []string{}
	same := true
	for _, c := range batchColumns {
		if want[c.ID] {
			out = append(out, c.ID)
		}
		same = same && want[c.ID] == c.def
	}
	if same {
		return nil
	}
	return out
}

// batchView shapes the batch rows as the table — the chosen columns, a totals row — with its
// download links and the column chooser, in l's language: the words the engine's cells say
// (a result, yes or no, per node) are worded; names, quantities and Istio's reasons are not.
func batchView(l *i18n.Localizer, v view, enc string, step int, rows []engine.BatchRow, share *engine.ZtunnelShare) web.BatchView {
	chosen := map[string]bool{}
	for _, id := range v.cols {
		chosen[id] = true
	}
	bv := web.BatchView{Chosen: v.cols != nil}
	var cols []pageColumn
	for _, c := range batchColumns {
		on := c.def
		if v.cols != nil {
			on = chosen[c.ID]
		}
		bv.Choices = append(bv.Choices, web.BatchChoice{ID: c.ID, Column: c.Name, Shown: on})
		if on {
			cols = append(cols, c)
			bv.Columns = append(bv.Columns, c.Name)
		}
	}
	for _, r := range rows {
		row := web.BatchRowView{Doc: r.Doc, Name: r.Name, Kind: r.Kind}
		for _, c := range cols {
			cell := web.BatchCell{Text: wording.In(l).BatchCell(c.ID, r, c.Cell(r))}
			switch c.ID {
			case "result":
				cell.Note, cell.NoteIstio = r.Reason, r.Reason != ""
				if engine.Status(r.Result) == engine.StatusPassedThrough {
					cell.Note, cell.NoteIstio = l.T("results.status.passed-through-reason"), false
				}
			case "pitfalls":
				// Each check by its summary in the reader's words (the downloads carry the ids).
				if ids := strings.Fields(cell.Text); len(ids) > 0 {
					words := make([]string, len(ids))
					for i, id := range ids {
						if words[i] = wording.In(l).Summary(engine.CheckID(id)); words[i] == "" {
							words[i] = id
						}
					}
					cell.Text, cell.Prose = strings.Join(words, "; "), true
				}
			case "ambient":
				if lifecycle.Answer(r.Ambient) == lifecycle.No {
					// Why not, in the Cluster view's words.
					cell.Note = l.T(ambient.Rule(r.AmbientRule).MessageID(), "Namespace", r.Namespace)
				}
			case "ztunnel-share":
				if cell.Text != "" {
					cell.Note = wording.In(l).ZtunnelShareNote(share, share.PodsOf(r))
				}
			}
			// A cell that carries a long value (PROXY_CONFIG) is a preview: the value is shown whole
			// in the timeline, and the downloads have every cell whole.
			cell.Text, _ = web.CutText(l, cell.Text, web.MaxShownLine)
			row.Cells = append(row.Cells, cell)
		}
		bv.Rows = append(bv.Rows, row)
	}
	total := engine.Total(rows)
	total.Ztunnel = share
	bv.Total = wording.In(l).BatchTotal(total)
	// CSV and Markdown carry the chosen columns; JSON has every field, so its link does not.
	q := strings.TrimPrefix(v.linkWith(enc, "", step), "/")
	jv := v
	jv.cols = nil
	bv.CSVHref, bv.MarkdownHref = "/batch.csv"+q, "/batch.md"+q
	bv.JSONHref = "/batch.json" + strings.TrimPrefix(jv.linkWith(enc, "", step), "/")
	// The chooser's form is a GET of this view on the batch tab: its query as hidden fields,
	// the columns as checkboxes, and the node count as a field of its own when the table has a
	// ztunnel share. "Default columns" keeps the node count.
	cv := v
	cv.cols = nil
	bv.DefaultHref = cv.linkWith(enc, "batch", step)
	if share != nil {
		bv.Nodes, bv.MaxNodes = share.Nodes, engine.MaxAmbientNodes
		cv.nodes = 0
	}
	u, _ := url.Parse(cv.linkWith(enc, "batch", step))
	for _, k := range slices.Sorted(maps.Keys(u.Query())) {
		bv.Keep = append(bv.Keep, web.Hidden{Name: k, Value: u.Query().Get(k)})
	}
	return bv
}

// batchNodes reads a view's nodes= (the batch table's node count; the CLI's batch --nodes): ""
// is 0, the default; else a whole number from 1 to engine.MaxAmbientNodes.
func batchNodes(v string) (int, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 1 || n > engine.MaxAmbientNodes {
		return 0, httpError{status: http.StatusBadRequest, id: "errors.form.nodes", args: []any{"Param", "nodes", "Max", engine.MaxAmbientNodes}}
	}
	return n, nil
}

// batchRows are the batch rows of a row of the timeline, with their ambient columns: whether each
// workload's pods, created without a sidecar in the state's namespace, join ambient under the
// installation's CNI agent (package ambient; empty when ambient is not in play), and then their
// share of the installation's ztunnel on nodes nodes (0: engine.DefaultAmbientNodes, the /ambient
// page's default node count).
func batchRows(tl *engine.Timeline, docs []engine.Document, findings []engine.Finding, nodes int) ([]engine.BatchRow, *engine.ZtunnelShare, error) {
	rows := engine.Batch(docs, findings)
	cni, err := ambient.InstallCNI(tl.Install())
	if err != nil {
		return nil, nil, err
	}
	cni.FillBatch(rows, tl.Settings.Namespace, engine.NamespaceLabels(docs))
	share := engine.NewZtunnelShare(tl.Install(), rows, cmp.Or(nodes, engine.DefaultAmbientNodes))
	for i := range rows {
		share.Fill(&rows[i])
	}
	return rows, share, nil
}
