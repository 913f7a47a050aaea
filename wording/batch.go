package wording

import (
	"strconv"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/lifecycle"
)

// BatchTotal says what a batch's sidecars ask for in all: the table's last row, the CLI's last
// line ("7 workloads with a sidecar, 2,010 pods — requests cpu=201.2 memory=251.5Gi …"). The
// sums are the engine's quantities, written as the rows' are: no gloss is needed for units the
// rows do not have. When the batch's workloads join ambient, it ends with what ztunnel asks for
// on the nodes, to set against the sidecars' requests.
func (w Words) BatchTotal(t engine.BatchTotal) string {
	// A workload with a pod per node is said apart, after the sums it is not in.
	s := w.loc().T("wording.batch.total", "workloads", w.count("wording.batch.workloads", t.Workloads-t.PerNode), "pods", w.count("wording.batch.pods", t.Pods))
	if t.Pods > 0 {
		s += w.loc().T("wording.batch.sums", "requests", w.orNone(engine.Resources{CPU: t.RequestsCPU, Memory: t.RequestsMem}.String()), "limits", w.orNone(engine.Resources{CPU: t.LimitsCPU, Memory: t.LimitsMem}.String()))
	}
	if t.PerNode > 0 {
		s += w.loc().T("wording.batch.per-node", "n", thousands(t.PerNode))
	}
	if z := t.Ztunnel; z != nil {
		s += w.loc().T("wording.batch.ztunnel", "nodes", w.count("wording.batch.nodes", z.Nodes), "requests", w.orNone(engine.Resources{CPU: z.CPU, Memory: z.Memory}.String()), "pods", w.count("wording.batch.pods", z.Pods))
	}
	return s
}

// statusWords are the message ids of a document's status, as the documents and batch tables
// say it.
var statusWords = map[engine.Status]string{
	engine.StatusInjected:      "results.status.injected",
	engine.StatusSkipped:       "results.status.skipped",
	engine.StatusPassedThrough: "results.status.passed-through",
	engine.StatusError:         "results.status.error",
}

// Status is a document's status in the reader's words.
func (w Words) Status(s engine.Status) string { return w.loc().T(statusWords[s]) }

// BatchCell is a batch row's cell of the column id (engine.BatchColumns) in the reader's words,
// as a person reads the table: a result, a yes or no, "per node". Text is the engine's cell; a
// cell of any other column (names, quantities, Istio's reasons, check ids) is it as it is. The
// downloads are data and keep the engine's cells.
func (w Words) BatchCell(id string, r engine.BatchRow, text string) string {
	switch id {
	case "result":
		return w.Status(engine.Status(r.Result))
	case "proxy-first", "ambient":
		if text != "" {
			return w.Answer(lifecycle.Answer(text))
		}
	case "replicas":
		if r.Proxy != "" && r.Capacity.Replicas == 0 {
			return w.loc().T("results.batch.per-node")
		}
	}
	return text
}

// ZtunnelShareNote says how a row's ztunnel share is made: ztunnel's requests on the nodes,
// split among the batch's pods in ambient, own of them the row's.
func (w Words) ZtunnelShareNote(z *engine.ZtunnelShare, own int) string {
	return w.loc().T("results.batch.ztunnel-share-note", "nodes", w.count("wording.batch.nodes", z.Nodes),
		"requests", w.orNone(engine.Resources{CPU: z.CPU, Memory: z.Memory}.String()), "own", w.count("wording.batch.pods", own), "pods", w.count("wording.batch.pods", z.Pods))
}

// count is n things, by the plural message id, with thousands separators ("1 pod", "2,003
// pods").
func (w Words) count(id string, n int) string { return w.loc().N(id, n, "n", thousands(n)) }

func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func (w Words) orNone(s string) string {
	if s == "" {
		return w.loc().T("wording.batch.none")
	}
	return s
}
