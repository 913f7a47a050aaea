package explain

import (
	"strconv"
	"strings"

	"github.com/sidecarlab/sidecarlab/engine"
)

// BatchTotal says what a batch's sidecars ask for in all: the table's last row, the CLI's last
// line ("7 workloads with a sidecar, 2,010 pods — requests cpu=201200m (201.2 cores) …").
func (w Words) BatchTotal(t engine.BatchTotal) string {
	// A workload with a pod per node is said apart, after the sums it is not in.
	s := w.loc().T("explain.batch.total", "workloads", w.count("explain.batch.workloads", t.Workloads-t.PerNode), "pods", w.count("explain.batch.pods", t.Pods))
	if t.Pods > 0 {
		s += w.loc().T("explain.batch.sums", "requests", w.orNone(w.pairText(t.RequestsCPU, t.RequestsMem)), "limits", w.orNone(w.pairText(t.LimitsCPU, t.LimitsMem)))
	}
	if t.PerNode > 0 {
		s += w.loc().T("explain.batch.per-node", "n", thousands(t.PerNode))
	}
	return s
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

func (w Words) pairText(cpu, mem string) string {
	var p []string
	if cpu != "" {
		p = append(p, "cpu="+cpu+w.cores(cpu))
	}
	if mem != "" {
		p = append(p, "memory="+mem)
	}
	return strings.Join(p, " ")
}

func (w Words) orNone(s string) string {
	if s == "" {
		return w.loc().T("explain.batch.none")
	}
	return s
}

// cores says a CPU sum of millicores in cores, the unit capacity is planned in: "201200m" is
// " (201.2 cores)". Whole cores ("200") and sums under a core need no gloss.
func (w Words) cores(cpu string) string {
	m, ok := strings.CutSuffix(cpu, "m")
	if !ok {
		return ""
	}
	n, err := strconv.ParseInt(m, 10, 64)
	if err != nil || n < 1000 {
		return ""
	}
	return w.loc().T("explain.batch.cores", "n", strconv.FormatFloat(float64(n)/1000, 'f', -1, 64))
}
