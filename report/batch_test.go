package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/diff"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./report -update to create it)", err)
	}
	if string(want) != string(got) {
		t.Errorf("%s differs from golden; run go test ./report -update and review the diff\n%s", path, diff.Unified(string(want), string(got)))
	}
}

// injectFiles injects the manifests of the engine's testdata matching patterns, joined as kubectl
// would take them, with extra documents after them, and returns the batch's rows.
func injectFiles(t *testing.T, extra []string, patterns ...string) []engine.BatchRow {
	t.Helper()
	var parts []string
	for _, p := range patterns {
		files, _ := filepath.Glob(filepath.Join("..", "engine", "testdata", p))
		if len(files) == 0 {
			t.Fatalf("no files match %s", p)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			parts = append(parts, strings.TrimSuffix(string(b), "\n")+"\n")
		}
	}
	r, err := testEngine(t).Inject(t.Context(), []byte(strings.Join(append(parts, extra...), "---\n")), nil, engine.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	return engine.Batch(r.Documents, r.Findings)
}

// labRows are the rows of the lab's eight workloads (the engine's testdata/batch).
func labRows(t *testing.T) []engine.BatchRow {
	t.Helper()
	rows := injectFiles(t, nil, "batch/*.yaml")
	if len(rows) != 8 {
		t.Fatalf("%d rows, want the lab's 8", len(rows))
	}
	return rows
}

// mixedRows are rows of every result a batch meets: the lab's batch and the engine's corpus
// (Lists, multi-document files, kinds Istio does not inject, workloads Istio skips), and
// documents that fail — in Istio's template, in a proxy.istio.io/config Istio cannot parse, and
// in YAML that does not parse.
func mixedRows(t *testing.T) []engine.BatchRow {
	t.Helper()
	bad := func(name, ann string) string {
		return fmt.Sprintf("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: %s\nspec:\n  selector:\n    matchLabels: {app: x}\n  template:\n    metadata:\n      labels: {app: x}\n      annotations: {%s}\n    spec:\n      containers:\n      - {name: app, image: nginx}\n", name, ann)
	}
	extra := []string{bad("bad-cpu", `sidecar.istio.io/proxyCPU: lots`), bad("bad-config", `proxy.istio.io/config: "concurrency: [1"`),
		"apiVersion: v1\nkind: Pod\nmetadata: [1, 2\n"}
	return injectFiles(t, extra, "batch/*.yaml", "corpus/*.yaml")
}

// TestBatchFiles: the lab's batch as a Markdown table (golden), and as CSV and JSON that read
// back as the rows they were written from.
func TestBatchFiles(t *testing.T) {
	rows := labRows(t)
	golden(t, "batch/rows.md", BatchMarkdown(rows))

	// CSV and JSON round-trip.
	ignore := cmpopts.IgnoreUnexported(engine.Capacity{}, engine.BatchRow{})
	back, err := ParseBatchCSV(BatchCSV(rows))
	if err != nil {
		t.Fatal(err)
	}
	norm := func(rs []engine.BatchRow) []engine.BatchRow {
		out := append([]engine.BatchRow(nil), rs...)
		for i := range out {
			if out[i].Proxy == "" {
				out[i].Capacity = engine.Capacity{}
			}
		}
		return out
	}
	if d := cmp.Diff(norm(rows), norm(back), ignore); d != "" {
		t.Fatalf("CSV round trip (-want +got)\n%s", d)
	}
	var fromJSON []engine.BatchRow
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

// TestBatchSpreadsheetSafe: a CSV cell that starts like a formula (=, +, -, @, their full-width
// forms, tab, CR, LF, after any spaces) is written with a leading quote, as OWASP recommends
// against CSV injection, and reads back as it was; so does a cell that is a quote before one.
// Markdown escapes its own markup instead and adds no quote. Other cells are written as they are.
// Before: a leading space and ＝ passed, and the Markdown kept the CSV's quote.
func TestBatchSpreadsheetSafe(t *testing.T) {
	rows := []engine.BatchRow{
		{Doc: 1, Kind: "Pod", Name: "a", Result: "error", Reason: `=HYPERLINK("http://evil","x")`, Exclusions: "-i *", ProxyConfig: "+1", PostStart: "@SUM(A1)"},
		{Doc: 2, Kind: "Pod", Name: "b", Result: "injected", Reason: "plain", PreStop: "sleep 5", Requests: " =1+1", Limits: "＝1+1", ProxyConfig: "'=1"},
		{Doc: 3, Kind: "Pod", Name: "c|d", Result: "injected", Reason: "a\nb `x` *y* <b>", Requests: "＋1", Limits: "\u3000-1", ProxyConfig: "'plain"},
	}
	csvOut := string(BatchCSV(rows))
	md := string(BatchMarkdown(rows))
	for _, want := range []string{`"'=HYPERLINK(""http://evil"",""x"")"`, "'-i *", "'+1", "'@SUM(A1)", "' =1+1", "'＝1+1", "''=1", "'＋1", "'\u3000-1", ",'plain,", ",plain,"} {
		if !strings.Contains(csvOut, want) {
			t.Errorf("CSV lacks %s:\n%s", want, csvOut)
		}
	}
	if strings.Contains(csvOut, "'sleep") || strings.Contains(csvOut, "''plain") {
		t.Errorf("an ordinary cell was escaped:\n%s", csvOut)
	}
	back, err := ParseBatchCSV([]byte(csvOut))
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		if back[i].Reason != rows[i].Reason || back[i].Exclusions != rows[i].Exclusions || back[i].ProxyConfig != rows[i].ProxyConfig ||
			back[i].PostStart != rows[i].PostStart || back[i].Requests != rows[i].Requests || back[i].Limits != rows[i].Limits {
			t.Errorf("row %d read back %+v, want %+v", i+1, back[i], rows[i])
		}
	}
	for _, want := range []string{`| =HYPERLINK("http://evil","x") |`, "| -i \\* |", "| +1 |", "| c\\|d |", "| a b \\`x\\` \\*y\\* \\<b\\> |", "| ＝1+1 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %s:\n%s", want, md)
		}
	}
	if strings.Contains(md, "'") && !strings.Contains(md, "| 'plain |") {
		t.Errorf("the Markdown has a spreadsheet's quote:\n%s", md)
	}
}

// TestBatchColumns: CSV and Markdown written in chosen columns have those columns, in the order
// given, and the CSV reads back into those fields alone; no columns is every column; JSON, unknown
// and repeated columns are refused.
func TestBatchColumns(t *testing.T) {
	rows := []engine.BatchRow{
		{Doc: 1, Kind: "Deployment", Name: "held", Namespace: "lab", Result: "injected", Proxy: "containers", ProxyFirst: true, Requests: "cpu=100m"},
		{Doc: 2, Kind: "Pod", Name: "no-mesh", Result: "skipped", Reason: "off"},
	}
	cols := []string{"kind", "name", "proxy first", "result", "reason"}
	csvOut, err := BatchFile(rows, BatchFormatCSV, cols...)
	if err != nil {
		t.Fatal(err)
	}
	if want := "kind,name,proxy first,result,reason\nDeployment,held,yes,injected,\nPod,no-mesh,,skipped,off\n"; string(csvOut) != want {
		t.Errorf("CSV in chosen columns:\n%s\nwant\n%s", csvOut, want)
	}
	back, err := ParseBatchCSV(csvOut)
	if err != nil {
		t.Fatal(err)
	}
	want := []engine.BatchRow{
		{Kind: "Deployment", Name: "held", Result: "injected", ProxyFirst: true},
		{Kind: "Pod", Name: "no-mesh", Result: "skipped", Reason: "off"},
	}
	if d := cmp.Diff(want, back, cmpopts.IgnoreUnexported(engine.Capacity{}, engine.BatchRow{})); d != "" {
		t.Errorf("read back (-want +got)\n%s", d)
	}
	md, err := BatchFile(rows, BatchFormatMarkdown, cols...)
	if err != nil {
		t.Fatal(err)
	}
	if want := "| kind | name | proxy first | result | reason |\n|---|---|---|---|---|\n| Deployment | held | yes | injected |  |\n| Pod | no-mesh |  | skipped | off |\n"; string(md) != want {
		t.Errorf("Markdown in chosen columns:\n%s\nwant\n%s", md, want)
	}
	for _, f := range []BatchFormat{BatchFormatCSV, BatchFormatMarkdown, BatchFormatJSON} {
		all, err := BatchFile(rows, f)
		if err != nil || string(all) != string(batchBytes(rows, f)) {
			t.Errorf("%s with no columns is not every column: %v", f, err)
		}
	}
	for _, c := range []struct {
		name   string
		format BatchFormat
		cols   []string
	}{
		{"JSON in columns", BatchFormatJSON, []string{"name"}},
		{"an unknown column", BatchFormatCSV, []string{"name", "colour"}},
		{"a column twice", BatchFormatMarkdown, []string{"name", "name"}},
	} {
		if _, err := BatchFile(rows, c.format, c.cols...); err == nil {
			t.Errorf("%s was accepted", c.name)
		}
	}
	if _, err := ParseBatchCSV([]byte("name,name\nx,y\n")); err == nil {
		t.Error("a CSV with a column twice was read")
	}
}

// TestBatchWriter: rows written one at a time are the bytes of the whole batch's JSON array
// (json.MarshalIndent, as the JSON download always was), CSV and Markdown, for no rows, one row
// and many.
func TestBatchWriter(t *testing.T) {
	all := mixedRows(t)
	for _, rows := range [][]engine.BatchRow{{}, all[:1], all} {
		want, err := json.MarshalIndent(rows, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if got := BatchJSON(rows); string(got) != string(want)+"\n" {
			t.Fatalf("%d rows: JSON differs from json.MarshalIndent:\n%s", len(rows), diff.Unified(string(want)+"\n", string(got)))
		}
		for _, f := range []struct {
			format BatchFormat
			whole  func([]engine.BatchRow) []byte
		}{{BatchFormatJSON, BatchJSON}, {BatchFormatCSV, BatchCSV}, {BatchFormatMarkdown, BatchMarkdown}} {
			var buf bytes.Buffer
			w, err := NewBatchWriter(&buf, f.format)
			if err != nil {
				t.Fatal(err)
			}
			for i, row := range rows {
				if err := w.Write(row); err != nil {
					t.Fatal(err)
				}
				if i == 0 && buf.Len() == 0 {
					t.Fatalf("%s: the first row was not written when given", f.format)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if got, want := buf.String(), string(f.whole(rows)); got != want {
				t.Fatalf("%s, %d rows: streamed differs from whole:\n%s", f.format, len(rows), diff.Unified(want, got))
			}
		}
	}
	if _, err := NewBatchWriter(io.Discard, "xlsx"); err == nil {
		t.Fatal("an unknown format was accepted")
	}
}
