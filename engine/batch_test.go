package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/sidecarlab/sidecarlab/engine/input"
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
	// 200.75 cores and 250.375Gi, in the units of the fleet's own row (cpu=200 memory=250Gi),
	// where Quantity.String would say 200750m and 256384Mi.
	want := BatchTotal{Workloads: 3, Pods: 2003, PerNode: 1, RequestsCPU: "200.75", RequestsMem: "250.375Gi"}
	if got != want {
		t.Fatalf("total %+v, want %+v", got, want)
	}
	if z := Total(nil); z != (BatchTotal{}) {
		t.Fatalf("an empty batch: %+v", z)
	}
}

// TestQuantityText: the computed quantities (a row's pods × the sidecar's, the totals) are
// written in the largest unit they reach and are exact in to three decimals, so that a sum
// crossing a unit boundary reads like the rows it sums; each reads back as the Kubernetes
// quantity it was.
func TestQuantityText(t *testing.T) {
	const (
		ki = int64(1) << 10
		mi = int64(1) << 20
		gi = int64(1) << 30
		ti = int64(1) << 40
	)
	for _, c := range []struct {
		name string
		cpu  bool
		n    int64
		want string
	}{
		{"millicores", true, 300, "300m"},
		{"cores", true, 200_000, "200"},
		{"millicores summed past a core", true, 3*300 + 300, "1.2"},
		{"the lab's batch: 200 cores and 1.2", true, 201_200, "201.2"},
		{"a thousandth of a core", true, 1_001, "1.001"},
		{"no CPU", true, 0, "0m"},
		{"bytes", false, 512, "512"},
		{"mebibytes", false, 384 * mi, "384Mi"},
		{"gibibytes", false, 250 * gi, "250Gi"},
		{"mebibytes summed past a gibibyte", false, 3 * 512 * mi, "1.5Gi"},
		{"the lab's batch: 250Gi and 1.5Gi", false, 257_536 * mi, "251.5Gi"},
		{"a gibibyte and an eighth", false, gi + 128*mi, "1.125Gi"},
		{"gibibytes past a tebibyte, not exact in it", false, 2000 * gi, "2000Gi"},
		{"gibibytes summed to tebibytes", false, 1536 * gi, "1.5Ti"},
		{"not exact in three decimals of a gibibyte", false, gi + 100*mi, "1124Mi"},
		{"a kibibyte and one byte", false, ki + 1, "1025"},
		{"a tebibyte less a byte", false, ti - 1, "1099511627775"},
		{"exbibytes", false, 3 << 60, "3Ei"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := memText(c.n)
			if c.cpu {
				got = cpuText(c.n)
			}
			if got != c.want {
				t.Fatalf("got %q, want %q", got, c.want)
			}
			q, err := resource.ParseQuantity(got)
			if err != nil {
				t.Fatalf("%q is not a quantity: %v", got, err)
			}
			v := q.Value()
			if c.cpu {
				v = q.MilliValue()
			}
			if v != c.n {
				t.Errorf("%q reads back as %d, want %d", got, v, c.n)
			}
		})
	}
}

// mixedBatch is a manifest of every kind of document a batch meets: our whole corpus (Lists,
// multi-document files, kinds Istio does not inject, workloads Istio skips), the lab's batch, and
// documents that fail — in Istio's template, in a proxy.istio.io/config Istio cannot parse, and
// in YAML that does not parse.
func mixedBatch(t testing.TB) []byte {
	t.Helper()
	files, _ := filepath.Glob("testdata/corpus/*.yaml")
	parts := []string{string(labBatch(t))}
	for _, f := range files {
		parts = append(parts, strings.TrimSuffix(string(readFile(t, f)), "\n")+"\n")
	}
	bad := func(name, ann string) string {
		return fmt.Sprintf("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: %s\nspec:\n  selector:\n    matchLabels: {app: x}\n  template:\n    metadata:\n      labels: {app: x}\n      annotations: {%s}\n    spec:\n      containers:\n      - {name: app, image: nginx}\n", name, ann)
	}
	parts = append(parts, bad("bad-cpu", `sidecar.istio.io/proxyCPU: lots`), bad("bad-config", `proxy.istio.io/config: "concurrency: [1"`),
		"apiVersion: v1\nkind: Pod\nmetadata: [1, 2\n", string(fleet(30)))
	return []byte(strings.Join(parts, "---\n"))
}

// rowsEqual compares rows with their per-pod capacity, quantities by value.
var rowsEqual = []cmp.Option{cmp.AllowUnexported(Capacity{}, BatchRow{}), cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })}

// streamAll runs a batch stream to the end and returns what it emitted.
func streamAll(t *testing.T, s *BatchStream) ([]BatchRow, []*input.Error) {
	t.Helper()
	var rows []BatchRow
	var errs []*input.Error
	err := s.Run(t.Context(), func(it BatchItem) error {
		rows = append(rows, it.Row)
		if it.Error != nil {
			errs = append(errs, it.Error)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return rows, errs
}

// TestBatchStreamMatchesBatch: the streamed batch gives, in input order, the rows (findings
// included) and the document errors (index and line) that Engine.Inject and Batch give for the
// same manifest — on one worker and on several with a small window (rows then finish out of
// order and wait for the earlier ones), under annotation steps and other modes.
func TestBatchStreamMatchesBatch(t *testing.T) {
	t.Parallel()
	e := testEngine(t)
	manifest := mixedBatch(t)
	cases := []struct {
		name  string
		steps []input.Step
		s     Settings
	}{
		{"kube-inject", nil, Settings{}},
		{"native with a step", []input.Step{{Key: "traffic.sidecar.istio.io/excludeOutboundPorts", Value: "5432"}}, Settings{Mode: ModeNative}},
		{"webhook 1.30", nil, Settings{Mode: ModeWebhook, KubernetesVersion: "1.30"}},
	}
	for _, c := range cases {
		r := mustInject(t, e, manifest, c.steps, c.s)
		want := Batch(r.Documents, r.Findings)
		statuses := map[string]int{}
		pitfalls := 0
		for _, row := range want {
			statuses[row.Result]++
			pitfalls += len(row.Pitfalls)
		}
		if statuses["injected"] == 0 || statuses["skipped"] == 0 || statuses["passed through"] == 0 || statuses["error"] < 3 || pitfalls == 0 {
			t.Fatalf("%s: the corpus does not mix what it should: %v, %d pitfalls", c.name, statuses, pitfalls)
		}
		for _, w := range []struct{ workers, window int }{{1, 1}, {3, 2}, {8, 0}} {
			t.Run(fmt.Sprintf("%s/%d workers, window %d", c.name, w.workers, w.window), func(t *testing.T) {
				s, err := e.NewBatchStream(t.Context(), manifest, c.steps, c.s)
				if err != nil {
					t.Fatal(err)
				}
				s.workers, s.window = w.workers, w.window
				if s.Len() != len(want) {
					t.Fatalf("Len %d, want %d", s.Len(), len(want))
				}
				rows, errs := streamAll(t, s)
				if d := cmp.Diff(want, rows, rowsEqual...); d != "" {
					t.Fatalf("rows (-want +got)\n%s", d)
				}
				if d := cmp.Diff(r.Errors(), errs); d != "" {
					t.Fatalf("errors (-want +got)\n%s", d)
				}
			})
		}
	}
	// A request Inject refuses is refused before any row.
	if _, err := e.NewBatchStream(t.Context(), []byte(" \n"), nil, Settings{}); err == nil {
		t.Fatal("an empty manifest was accepted")
	}
}

// TestBatchStreamWindow: however slowly rows are taken, no worker starts a document more than
// the window ahead of the last row emitted — what keeps memory bounded — and rows come out in
// input order.
func TestBatchStreamWindow(t *testing.T) {
	e := testEngine(t)
	const window = 2
	s, err := e.NewBatchStream(t.Context(), fleet(60), nil, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	var emitted, ahead, highest atomic.Int64
	s.workers, s.window = 3, window
	s.started = func(index int) {
		// Slot index entered the window once the row index-window-1 was emitted.
		if lead := int64(index) - emitted.Load(); lead > ahead.Load() {
			ahead.Store(lead)
		}
		for h := highest.Load(); int64(index) > h && !highest.CompareAndSwap(h, int64(index)); h = highest.Load() {
		}
	}
	err = s.Run(t.Context(), func(it BatchItem) error {
		if want := emitted.Load() + 1; int64(it.Row.Doc) != want {
			t.Errorf("row %d emitted in place of %d", it.Row.Doc, want)
		}
		// The slowest reader: each row is taken only once the workers have started every
		// document the window lets them (row+window), so they run as far ahead as they can.
		k := int64(it.Row.Doc)
		for deadline := time.Now().Add(time.Minute); highest.Load() < min(k+window, 60); {
			if time.Now().After(deadline) {
				t.Fatalf("row %d: the workers stopped at document %d, short of the window", k, highest.Load())
			}
			runtime.Gosched()
		}
		emitted.Add(1)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if emitted.Load() != 60 {
		t.Fatalf("%d rows", emitted.Load())
	}
	if a := ahead.Load(); a > window+1 {
		t.Fatalf("a document was started %d ahead of the last row emitted; the window is %d", a, window)
	}
}

// TestBatchStreamStops: the stream ends at the first error emit returns, and when its context is
// cancelled, and says which.
func TestBatchStreamStops(t *testing.T) {
	e := testEngine(t)
	manifest := fleet(40)
	stop := errors.New("stdout closed")
	for _, c := range []struct {
		name string
		want error
	}{{"emit fails", stop}, {"cancelled", context.Canceled}} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			s, err := e.NewBatchStream(ctx, manifest, nil, Settings{})
			if err != nil {
				t.Fatal(err)
			}
			s.workers, s.window = 2, 2
			var started atomic.Int64
			s.started = func(int) { started.Add(1) }
			rows := 0
			err = s.Run(ctx, func(BatchItem) error {
				rows++
				if rows == 3 {
					if c.want == stop {
						return stop
					}
					cancel()
				}
				return nil
			})
			if !errors.Is(err, c.want) {
				t.Fatalf("Run: %v, want %v", err, c.want)
			}
			if rows != 3 || started.Load() >= 40 {
				t.Fatalf("%d rows emitted, %d of 40 documents started after the stop", rows, started.Load())
			}
		})
	}
}

// TestBatchStreamIsolated: under an installation with templates of the user's own, a streamed
// batch runs Istio's injector through the isolator, never in this process, and gives the rows
// and errors Inject gives through it.
func TestBatchStreamIsolated(t *testing.T) {
	iso := &jsonIsolator{network: true}
	e, err := New(context.Background(), Options{InstallPolicy: InstallPolicy{AllowCustomTemplates: true}, Isolator: iso})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s := Settings{Install: InstallOptions{Set: []string{"values.sidecarInjectorWebhook.templates.mine=metadata:\n  annotations:\n    mine: '{{ .Values.global.proxy.image }}'"}}}
	steps := []input.Step{{Key: "inject.istio.io/templates", Value: "sidecar,mine"}}
	manifest := mixedBatch(t)
	r := mustInject(t, e, manifest, steps, s)
	stream, err := e.NewBatchStream(t.Context(), manifest, steps, s)
	if err != nil {
		t.Fatal(err)
	}
	iso.injects.Store(0)
	rows, errs := streamAll(t, stream)
	if n := iso.injects.Load(); n != 1 {
		t.Fatalf("%d isolated injections, want the batch's one", n)
	}
	if d := cmp.Diff(Batch(r.Documents, r.Findings), rows, rowsEqual...); d != "" {
		t.Fatalf("rows (-want +got)\n%s", d)
	}
	if d := cmp.Diff(r.Errors(), errs); d != "" || len(errs) == 0 {
		t.Fatalf("errors (-want +got)\n%s", d)
	}
}
