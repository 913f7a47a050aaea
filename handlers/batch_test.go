package handlers

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/go-cmp/cmp"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
	"github.com/sidecarlab/sidecarlab/report"
	"github.com/sidecarlab/sidecarlab/web"
)

// batchHeads are the batch table's column headers, in order.
func batchHeads(r response) []string {
	var out []string
	testid(r, "batch").Find("thead th").Each(func(_ int, s *goquery.Selection) {
		out = append(out, s.Text())
	})
	return out
}

const daemonSetYAML = `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
spec:
  selector:
    matchLabels:
      app: agent
  template:
    metadata:
      labels:
        app: agent
    spec:
      containers:
      - name: agent
        image: nginx
`

// TestBatchTable: the batch tab shows the default columns (the workload as the row's header) and
// ends with the totals in words: the lab's batch (2,000 pods of fleet), one with nothing injected,
// one with a DaemonSet, whose pods per node are not in the sums.
func TestBatchTable(t *testing.T) {
	h := newServer(t)
	lab, _ := web.FindPreset("lab-batch")
	r := get(t, h, stateLink(t, api.State{Manifest: lab.Manifest})+"&tab=batch")
	if r.status != http.StatusOK {
		t.Fatalf("lab batch: %d", r.status)
	}
	want := []string{"workload", "result", "proxy", "proxy first", "requests", "limits", "pitfalls", "total requests"}
	if d := cmp.Diff(want, batchHeads(r)); d != "" {
		t.Errorf("default columns (-want +got)\n%s", d)
	}
	rows := testid(r, "batch-row")
	if rows.Length() != 8 {
		t.Fatalf("%d rows", rows.Length())
	}
	rows.Each(func(i int, s *goquery.Selection) {
		if n := s.Find("th, td").Length(); n != len(want) {
			t.Errorf("row %d has %d cells, want %d", i+1, n, len(want))
		}
	})
	noMesh := rows.Eq(5)
	if head := noMesh.Find(`th[scope="row"]`).Text(); !strings.Contains(head, "no-mesh") || !strings.Contains(head, "Pod") {
		t.Errorf("row 6's header %q", head)
	}
	if res := noMesh.Find("td").First().Text(); !strings.Contains(res, "skipped") || !strings.Contains(res, "sidecar injection disabled") {
		t.Errorf("the skipped row's result does not say why: %q", res)
	}
	// The pitfalls column says each check in words (its summary), in the page's language, not
	// its id: the downloads carry the ids.
	pitfalls := slices.Index(want, "pitfalls")
	cell := rows.Eq(2).Find("th, td").Eq(pitfalls).Text()
	if !strings.Contains(cell, "drops the proxy's other default requests and limits") || strings.Contains(cell, "resource-annotation-drops-defaults") {
		t.Errorf("row 3's pitfalls say %q, want the check's summary", cell)
	}
	ja := get(t, h, stateLink(t, api.State{Manifest: lab.Manifest})+"&tab=batch&lang=ja")
	if cell := testid(ja, "batch-row").Eq(2).Find("th, td").Eq(pitfalls).Text(); cell == "" || strings.ContainsAny(cell, "abcdefghijklmnopqrstuvwxyz") && strings.Contains(cell, "-") {
		t.Errorf("row 3's pitfalls in Japanese: %q", cell)
	}
	total := strings.TrimSpace(testid(r, "batch-total").Text())
	// In the rows' units: the fleet's row says cpu=200 memory=250Gi, and its sum with the others'
	// millicores and mebibytes crosses into cores and gibibytes (not 201200m, 257536Mi).
	wantTotal := "total: 7 workloads with a sidecar, 2,010 pods — requests cpu=201.2 memory=251.5Gi; limits cpu=4016 memory=2008Gi"
	if total != wantTotal {
		t.Errorf("totals row\n got %q\nwant %q", total, wantTotal)
	}
	if tf := testid(r, "batch").Find("tfoot [data-testid=batch-total]").Length(); tf != 1 {
		t.Error("the totals row is not the table's footer")
	}
	// With no columns chosen the downloads keep every column, and no totals row.
	csv := get(t, h, testid(r, "batch-csv").AttrOr("href", ""))
	if back, err := report.ParseBatchCSV([]byte(csv.body)); err != nil || len(back) != 8 {
		t.Errorf("csv: %v, %d rows", err, len(back))
	}

	for _, tc := range []struct{ name, manifest, want string }{
		{"nothing injected", "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n", "total: 0 workloads with a sidecar, 0 pods"},
		{"a pod per node", testkit.Deployment + "---\n" + daemonSetYAML,
			"total: 1 workload with a sidecar, 1 pod — requests cpu=100m memory=128Mi; limits cpu=2 memory=1Gi; 1 more with a pod per node (not counted)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := get(t, h, stateLink(t, api.State{Manifest: tc.manifest})+"&tab=batch")
			if got := strings.TrimSpace(testid(r, "batch-total").Text()); got != tc.want {
				t.Errorf("totals row\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestBatchColumnChooser: the chooser is a GET form (no script needed) of checkboxes; what it
// submits shows those columns, the view's links keep them, and the default set (or no choice)
// keeps links short.
func TestBatchColumnChooser(t *testing.T) {
	h := newServer(t)
	link := stateLink(t, api.State{Manifest: testkit.Deployment})
	r := get(t, h, link+"&tab=batch")
	if f := r.doc.Find(`form#batch-cols`); f.AttrOr("method", "") != "get" || f.AttrOr("action", "") != "/" {
		t.Fatal("no GET form for the column chooser")
	}
	// What the form submits: its hidden fields, the empty cols= marker, the boxes ticked.
	q := url.Values{}
	r.doc.Find(`input[form="batch-cols"][type="hidden"]`).Each(func(_ int, s *goquery.Selection) {
		q.Add(s.AttrOr("name", ""), s.AttrOr("value", ""))
	})
	if q.Get("tab") != "batch" || q.Get("s") == "" {
		t.Fatalf("the chooser does not keep the view: %v", q)
	}
	checked := 0
	r.doc.Find(`input[form="batch-cols"][type="checkbox"]`).Each(func(_ int, s *goquery.Selection) {
		if _, ok := s.Attr("checked"); ok {
			checked++
		}
	})
	if checked != 7 || testid(r, "col-doc").Length() != 1 {
		t.Errorf("%d boxes ticked, want the 7 default columns", checked)
	}
	q.Add("cols", "doc")
	q.Add("cols", "namespace")
	q.Add("cols", "no-such-column")
	c := get(t, h, "/?"+q.Encode())
	if d := cmp.Diff([]string{"workload", "doc", "namespace"}, batchHeads(c)); d != "" {
		t.Errorf("chosen columns (-want +got)\n%s", d)
	}
	if _, ok := testid(c, "col-doc").Attr("checked"); !ok {
		t.Error("the chosen column's box is not ticked")
	}
	if _, ok := testid(c, "col-result").Attr("checked"); ok {
		t.Error("a column not chosen is ticked")
	}
	for _, id := range []string{"tab-diff", "batch-csv", "batch-md"} {
		if href := testid(c, id).AttrOr("href", ""); !strings.Contains(href, "cols=doc%2Cnamespace") {
			t.Errorf("%s does not keep the columns: %s", id, href)
		}
	}
	if v := c.doc.Find(`#playground input[name="cols"]`).AttrOr("value", ""); v != "doc,namespace" {
		t.Errorf("the playground form carries cols=%q through its actions", v)
	}
	// The link the page gives keeps the columns.
	perm := c.doc.Find("#playground").AttrOr("data-permalink", "")
	if d := cmp.Diff([]string{"workload", "doc", "namespace"}, batchHeads(get(t, h, perm))); d != "" {
		t.Errorf("the permalink's columns (-want +got)\n%s", d)
	}
	// No box ticked: the workload alone.
	if d := cmp.Diff([]string{"workload"}, batchHeads(get(t, h, link+"&tab=batch&cols="))); d != "" {
		t.Errorf("no column chosen (-want +got)\n%s", d)
	}
	// The default set, chosen: the same table, no cols= in the links.
	d := get(t, h, link+"&tab=batch&cols=result,proxy,proxy-first,requests,limits,pitfalls,total-requests")
	if len(batchHeads(d)) != 8 || strings.Contains(testid(d, "tab-diff").AttrOr("href", ""), "cols=") {
		t.Errorf("the default set: %v, %s", batchHeads(d), testid(d, "tab-diff").AttrOr("href", ""))
	}
	if href := testid(c, "batch-cols-default").AttrOr("href", ""); strings.Contains(href, "cols=") || !strings.Contains(href, "tab=batch") {
		t.Errorf("default columns link %q", href)
	}
}

// TestBatchDownloadColumns: the CSV and Markdown downloads have the columns the reader chose —
// the workload (kind, name) first, the reason with the result, in the table's order — and the
// page says so; the JSON has every field, and its link no cols=. With no choice (the default
// columns) every download has every column, as before there was a choice, and no note.
func TestBatchDownloadColumns(t *testing.T) {
	h := newServer(t)
	link := stateLink(t, api.State{Manifest: testkit.Deployment + "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: s\n"}) + "&tab=batch"
	all := engine.BatchColumnNames()
	for _, c := range []struct {
		name, query string
		cols        []string
		note        bool
	}{
		{"default", "", all, false},
		{"chosen", "&cols=proxy-first,result,total-limits", []string{"kind", "name", "result", "reason", "proxy first", "total limits"}, true},
		{"none chosen", "&cols=", []string{"kind", "name"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := get(t, h, link+c.query)
			if got := testid(r, "batch-files-note").Length() == 1; got != c.note {
				t.Errorf("note shown: %v, want %v", got, c.note)
			}
			csv := get(t, h, testid(r, "batch-csv").AttrOr("href", ""))
			head, _, _ := strings.Cut(csv.body, "\n")
			if d := cmp.Diff(strings.Join(c.cols, ","), head); d != "" {
				t.Errorf("CSV header (-want +got)\n%s", d)
			}
			back, err := report.ParseBatchCSV([]byte(csv.body))
			if err != nil || len(back) != 2 || back[0].Name != "web" || back[1].Kind != "Service" {
				t.Errorf("CSV: %v %+v", err, back)
			}
			md := get(t, h, testid(r, "batch-md").AttrOr("href", ""))
			if want := "| " + strings.Join(c.cols, " | ") + " |\n"; !strings.HasPrefix(md.body, want) || strings.Count(md.body, "\n") != 4 {
				t.Errorf("Markdown does not start with %q:\n%s", want, md.body)
			}
			href := testid(r, "batch-json").AttrOr("href", "")
			if strings.Contains(href, "cols=") {
				t.Errorf("the JSON link carries columns it does not follow: %s", href)
			}
			var rows []engine.BatchRow
			if err := json.Unmarshal([]byte(get(t, h, href).body), &rows); err != nil || len(rows) != 2 || rows[0].Requests == "" || rows[0].Capacity.LimitsMem == "" {
				t.Errorf("JSON without every field: %v %+v", err, rows)
			}
		})
	}
}

// TestBatchProxyFirstByDefault: the default columns tell a workload whose proxy starts first
// (holdApplicationUntilProxyStarts) from the same workload without the hold — by the proxy first
// column, the only default cell where the two differ.
func TestBatchProxyFirstByDefault(t *testing.T) {
	h := newServer(t)
	held := strings.Replace(strings.Replace(testkit.Deployment, "  name: web\nspec", "  name: held\nspec", 1),
		"    metadata:\n      labels:", "    metadata:\n      annotations:\n        proxy.istio.io/config: \"holdApplicationUntilProxyStarts: true\"\n      labels:", 1)
	r := get(t, h, stateLink(t, api.State{Manifest: testkit.Deployment + "---\n" + held})+"&tab=batch")
	heads := batchHeads(r)
	first := slices.Index(heads, "proxy first") - 1 // the row's cells come after its header
	if first < 0 {
		t.Fatalf("no proxy first column by default: %v", heads)
	}
	var cells [2][]string
	testid(r, "batch-row").Each(func(i int, s *goquery.Selection) {
		s.Find("td").Each(func(_ int, td *goquery.Selection) {
			cells[i] = append(cells[i], strings.TrimSpace(td.Text()))
		})
	})
	if cells[0][first] != "no" || cells[1][first] != "yes" {
		t.Fatalf("proxy first: web %q, held %q", cells[0][first], cells[1][first])
	}
	for i := range cells[0] {
		if i != first && cells[0][i] != cells[1][i] {
			t.Errorf("the rows differ under %q too (%q, %q): pick workloads alike but for the hold", heads[i+1], cells[0][i], cells[1][i])
		}
	}
}
