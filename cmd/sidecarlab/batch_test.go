package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
	"github.com/sidecarlab/sidecarlab/report"
)

// mixedManifest has an injected Deployment, a Job with a pitfall, a kind Istio passes through
// and two documents that fail (in Istio's template and in YAML).
const mixedManifest = testkit.Deployment + "---\n" + classicJob + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n" +
	"---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: bad\n  annotations: {sidecar.istio.io/proxyCPU: lots}\nspec:\n  containers:\n  - {name: app, image: nginx}\n" +
	"---\nkind: Pod\nmetadata: [1, 2\n"

// countRE reads the count of the last progress bar drawn.
var countRE = regexp.MustCompile(`(\d+)/\d+$`)

// lastCount is the count the bar in b showed last, -1 when none was drawn.
func lastCount(b *bytes.Buffer) int {
	s := strings.TrimSuffix(b.String(), "\r\x1b[K")
	if i := strings.LastIndex(s, "\r"); i >= 0 {
		s = s[i+1:]
	}
	m := countRE.FindStringSubmatch(s)
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// writeWatcher calls onWrite before every write it keeps.
type writeWatcher struct {
	buf     bytes.Buffer
	onWrite func()
}

func (w *writeWatcher) Write(p []byte) (int, error) {
	w.onWrite()
	return w.buf.Write(p)
}

func (w *writeWatcher) String() string { return w.buf.String() }

// TestBatchRunStreams: csv, markdown and json are the bytes the engine writes for the rows of the
// whole manifest injected at once (JSON a valid array, as report.BatchJSON), and each row is
// written as it is ready — the first while the progress bar still shows 0 done — while the
// table waits for every row. Every document's error is on stderr with its index and line, as
// Injection.Errors gives them, and the command fails.
func TestBatchRunStreams(t *testing.T) {
	quietIstio()
	e, err := engine.New(context.Background(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	r, err := e.Inject(context.Background(), []byte(mixedManifest), nil, engine.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	rows := engine.Batch(r.Documents, r.Findings)
	var wantErrs bytes.Buffer
	if reportDocErrors(&cli{stderr: &wantErrs}, stdinInput(mixedManifest), r.Errors()) == nil || len(r.Errors()) != 2 {
		t.Fatalf("the manifest should have two failing documents: %v", r.Errors())
	}
	for _, c := range []struct {
		format string
		want   []byte
	}{
		{"json", report.BatchJSON(rows)},
		{"csv", report.BatchCSV(rows)},
		{"markdown", report.BatchMarkdown(rows)},
		{"table", nil},
	} {
		t.Run(c.format, func(t *testing.T) {
			var bar bytes.Buffer
			var counts []int
			stdout := &writeWatcher{onWrite: func() { counts = append(counts, lastCount(&bar)) }}
			var stderr bytes.Buffer
			err := batchRun(t.Context(), i18n.For("en"), testEng(t), stdinInput(mixedManifest), engine.Settings{}, c.format, engine.DefaultAmbientNodes, stdout, &stderr, &bar)
			if !errors.Is(err, errSilent) {
				t.Fatalf("err %v, want the documents' errors reported", err)
			}
			if c.want != nil && stdout.String() != string(c.want) {
				t.Fatalf("-o %s differs from the engine's rows:\n%s\nwant\n%s", c.format, stdout.String(), c.want)
			}
			if got := strings.ReplaceAll(stderr.String(), "\r\x1b[K", ""); got != wantErrs.String() {
				t.Fatalf("stderr %q, want %q", got, wantErrs.String())
			}
			if len(counts) == 0 {
				t.Fatal("nothing written")
			}
			if c.format == "table" {
				if counts[0] != len(rows) || !strings.Contains(stdout.String(), "total: ") {
					t.Fatalf("the table began after %d of %d rows:\n%s", counts[0], len(rows), stdout.String())
				}
				return
			}
			if counts[0] != 0 || len(counts) < len(rows) {
				t.Fatalf("%d writes, the first after %d rows: want one a row, the first before any was counted", len(counts), counts[0])
			}
		})
	}
	if err := batchRun(t.Context(), i18n.For("en"), testEng(t), stdinInput(testkit.Deployment), engine.Settings{}, "xlsx", engine.DefaultAmbientNodes, &bytes.Buffer{}, &bytes.Buffer{}, nil); exitCodeOf(err) != 2 {
		t.Fatalf("-o xlsx: %v", err)
	}
}

// TestBatchProgress: with a progress writer the bar counts every document up to n/N and is
// erased at the end (and around each error line); without one, stderr has the errors and
// nothing else.
func TestBatchProgress(t *testing.T) {
	quietIstio()
	var bar, stderr bytes.Buffer
	if err := batchRun(t.Context(), i18n.For("en"), testEng(t), stdinInput(mixedManifest), engine.Settings{}, "csv", engine.DefaultAmbientNodes, &bytes.Buffer{}, &stderr, &bar); !errors.Is(err, errSilent) {
		t.Fatal(err)
	}
	for i := range 6 {
		if want := "] " + strconv.Itoa(i) + "/5"; !strings.Contains(bar.String(), want) {
			t.Errorf("the bar never showed %q: %q", want, bar.String())
		}
	}
	if !strings.HasPrefix(bar.String(), "\r[>") || !strings.HasSuffix(bar.String(), "\r\x1b[K") || !strings.Contains(bar.String(), "\r[==============================] 5/5") {
		t.Errorf("bar %q: want it to start empty, fill, and be erased", bar.String())
	}
	if strings.Contains(stderr.String(), "\r") || strings.Contains(stderr.String(), "/5") {
		t.Errorf("the bar went to stderr's errors: %q", stderr.String())
	}

	stderr.Reset()
	if err := batchRun(t.Context(), i18n.For("en"), testEng(t), stdinInput(mixedManifest), engine.Settings{}, "csv", engine.DefaultAmbientNodes, &bytes.Buffer{}, &stderr, nil); !errors.Is(err, errSilent) {
		t.Fatal(err)
	}
	if strings.Contains(stderr.String(), "\r") || strings.Contains(stderr.String(), "/5") || strings.Count(stderr.String(), "sidecarlab: stdin: document") != 2 {
		t.Errorf("without progress, stderr %q", stderr.String())
	}
}

// TestProgressTo: a bar only on a terminal; a buffer or a file (stderr redirected) gets none.
func TestProgressTo(t *testing.T) {
	if progressTo(&bytes.Buffer{}) != nil {
		t.Error("a buffer got a progress bar")
	}
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if progressTo(f) != nil {
		t.Error("a file got a progress bar")
	}
	tty := openTerminal(t)
	if progressTo(tty) != tty {
		t.Error("a terminal got no progress bar")
	}
}

// stdinInput is a manifest as batch reads it from -f -.
func stdinInput(manifest string) joined {
	return join([]manifestFile{{name: stdinName, data: []byte(manifest)}})
}

// testEng is an engine for batchRun, closed at the test's end.
func testEng(t *testing.T) *engine.Engine {
	t.Helper()
	e, err := engine.New(t.Context(), cliEngineOptions())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

// TestBatchTableTotalInRowUnits: the table's total line writes its sums as the rows write
// theirs. A fleet's row says cpu=200 memory=250Gi; with a small workload's millicores and
// mebibytes the sums cross into cores and gibibytes with decimals — not 200300m and 256384Mi,
// Quantity.String's smallest exact unit — and a sum that stays under a core stays in millicores.
func TestBatchTableTotalInRowUnits(t *testing.T) {
	replicas := func(name string, n int) string {
		return strings.Replace(strings.Replace(testkit.Deployment, "spec:\n  selector", "spec:\n  replicas: "+strconv.Itoa(n)+"\n  selector", 1), "name: web\n", "name: "+name+"\n", 1)
	}
	for _, c := range []struct{ name, manifest, row, total string }{
		{"crossing into cores and Gi", replicas("fleet", 2000) + "---\n" + replicas("small", 3), "cpu=200 memory=250Gi",
			"total: 2 workloads with a sidecar, 2,003 pods — requests cpu=200.3 memory=250.375Gi; limits cpu=4006 memory=2003Gi"},
		{"under a core", replicas("small", 3), "cpu=300m memory=384Mi",
			"total: 1 workload with a sidecar, 3 pods — requests cpu=300m memory=384Mi; limits cpu=6 memory=3Gi"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := batchRun(t.Context(), i18n.For("en"), testEng(t), stdinInput(c.manifest), engine.Settings{}, "table", engine.DefaultAmbientNodes, &out, &bytes.Buffer{}, nil); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			if !strings.Contains(lines[1], c.row) {
				t.Errorf("the first row lacks %q: %s", c.row, lines[1])
			}
			if got := lines[len(lines)-1]; got != c.total {
				t.Errorf("total line\n got %q\nwant %q", got, c.total)
			}
		})
	}
}
