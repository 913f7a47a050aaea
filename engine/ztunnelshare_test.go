package engine

import (
	"context"
	"os"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/sidecarlab/sidecarlab/engine/lifecycle"
)

// TestZtunnelShare: ztunnel's requests on the nodes are split among the batch's pods that join
// ambient — a DaemonSet's pods are the nodes — and the shares add up to them; a workload that
// does not join has none; without a ztunnel, or with no pod in ambient, nothing is split. The
// numbers come from the rendered ztunnel (Install.Ztunnel), set to values that do not divide.
func TestZtunnelShare(t *testing.T) {
	e := testEngine(t)
	ctx := context.Background()
	o := InstallOptions{Set: []string{AmbientProfile, "values.ztunnel.resources.requests.cpu=250m", "values.ztunnel.resources.requests.memory=500Mi"}}
	manifest, err := os.ReadFile("testdata/ambient/share.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.Inject(ctx, manifest, nil, Settings{Install: o})
	if err != nil {
		t.Fatal(err)
	}
	in, err := e.Install(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	z, ok := in.Ztunnel()
	if !ok {
		t.Fatal("the ambient profile renders no ztunnel")
	}
	cpu, mem := z.Requests.Cpu().MilliValue(), z.Requests.Memory().Value()
	if cpu != 250 || mem != 500<<20 {
		t.Fatalf("ztunnel's requests %dm %d: the --set did not reach the chart", cpu, mem)
	}
	rows := Batch(r.Documents, nil)
	for i := range rows {
		answer := lifecycle.Yes
		if rows[i].Namespace == "other" {
			answer = lifecycle.No
		}
		if rows[i].Kind == "Service" {
			answer = ""
		}
		rows[i].SetAmbient(answer, "")
	}
	const nodes = 7
	s := NewZtunnelShare(in, rows, nodes)
	if s == nil || s.Nodes != nodes || s.Pods != 3+6+nodes {
		t.Fatalf("share %+v, want %d nodes and %d pods", s, nodes, 3+6+nodes)
	}
	if s.CPU != "1.75" || s.Memory != "3500Mi" {
		t.Errorf("ztunnel on %d nodes: cpu=%s memory=%s, want cpu=1.75 memory=3500Mi", nodes, s.CPU, s.Memory)
	}
	want := map[string]string{
		// 1750m × 3 ÷ 16 = 328.125m; 3500Mi × 3 ÷ 16 = 656.25Mi.
		"web": "cpu=328m memory=656Mi",
		// 1750m × 6 ÷ 16 = 656.25m; 3500Mi × 6 ÷ 16 = 1312.5Mi, rounded half up.
		"api": "cpu=656m memory=1313Mi",
		// 1750m × 7 ÷ 16 = 765.625m; 3500Mi × 7 ÷ 16 = 1531.25Mi.
		"agent":   "cpu=766m memory=1531Mi",
		"outside": "", "web/Service": "",
	}
	var sumCPU, sumMem int64
	for i := range rows {
		s.Fill(&rows[i])
		name := rows[i].Name
		if rows[i].Kind == "Service" {
			name += "/Service"
		}
		if rows[i].ZtunnelShare != want[name] {
			t.Errorf("%s: share %q, want %q", name, rows[i].ZtunnelShare, want[name])
		}
		var c, m string
		readShare(rows[i].ZtunnelShare, &c, &m)
		if c != "" {
			qc, qm := resource.MustParse(c), resource.MustParse(m)
			sumCPU += qc.MilliValue()
			sumMem += qm.Value()
		}
	}
	// The shares add up to ztunnel's requests on every node, within each share's rounding.
	if d := sumCPU - cpu*nodes; d < -3 || d > 3 {
		t.Errorf("the CPU shares add up to %dm, want %dm", sumCPU, cpu*nodes)
	}
	if d := sumMem - mem*nodes; d < -3<<20 || d > 3<<20 {
		t.Errorf("the memory shares add up to %d bytes, want %d", sumMem, mem*nodes)
	}

	for i := range rows {
		rows[i].SetAmbient("no", "")
	}
	if s := NewZtunnelShare(in, rows, nodes); s != nil {
		t.Errorf("no pod in ambient, yet a share: %+v", s)
	}
	plain, err := e.Install(ctx, InstallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rows[0].SetAmbient("yes", "")
	if s := NewZtunnelShare(plain, rows, nodes); s != nil {
		t.Errorf("no ztunnel, yet a share: %+v", s)
	}
	if s := NewZtunnelShare(nil, rows, nodes); s != nil {
		t.Errorf("no installation, yet a share: %+v", s)
	}
	var none *ZtunnelShare
	rows[0].ZtunnelShare = ""
	none.Fill(&rows[0])
	if rows[0].ZtunnelShare != "" {
		t.Errorf("a nil share filled %q", rows[0].ZtunnelShare)
	}
}

// readShare reads "cpu=… memory=…" into cpu and mem.
func readShare(v string, cpu, mem *string) {
	for _, kv := range strings.Fields(v) {
		switch k, q, _ := strings.Cut(kv, "="); k {
		case "cpu":
			*cpu = q
		case "memory":
			*mem = q
		}
	}
}
