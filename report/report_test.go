package report

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	istiolog "istio.io/istio/pkg/log"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/wording"
)

func TestMain(m *testing.M) {
	// Istio's library logs its fake clusters; keep test output readable.
	o := istiolog.DefaultOptions()
	o.SetDefaultOutputLevel(istiolog.OverrideScopeName, istiolog.NoneLevel)
	_ = istiolog.Configure(o)
	os.Exit(m.Run())
}

var (
	engOnce sync.Once
	eng     *engine.Engine
	engErr  error
)

// testEngine is an engine with the default installation, made once for the package's tests.
func testEngine(t *testing.T) *engine.Engine {
	t.Helper()
	engOnce.Do(func() { eng, engErr = engine.New(context.Background(), engine.Options{}) })
	if engErr != nil {
		t.Fatal(engErr)
	}
	return eng
}

// findings injects manifest with the default installation and places its findings (and the
// ones the manifest ignored) in file.
func findings(t *testing.T, file, manifest string) []Item {
	t.Helper()
	r, err := testEngine(t).Inject(t.Context(), []byte(manifest), nil, engine.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	var out []Item
	for i, l := range engine.Locate(r.Documents, r.Findings) {
		out = append(out, Item{File: file, Finding: r.Findings[i], Location: l})
	}
	for i, l := range engine.Locate(r.Documents, r.Ignored) {
		out = append(out, Item{File: file, Finding: r.Ignored[i], Location: l, Ignored: IgnoredByManifest})
	}
	return out
}

// job is a Job (classic sidecar: job-classic-sidecar, an error, found at "containers:" on line
// 10, column 7, where injection adds istio-proxy) with an unknown Istio annotation (a warning,
// at its key: line 7, column 9).
const job = `apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
spec:
  template:
    metadata:
      annotations:
        sidecar.istio.io/proxyCpu: 100m
    spec:
      restartPolicy: Never
      containers:
      - name: migrate
        image: busybox
`

// hostileKey is an annotation key whose finding's message carries every character GitHub's
// commands give a meaning to, and a command of its own after a line break.
const hostileKey = `sidecar.istio.io/x%0A 100%\r\n::error file=evil.yaml,line=1::pwned, twice\n::warning::again`

// hostile is a Deployment with hostileKey on its pod template (YAML's double quotes make the
// escapes real CR and LF characters).
var hostile = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      annotations:
        "` + hostileKey + `": "1"
      labels:
        app: web
    spec:
      containers:
      - name: app
        image: nginx
`

func TestText(t *testing.T) {
	items := findings(t, "jobs/migrate.yaml", job)
	if len(items) != 2 {
		t.Fatalf("findings: %+v", items)
	}
	var b strings.Builder
	if err := Text(&b, wording.English, items); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("jobs/migrate.yaml:9:9: warning: %s [unknown-istio-annotation]\njobs/migrate.yaml:12:7: error: %s [job-classic-sidecar]\n",
		wording.English.Message(items[0].Finding), wording.English.Message(items[1].Finding))
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}

	// A line break in a value stays on its finding's line, written as \n.
	b.Reset()
	if err := Text(&b, wording.English, findings(t, "web.yaml", hostile)); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n"); len(lines) != 1 || strings.Contains(b.String(), "\r") ||
		!strings.HasPrefix(lines[0], "web.yaml:12:9: warning: sidecar.istio.io/x%0A 100%\\r\\n::error") {
		t.Errorf("hostile key: %q", b.String())
	}
}

func TestJSON(t *testing.T) {
	items := findings(t, "jobs/migrate.yaml", job)
	var b bytes.Buffer
	if err := JSON(&b, wording.English, items); err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{
		{"file": "jobs/migrate.yaml", "line": 9.0, "column": 9.0, "check": "unknown-istio-annotation", "severity": "warning",
			"message": wording.English.Message(items[0].Finding), "fix": "Use sidecar.istio.io/proxyCPU.", "doc": 1.0,
			"path": `spec.template.metadata.annotations["sidecar.istio.io/proxyCpu"]`, "exact": true},
		{"file": "jobs/migrate.yaml", "line": 12.0, "column": 7.0, "check": "job-classic-sidecar", "severity": "error",
			"message": wording.English.Message(items[1].Finding), "fix": wording.English.FixText(items[1].Finding), "doc": 1.0,
			"path": "spec.template.spec.containers[istio-proxy]", "exact": false},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// None is an empty array, not null: a script can always iterate.
	b.Reset()
	if err := JSON(&b, wording.English, nil); err != nil || strings.TrimSpace(b.String()) != "[]" {
		t.Errorf("no findings: %q, %v", b.String(), err)
	}
}

// TestGitHub: one workflow command per finding, whatever a manifest value or a file name holds:
// each line parses back, as GitHub's runner parses it (the properties end at the first "::"),
// to exactly the file, title and message that were meant.
func TestGitHub(t *testing.T) {
	file := "odd, name: 100%.yaml"
	items := append(findings(t, file, hostile), findings(t, "jobs/migrate.yaml", job)...)
	if len(items) != 3 {
		t.Fatalf("findings: %+v", items)
	}
	var b strings.Builder
	if err := GitHub(&b, i18n.For("en"), items); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, "\r") {
		t.Errorf("a raw CR: %q", out)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(items) {
		t.Fatalf("%d lines for %d findings:\n%s", len(lines), len(items), out)
	}
	unescape := strings.NewReplacer("%0D", "\r", "%0A", "\n", "%3A", ":", "%2C", ",", "%25", "%")
	for i, line := range lines {
		it := items[i]
		level := map[engine.Severity]string{engine.SeverityError: "error", engine.SeverityWarning: "warning"}[it.Finding.Severity]
		cmd, rest, ok := strings.Cut(strings.TrimPrefix(line, "::"), " ")
		props, data, ok2 := strings.Cut(rest, "::")
		if !strings.HasPrefix(line, "::") || !ok || !ok2 || cmd != level {
			t.Fatalf("line %d is not one %s command: %q", i, level, line)
		}
		got := map[string]string{"message": unescape.Replace(data)}
		for p := range strings.SplitSeq(props, ",") {
			k, v, _ := strings.Cut(p, "=")
			got[k] = unescape.Replace(v)
		}
		msg := wording.English.Message(it.Finding)
		if fix := wording.English.FixText(it.Finding); fix != "" {
			msg += " Fix: " + fix
		}
		want := map[string]string{"file": it.File, "line": fmt.Sprint(it.Location.Line), "col": fmt.Sprint(it.Location.Column),
			"title": string(it.Finding.Check), "message": msg}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("line %d %q (-want +got):\n%s", i, line, diff)
		}
	}
	if !strings.Contains(items[0].Finding.Params["key"], "\n::error") {
		t.Errorf("the hostile key did not reach the finding: %q", items[0].Finding.Params["key"])
	}
}

func TestWriteFormats(t *testing.T) {
	items := findings(t, "jobs/migrate.yaml", job)
	for _, f := range Formats {
		var a, b bytes.Buffer
		if err := Write(&a, f, i18n.For("en"), items); err != nil {
			t.Fatal(err)
		}
		direct := map[string]func(*bytes.Buffer, []Item) error{
			"text":   func(w *bytes.Buffer, it []Item) error { return Text(w, wording.English, it) },
			"json":   func(w *bytes.Buffer, it []Item) error { return JSON(w, wording.English, it) },
			"sarif":  func(w *bytes.Buffer, it []Item) error { return SARIF(w, it) },
			"github": func(w *bytes.Buffer, it []Item) error { return GitHub(w, i18n.For("en"), it) },
		}[f]
		if err := direct(&b, items); err != nil || a.String() != b.String() {
			t.Errorf("Write(%s) differs from its writer", f)
		}
	}
	if err := Write(&bytes.Buffer{}, "xml", i18n.For("en"), items); err == nil {
		t.Error("Write accepted an unknown format")
	}
}

// TestPeopleFormatsInTheReadersLanguage: text and github are worded in the language given (the
// fix's label too), and so are JSON's sentences (message, fix), not its data; SARIF, which
// declares no language, is the same bytes in every language.
func TestPeopleFormatsInTheReadersLanguage(t *testing.T) {
	items := findings(t, "jobs/migrate.yaml", job)
	ja := i18n.For("ja")
	var gh strings.Builder
	if err := GitHub(&gh, ja, items); err != nil {
		t.Fatal(err)
	}
	words := wording.In(ja)
	want := words.Message(items[0].Finding) + " 修正: " + words.FixText(items[0].Finding)
	if words.FixText(items[0].Finding) == "" || !strings.Contains(gh.String(), "::"+escapeData(want)+"\n") || strings.Contains(gh.String(), " Fix: ") {
		t.Errorf("ja github: %q, want the message %q", gh.String(), want)
	}
	var text strings.Builder
	if err := Text(&text, words, items); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), ": "+oneLine(words.Message(items[0].Finding))+" [") {
		t.Errorf("ja text: %q", text.String())
	}
	written := func(f string, l *i18n.Localizer) string {
		var b bytes.Buffer
		if err := Write(&b, f, l, items); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	// SARIF declares no language: the same bytes in every language.
	if en := written("sarif", i18n.For("en")); en == "" || en != written("sarif", ja) {
		t.Errorf("sarif differs with the language")
	}
	// JSON's sentences (message, fix) follow the language; its data does not.
	var en, other []map[string]any
	if json.Unmarshal([]byte(written("json", i18n.For("en"))), &en) != nil || json.Unmarshal([]byte(written("json", ja)), &other) != nil || len(en) == 0 {
		t.Fatal("json: not an array of findings")
	}
	if other[0]["message"] != words.Message(items[0].Finding) || other[0]["fix"] != words.FixText(items[0].Finding) || other[0]["message"] == en[0]["message"] {
		t.Errorf("ja json's sentences: %v", other[0])
	}
	for i := range en {
		delete(en[i], "message")
		delete(en[i], "fix")
		delete(other[i], "message")
		delete(other[i], "fix")
	}
	if d := cmp.Diff(en, other); d != "" {
		t.Errorf("json's data differs with the language (-en +ja):\n%s", d)
	}
	if m := i18n.Missing(); len(m) > 0 {
		t.Errorf("missing messages: %q", m)
	}
}
