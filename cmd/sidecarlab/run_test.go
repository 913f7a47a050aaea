package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/catalog"

	"github.com/google/go-cmp/cmp"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
	"github.com/sidecarlab/sidecarlab/report"
	"github.com/sidecarlab/sidecarlab/wording"
)

const hostNetworkPod = `apiVersion: v1
kind: Pod
metadata:
  name: node-agent
spec:
  hostNetwork: true
  containers:
  - name: agent
    image: busybox
`

func runCLI(t *testing.T, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	err = run(context.Background(), args, func(string) string { return "" }, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), err
}

func TestInjectPrintsWhatTheEngineGives(t *testing.T) {
	out, stderr, err := runCLI(t, testkit.Deployment, "inject", "-f", "-")
	if err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	e, err := engine.New(context.Background(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	r, err := e.Inject(context.Background(), []byte(testkit.Deployment), nil, engine.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	if out != r.Output() || !strings.HasSuffix(out, "---\n") || !strings.Contains(out, "name: istio-proxy") {
		t.Fatalf("inject printed:\n%s", out)
	}
	if stderr != "" {
		t.Fatalf("unexpected stderr %q", stderr)
	}
}

func TestInjectFlags(t *testing.T) {
	cases := []struct {
		name     string
		stdin    string
		args     []string
		wantOut  string
		wantErr  string
		exitCode int
	}{
		{name: "native sidecars", stdin: testkit.Deployment, args: []string{"--native-sidecars", "true"}, wantOut: "restartPolicy: Always"},
		{name: "webhook on 1.34", stdin: testkit.Deployment, args: []string{"--kubernetes-version", "1.34"}, wantOut: "restartPolicy: Always"},
		{name: "annotation", stdin: testkit.Deployment, args: []string{"--annotate", "sidecar.istio.io/proxyCPU=321m"}, wantOut: "cpu: 321m"},
		{name: "install option", stdin: testkit.Deployment, args: []string{"--set", "values.global.proxy.holdApplicationUntilProxyStarts=true"}, wantOut: "- wait"},
		{name: "json", stdin: testkit.Deployment, args: []string{"-o", "json"}, wantOut: `"documents"`},
		{name: "skipped pod warns on stderr", stdin: hostNetworkPod, args: nil, wantOut: "hostNetwork: true", wantErr: "Skipping injection because Pod \"node-agent\" has host networking enabled"},
		{name: "bad annotation value", stdin: testkit.Deployment, args: []string{"--annotate", "sidecar.istio.io/proxyCPU=lots"}, wantErr: "proxyCPU", exitCode: 1},
		{name: "bad YAML", stdin: "kind: Pod\n  x: : y\n", wantErr: "document 1, line 2", exitCode: 1},
		{name: "bad flag", stdin: testkit.Deployment, args: []string{"--native-sidecars", "maybe"}, wantErr: "auto, true or false", exitCode: 2},
		{name: "version with a forced mode", stdin: testkit.Deployment, args: []string{"--native-sidecars", "true", "--kubernetes-version", "1.34"}, wantErr: "only with --native-sidecars auto", exitCode: 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, stderr, err := runCLI(t, c.stdin, append([]string{"inject", "-f", "-"}, c.args...)...)
			if code := exitCodeOf(err); code != c.exitCode {
				t.Fatalf("exit %d (%v), want %d; stderr %s", code, err, c.exitCode, stderr)
			}
			all := stderr
			if err != nil {
				all += err.Error()
			}
			if !strings.Contains(out, c.wantOut) || !strings.Contains(all, c.wantErr) {
				t.Fatalf("stdout:\n%s\nstderr+error: %s\nwant %q on stdout and %q on stderr", out, all, c.wantOut, c.wantErr)
			}
		})
	}
}

func exitCodeOf(err error) int {
	if err == nil {
		return 0
	}
	return exitCode(err)
}

func TestDiffTimeline(t *testing.T) {
	out, _, err := runCLI(t, testkit.Deployment, "diff", "-f", "-",
		"--annotate", "sidecar.istio.io/proxyCPU=200m",
		"--annotate", "proxy.istio.io/config=holdApplicationUntilProxyStarts: true")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"# step 0: injection",
		"# step 1: sidecar.istio.io/proxyCPU=200m\ndocument 1: Deployment/web\n",
		"~ spec.template.spec.containers[istio-proxy].resources.requests.cpu: 100m → 200m",
		"# step 2: proxy.istio.io/config=holdApplicationUntilProxyStarts: true",
		"↕ spec.template.spec.containers[istio-proxy]: moved from position 2 to 1",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	out, _, err = runCLI(t, testkit.Deployment, "diff", "-f", "-", "--unified", "--annotate", "sidecar.istio.io/proxyCPU=200m")
	if err != nil || !strings.Contains(out, "-            cpu: 100m\n") || !strings.Contains(out, "+            cpu: 200m\n") {
		t.Fatalf("unified diff (%v):\n%s", err, out)
	}
}

func TestAnnotationsAndVersion(t *testing.T) {
	out, _, err := runCLI(t, "", "annotations", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var cat []catalog.Annotation
	if err := json.Unmarshal([]byte(out), &cat); err != nil || len(cat) < 40 {
		t.Fatalf("%d annotations, %v", len(cat), err)
	}
	out, _, err = runCLI(t, "", "annotations")
	if err != nil || !strings.Contains(out, "sidecar.istio.io/proxyCPU") || !strings.Contains(out, "quantity") {
		t.Fatalf("table: %v\n%s", err, out)
	}
	out, _, err = runCLI(t, "", "version")
	if v := engine.Version(); err != nil || !strings.Contains(out, "Istio "+v.Istio) || !strings.Contains(out, v.Commit) {
		t.Fatalf("version: %v %q", err, out)
	}
	if _, _, err := runCLI(t, "", "frobnicate"); exitCodeOf(err) != 2 {
		t.Fatalf("unknown command: %v", err)
	}
}

const classicJob = `apiVersion: batch/v1
kind: Job
metadata:
  name: once
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: work
        image: busybox
`

func TestInjectPitfallsAndFailOn(t *testing.T) {
	_, stderr, err := runCLI(t, classicJob, "inject", "-f", "-")
	if err != nil || !strings.Contains(stderr, "pitfall: stdin:") || !strings.Contains(stderr, ": error [job-classic-sidecar] document 1") || !strings.Contains(stderr, "Fix: Inject a native sidecar") {
		t.Fatalf("err %v, stderr %q", err, stderr)
	}
	if _, _, err := runCLI(t, classicJob, "inject", "-f", "-", "--fail-on", "error"); exitCodeOf(err) != 1 {
		t.Fatalf("--fail-on error with an error pitfall: %v", err)
	}
	if _, _, err := runCLI(t, classicJob, "inject", "-f", "-", "--fail-on", "error", "--native-sidecars", "true"); err != nil {
		t.Fatalf("--fail-on error without pitfalls: %v", err)
	}
	if _, _, err := runCLI(t, testkit.Deployment, "inject", "-f", "-", "--fail-on", "warning"); err != nil {
		t.Fatalf("--fail-on warning on a clean Deployment: %v", err)
	}
	if _, _, err := runCLI(t, testkit.Deployment, "inject", "-f", "-", "--fail-on", "sometimes"); exitCodeOf(err) != 2 {
		t.Fatalf("bad --fail-on: %v", err)
	}
}

func TestBatchCommand(t *testing.T) {
	dir := t.TempDir()
	a, b := dir+"/a.yaml", dir+"/b.yaml"
	if err := os.WriteFile(a, []byte(testkit.Deployment), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, []byte(classicJob), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err := runCLI(t, "", "batch", "-o", "json", a, b)
	if err != nil {
		t.Fatal(err)
	}
	var rows []engine.BatchRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 2 {
		t.Fatalf("%v, %d rows", err, len(rows))
	}
	// The same rows as the engine gives for the two files joined.
	e, err := engine.New(context.Background(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	r, err := e.Inject(context.Background(), []byte(testkit.Deployment+"---\n"+classicJob), nil, engine.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	if want := string(report.BatchJSON(engine.Batch(r.Documents, r.Findings))); out != want {
		t.Fatalf("batch -o json differs from the engine's rows")
	}
	for _, format := range []string{"csv", "markdown", "table"} {
		out, _, err := runCLI(t, "", "batch", "-o", format, a, b)
		if err != nil || !strings.Contains(out, "job-classic-sidecar") || !strings.Contains(out, "web") {
			t.Errorf("-o %s: %v\n%s", format, err, out)
		}
	}
	if _, _, err := runCLI(t, "", "batch"); exitCodeOf(err) != 2 {
		t.Fatalf("batch without files: %v", err)
	}

	// The table prints the engine's own columns and cells: every column (total limits too), and
	// nothing made up for a row without a proxy.
	c := dir + "/c.yaml"
	if err := os.WriteFile(c, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err = runCLI(t, "", "batch", "-o", "table", a, c)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 {
		t.Fatalf("want a header, 2 rows and the total:\n%s", out)
	}
	if want := "total: 1 workload with a sidecar, 1 pod — requests cpu=100m memory=128Mi; limits cpu=2 memory=1Gi"; lines[3] != want {
		t.Errorf("total line %q, want %q", lines[3], want)
	}
	for _, col := range engine.BatchColumnNames() {
		if !strings.Contains(lines[0], strings.ToUpper(col)) {
			t.Errorf("header lacks %q: %s", strings.ToUpper(col), lines[0])
		}
	}
	if !strings.Contains(lines[2], "passed through") || strings.Contains(lines[2], "cpu=") {
		t.Errorf("a row without a proxy: %s", lines[2])
	}
	if want := engine.Batch(r.Documents, r.Findings)[0].Cells()[17]; want == "" || !strings.Contains(lines[1], want) {
		t.Errorf("the Deployment's total limits %q are not in its row: %s", want, lines[1])
	}
}

// TestInjectFailOnTreeNamesFileAndDocument: on several files, each pitfall line names the file
// it is in and its document and line counted within that file — as inject of that file alone
// says — not the document's index among all the files' documents.
func TestInjectFailOnTreeNamesFileAndDocument(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"a.yaml": podNamed("one") + "---\n" + podNamed("two"),
		"b.yaml": podNamed("three") + "---\n" + classicJob,
	})
	b := filepath.Join(dir, "b.yaml")
	pitfalls := func(stderr string) []string {
		var out []string
		for _, l := range strings.Split(stderr, "\n") {
			if strings.HasPrefix(l, "pitfall: ") {
				out = append(out, l)
			}
		}
		return out
	}
	_, alone, err := runCLI(t, "", "inject", "-f", b)
	if err != nil {
		t.Fatalf("b.yaml alone: %v: %s", err, alone)
	}
	_, tree, err := runCLI(t, "", "inject", "-f", dir, "--fail-on", "error")
	if exitCodeOf(err) != 1 {
		t.Fatalf("--fail-on error on the tree: exit %d (%v)", exitCodeOf(err), err)
	}
	want := pitfalls(alone)
	if len(want) != 1 || !strings.HasPrefix(want[0], "pitfall: "+filepath.ToSlash(b)+":") || !strings.Contains(want[0], ": error [job-classic-sidecar] document 2 ") {
		t.Fatalf("b.yaml alone: want job-classic-sidecar at b.yaml, document 2, got %q", want)
	}
	// The Job's line within b.yaml: below the first document's 8 lines and the separator.
	if line, _ := strconv.Atoi(strings.Split(strings.TrimPrefix(want[0], "pitfall: "+filepath.ToSlash(b)+":"), ":")[0]); line < 10 || line > 19 {
		t.Errorf("line %d: want one within the Job (lines 10 to 19)", line)
	}
	if diff := cmp.Diff(want, pitfalls(tree)); diff != "" {
		t.Errorf("the tree's pitfall lines (-b.yaml alone +the tree):\n%s", diff)
	}
}

// TestInjectSaysWhatTheManifestIgnored: inject counts on stderr the findings the manifest's
// sidecarlab.dev/ignore left out (as check does), prints no pitfall line for them and does not
// fail on them; without the annotation, no such line.
func TestInjectSaysWhatTheManifestIgnored(t *testing.T) {
	ignoring := strings.Replace(classicJob, "  name: once\n", "  name: once\n  annotations:\n    sidecarlab.dev/ignore: job-classic-sidecar\n", 1)
	_, stderr, err := runCLI(t, ignoring, "inject", "-f", "-", "--fail-on", "error")
	if err != nil || !strings.Contains(stderr, wording.English.Ignored(1)) || strings.Contains(stderr, "[job-classic-sidecar]") {
		t.Fatalf("ignored: err %v, stderr %q", err, stderr)
	}
	_, stderr, _ = runCLI(t, classicJob, "inject", "-f", "-")
	if strings.Contains(stderr, "ignored by the manifest") || !strings.Contains(stderr, "[job-classic-sidecar]") {
		t.Fatalf("not ignored: stderr %q", stderr)
	}
}
