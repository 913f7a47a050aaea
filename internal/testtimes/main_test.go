package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// events is what `go test -json` printed for two packages, one passing with a subtest and one
// failing, and a package without tests.
const events = `{"Action":"start","Package":"ex/a"}
{"Action":"run","Package":"ex/a","Test":"TestA"}
{"Action":"output","Package":"ex/a","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"run","Package":"ex/a","Test":"TestA/sub"}
{"Action":"output","Package":"ex/a","Test":"TestA/sub","Output":"    a_test.go:9: fine\n"}
{"Action":"pass","Package":"ex/a","Test":"TestA/sub","Elapsed":1.5}
{"Action":"pass","Package":"ex/a","Test":"TestA","Elapsed":2}
{"Action":"output","Package":"ex/a","Output":"PASS\n"}
{"Action":"output","Package":"ex/a","Output":"ok  \tex/a\t2.1s\n"}
{"Action":"pass","Package":"ex/a","Elapsed":2.1}
{"Action":"start","Package":"ex/b"}
{"Action":"run","Package":"ex/b","Test":"TestB"}
{"Action":"output","Package":"ex/b","Test":"TestB","Output":"    b_test.go:3: broken\n"}
{"Action":"fail","Package":"ex/b","Test":"TestB","Elapsed":7}
{"Action":"run","Package":"ex/b","Test":"TestSkipped"}
{"Action":"skip","Package":"ex/b","Test":"TestSkipped","Elapsed":0}
{"Action":"output","Package":"ex/b","Output":"FAIL\n"}
{"Action":"output","Package":"ex/b","Output":"FAIL\tex/b\t7.2s\n"}
{"Action":"fail","Package":"ex/b","Elapsed":7.2}
{"Action":"output","Package":"ex/c","Output":"?   \tex/c\t[no test files]\n"}
{"Action":"skip","Package":"ex/c","Elapsed":0}
not an event
`

// TestFilter: a passing package is one line; a failing one shows all it printed; a line that
// is not an event passes through; every line is kept.
func TestFilter(t *testing.T) {
	var out, kept bytes.Buffer
	if err := newGoTestFilter(&out).copy(strings.NewReader(events), &kept); err != nil {
		t.Fatal(err)
	}
	want := "ok  \tex/a\t2.100s\n" +
		"    b_test.go:3: broken\nFAIL\tex/b\t7.200s\n" +
		"?   \tex/c\t[no test files]\n" +
		"not an event\n"
	if out.String() != want {
		t.Errorf("printed:\n%s\nwant:\n%s", out.String(), want)
	}
	if kept.String() != events {
		t.Errorf("kept:\n%s", kept.String())
	}
}

// TestRunAndReport: run records each step's time and exit status and the events of go test; the
// report lists them, the packages by time, the slowest tests and the counts.
func TestRunAndReport(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "events.sh")
	if err := os.WriteFile(filepath.Join(dir, "events.txt"), []byte(events), 0o644); err != nil {
		t.Fatal(err)
	}
	// A stand-in for `go test -json`: prints the events and fails as go test would.
	if err := os.WriteFile(script, []byte("#!/bin/sh\ncat \"$(dirname \"$0\")/events.txt\"\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	times := filepath.Join(dir, "times")
	var out, errb bytes.Buffer
	code, err := run([]string{"run", times, "unit", "--", script, "-json"}, &out, &errb)
	if err != nil || code != 1 {
		t.Fatalf("run: exit %d, %v", code, err)
	}
	if !strings.Contains(out.String(), "FAIL\tex/b") || strings.Contains(out.String(), "=== RUN") {
		t.Errorf("run printed:\n%s", out.String())
	}
	code, err = run([]string{"run", times, "other", "--", "true"}, &out, &errb)
	if err != nil || code != 0 {
		t.Fatalf("run true: exit %d, %v", code, err)
	}
	// A step that computes: its CPU time is recorded, the time of the process it starts included.
	code, err = run([]string{"run", times, "busy", "--", "sh", "-c", `sh -c 'i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done'`}, &out, &errb)
	if err != nil || code != 0 {
		t.Fatalf("run busy: exit %d, %v", code, err)
	}
	tsv, err := os.ReadFile(filepath.Join(times, "steps.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(tsv)), "\n") {
		f := strings.Split(l, "\t")
		if len(f) != 5 {
			t.Fatalf("steps.tsv line %q: want name, seconds, status, start, CPU", l)
		}
		if cpu, err := strconv.ParseFloat(f[4], 64); err != nil || (f[0] == "busy" && cpu <= 0) {
			t.Errorf("step %s: CPU %q (%v); want a number, more than 0 for the busy step", f[0], f[4], err)
		}
	}
	out.Reset()
	if _, err := run([]string{"report", times}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	r := out.String()
	for _, want := range []string{
		"unit ", "(exit 1)", "other ", "CPU-s",
		"ex/b", "7.2 s",
		"TestB", "TestA",
		"Tests and subtests: 4 run, 2 passed, 1 failed, 1 skipped",
	} {
		if !strings.Contains(r, want) {
			t.Errorf("the report lacks %q:\n%s", want, r)
		}
	}
	if strings.Contains(r, "TestA/sub ") {
		t.Errorf("a subtest is listed among the slowest tests:\n%s", r)
	}
	if strings.Index(r, "ex/b") > strings.Index(r, "ex/a") {
		t.Errorf("packages are not slowest first:\n%s", r)
	}
}

// TestReportSideBySide: steps that ran side by side are summed, and the span from the first
// start to the last end is their wall time.
func TestReportSideBySide(t *testing.T) {
	dir := t.TempDir()
	// go, 100 s from t=1000; e2e, 150 s from t=1010 beside it; then fuzz, 20 s from t=1160.
	tsv := "go\t100.0\t0\t1000.0\ne2e\t150.0\t0\t1010.0\nfuzz\t20.0\t0\t1160.0\n"
	if err := os.WriteFile(filepath.Join(dir, "steps.tsv"), []byte(tsv), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := run([]string{"report", dir}, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"all steps                       270.0 s", "first start to last end         180.0 s"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, out.String())
		}
	}
}

// TestReportWithoutARun names what to do.
func TestReportWithoutARun(t *testing.T) {
	_, err := run([]string{"report", t.TempDir()}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "run make test first") {
		t.Fatalf("%v", err)
	}
	if code, err := run([]string{"nonsense"}, &bytes.Buffer{}, &bytes.Buffer{}); code != 2 || err == nil {
		t.Fatalf("exit %d, %v", code, err)
	}
}
