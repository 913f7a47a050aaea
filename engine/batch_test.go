package engine

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// labBatch is the lab's eight workloads, one file each, joined as kubectl would take them.
func labBatch(t testing.TB) []byte {
	t.Helper()
	files, _ := filepath.Glob("testdata/batch/*.yaml")
	if len(files) != 8 {
		t.Fatalf("%d batch files, want 8", len(files))
	}
	var parts []string
	for _, f := range files {
		parts = append(parts, string(readFile(t, f)))
	}
	return []byte(strings.Join(parts, "---\n"))
}

func TestBatch(t *testing.T) {
	e := testEngine(t)
	r := mustInject(t, e, labBatch(t), nil, Settings{})
	rows := Batch(r.Documents, r.Findings)
	if len(rows) != 8 {
		t.Fatalf("%d rows", len(rows))
	}
	by := map[string]BatchRow{}
	for _, row := range rows {
		by[row.Name] = row
	}
	check := func(name string, ok bool, what string) {
		t.Helper()
		if !ok {
			t.Errorf("%s: %s; row %+v", name, what, by[name])
		}
	}
	f := by["frontend"]
	check("frontend", f.Result == "injected" && f.Proxy == "containers" && !f.ProxyFirst && f.Requests == "cpu=100m memory=128Mi" && f.Limits == "cpu=2 memory=1Gi", "default injection")
	check("frontend", f.Exclusions == "-i * -x  -b * -d 15090,15021,15020" || strings.Contains(f.Exclusions, "-d 15090,15021,15020"), "istio-init arguments")
	check("frontend", f.ProxyConfig == "{}" && len(f.Pitfalls) == 0, "no proxy config, no pitfalls")
	// The lab's capacity example: 2,000 pods × 100m = 200 cores.
	fl := by["fleet"]
	check("fleet", fl.Capacity.Replicas == 2000 && fl.Capacity.RequestsCPU == "200" && fl.Capacity.RequestsMem == "250Gi" && fl.Capacity.LimitsCPU == "4000", "2,000 × 100m = 200 cores")
	tu := by["tuned"]
	check("tuned", tu.Requests == "cpu=200m memory=256Mi" && tu.Limits == "" && tu.ProxyConfig == `{"concurrency":2}`, "annotated resources, PROXY_CONFIG")
	check("tuned", tu.Capacity.RequestsCPU == "400m" && tu.Capacity.LimitsCPU == "" && strings.Contains(strings.Join(tu.Pitfalls, " "), "resource-annotation-drops-defaults"), "capacity from the injected values, not the chart defaults")
	h := by["held"]
	check("held", h.ProxyFirst && h.PostStart == "pilot-agent wait", "hold: proxy first with postStart")
	db := by["db-client"]
	check("db-client", strings.Contains(db.Exclusions, "-o 3306,6379"), "outbound ports excluded in istio-init")
	nm := by["no-mesh"]
	check("no-mesh", nm.Result == "skipped" && strings.Contains(nm.Reason, "injection disabled") && nm.Proxy == "", "skipped")
	rc := by["report-classic"]
	check("report-classic", rc.Proxy == "containers" && strings.Contains(strings.Join(rc.Pitfalls, " "), "job-classic-sidecar"), "classic Job pitfall")
	rn := by["report-native"]
	check("report-native", rn.Proxy == "initContainers" && rn.PreStop != "" && !strings.Contains(strings.Join(rn.Pitfalls, " "), "job-classic-sidecar"), "native Job")

	golden(t, "batch/rows.md", BatchMarkdown(rows))

	// CSV and JSON round-trip.
	ignore := cmpopts.IgnoreUnexported(Capacity{})
	back, err := ParseBatchCSV(BatchCSV(rows))
	if err != nil {
		t.Fatal(err)
	}
	norm := func(rs []BatchRow) []BatchRow {
		out := append([]BatchRow(nil), rs...)
		for i := range out {
			if out[i].Proxy == "" {
				out[i].Capacity = Capacity{}
			}
		}
		return out
	}
	if d := cmp.Diff(norm(rows), norm(back), ignore); d != "" {
		t.Fatalf("CSV round trip (-want +got)\n%s", d)
	}
	var fromJSON []BatchRow
	if err := json.Unmarshal(BatchJSON(rows), &fromJSON); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(rows, fromJSON, ignore); d != "" {
		t.Fatalf("JSON round trip (-want +got)\n%s", d)
	}
	if _, err := ParseBatchCSV([]byte("a,b\n1,2\n")); err == nil {
		t.Fatal("a foreign CSV was accepted")
	}
}

func TestCapacityFor(t *testing.T) {
	e := testEngine(t)
	r := mustInject(t, e, readFile(t, "testdata/batch/1-frontend.yaml"), nil, Settings{})
	row := Batch(r.Documents, r.Findings)[0]
	c := row.Capacity.For(2000)
	if c.RequestsCPU != "200" || c.LimitsMem != "2000Gi" {
		t.Fatalf("2000 pods: %+v", c)
	}
	if _, err := os.Stat("testdata/batch"); err != nil {
		t.Fatal(err)
	}
}

// TestBatchSpreadsheetSafe: a cell that starts like a formula (=, +, -, @, tab, CR) is written
// with a leading quote in CSV and Markdown, as OWASP recommends against CSV injection, and reads
// back as it was; other cells are written as they are.
func TestBatchSpreadsheetSafe(t *testing.T) {
	rows := []BatchRow{
		{Doc: 1, Kind: "Pod", Name: "a", Result: "error", Reason: `=HYPERLINK("http://evil","x")`, Exclusions: "-i *", ProxyConfig: "+1", PostStart: "@SUM(A1)"},
		{Doc: 2, Kind: "Pod", Name: "b", Result: "injected", Reason: "plain", PreStop: "sleep 5"},
	}
	csvOut := string(BatchCSV(rows))
	md := string(BatchMarkdown(rows))
	for _, want := range []string{`"'=HYPERLINK(""http://evil"",""x"")"`, "'-i *", "'+1", "'@SUM(A1)"} {
		if !strings.Contains(csvOut, want) {
			t.Errorf("CSV lacks %s:\n%s", want, csvOut)
		}
	}
	for _, want := range []string{`'=HYPERLINK("http://evil","x")`, "'-i *", "'@SUM(A1)"} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %s:\n%s", want, md)
		}
	}
	if strings.Contains(csvOut, "'plain") || strings.Contains(csvOut, "'sleep") {
		t.Errorf("an ordinary cell was escaped:\n%s", csvOut)
	}
	back, err := ParseBatchCSV([]byte(csvOut))
	if err != nil {
		t.Fatal(err)
	}
	if back[0].Reason != rows[0].Reason || back[0].Exclusions != "-i *" || back[0].ProxyConfig != "+1" || back[0].PostStart != "@SUM(A1)" {
		t.Fatalf("read back %+v", back[0])
	}
}

// TestBatchTotal: the sidecars of the lab's batch, summed: every injected workload's pods times
// istio-proxy's requests and limits; a DaemonSet (a pod per node) is counted apart; workloads
// without a proxy add nothing.
func TestBatchTotal(t *testing.T) {
	e := testEngine(t)
	perPod := func(name string, replicas int, cpu string) string {
		return fmt.Sprintf("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: %s\nspec:\n  replicas: %d\n  selector:\n    matchLabels: {app: %s}\n  template:\n    metadata:\n      labels: {app: %s}\n      annotations: {sidecar.istio.io/proxyCPU: %q, sidecar.istio.io/proxyMemory: 128Mi}\n    spec:\n      containers:\n      - {name: app, image: nginx}\n", name, replicas, name, name, cpu)
	}
	manifest := perPod("fleet", 2000, "100m") + "---\n" + perPod("small", 3, "250m") + "---\n" +
		"apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: agent\nspec:\n  selector:\n    matchLabels: {app: agent}\n  template:\n    metadata:\n      labels: {app: agent}\n    spec:\n      containers:\n      - {name: app, image: busybox}\n" +
		"---\napiVersion: v1\nkind: Service\nmetadata:\n  name: svc\nspec:\n  ports: [{port: 80}]\n"
	r := mustInject(t, e, []byte(manifest), nil, Settings{})
	got := Total(Batch(r.Documents, r.Findings))
	want := BatchTotal{Workloads: 3, Pods: 2003, PerNode: 1, RequestsCPU: "200750m", RequestsMem: "256384Mi"}
	if got != want {
		t.Fatalf("total %+v, want %+v", got, want)
	}
	if z := Total(nil); z != (BatchTotal{}) {
		t.Fatalf("an empty batch: %+v", z)
	}
}
