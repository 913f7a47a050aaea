package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The tree in testdata/check: a clean Deployment at its top; under it a Service and a Deployment
// with a misspelled annotation in one file, a Job with a classic sidecar, a Job that accepts that
// finding with sidecarlab.dev/ignore, and a file that is not a manifest.
const (
	tree       = "testdata/check"
	webWarning = "testdata/check/apps/web.yaml:18:9: warning: "  // the misspelled key, in the file's second document
	jobError   = "testdata/check/jobs/migrate.yaml:9:7: error: " // containers:, where istio-proxy would go
)

// lineHeads are each text line's file:line:col: severity: and its [check].
func lineHeads(out string) []string {
	var heads []string
	re := regexp.MustCompile(`^(.*?: (?:info|warning|error): ).*( \[[a-z0-9-]+\])$`)
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if l == "" {
			continue
		}
		m := re.FindStringSubmatch(l)
		if m == nil {
			heads = append(heads, "unparsed: "+l)
			continue
		}
		heads = append(heads, m[1]+m[2])
	}
	return heads
}

// TestCheck: findings of a tree at their files, lines and columns; what fails the run; what
// --ignore and the manifest's own opt-out leave out.
func TestCheck(t *testing.T) {
	abs, err := filepath.Abs(filepath.Join(tree, "jobs", "migrate.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	migrate, err := os.ReadFile(abs)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name      string
		stdin     string
		args      []string
		want      []string // the text lines' heads
		exit      int
		stderrHas string
	}{
		{"the tree", "", []string{"-f", tree, "-R"},
			[]string{webWarning + " [unknown-istio-annotation]", jobError + " [job-classic-sidecar]"}, 1, "1 finding ignored by the manifest"},
		{"the directory alone", "", []string{"-f", tree}, nil, 0, ""},
		{"--fail-on error, an error found", "", []string{"-f", tree, "-R", "--fail-on", "error"},
			[]string{webWarning + " [unknown-istio-annotation]", jobError + " [job-classic-sidecar]"}, 1, "severity error or worse"},
		{"--fail-on error, a warning found", "", []string{"-f", "testdata/check/apps/web.yaml", "--fail-on", "error"}, []string{webWarning + " [unknown-istio-annotation]"}, 0, ""},
		{"--fail-on warning, a warning found", "", []string{"-f", "testdata/check/apps/web.yaml", "--fail-on=warning"}, []string{webWarning + " [unknown-istio-annotation]"}, 1, "severity warning or worse"},
		{"--fail-on none", "", []string{"-f", tree, "-R", "--fail-on", "none"},
			[]string{webWarning + " [unknown-istio-annotation]", jobError + " [job-classic-sidecar]"}, 0, ""},
		{"--ignore", "", []string{"-f", tree, "-R", "--ignore", "job-classic-sidecar,deprecated-annotation"}, []string{webWarning + " [unknown-istio-annotation]"}, 1, ""},
		{"--ignore both", "", []string{"-f", tree, "-R", "--ignore", "job-classic-sidecar", "--ignore", "unknown-istio-annotation"}, nil, 0, ""},
		{"install flags", "", []string{"-f", "testdata/check/jobs", "--native-sidecars", "true"}, nil, 0, ""},
		{"standard input", string(migrate), []string{"-f", "-"}, []string{"stdin:9:7: error:  [job-classic-sidecar]"}, 1, ""},
		{"an absolute path under the working directory", "", []string{"-f", abs}, []string{jobError + " [job-classic-sidecar]"}, 1, ""},
		// The readable document's finding is reported; the broken one is named by file,
		// document and line.
		{"a document that cannot be read", "", []string{"-f", "testdata/check-bad", "--fail-on", "none"},
			[]string{"testdata/check-bad/broken.yaml:9:7: error:  [job-classic-sidecar]"}, 1, "testdata/check-bad/broken.yaml: document 2, line 17"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, stderr, err := runCLI(t, c.stdin, append([]string{"check"}, c.args...)...)
			if got := exitCodeOf(err); got != c.exit {
				t.Errorf("exit %d, want %d (%v); stderr: %s", got, c.exit, err, stderr)
			}
			if diff := cmp.Diff(c.want, lineHeads(out)); diff != "" {
				t.Errorf("lines (-want +got):\n%s\n%s", diff, out)
			}
			if !strings.Contains(stderr+errText(err), c.stderrHas) {
				t.Errorf("stderr %q lacks %q", stderr, c.stderrHas)
			}
		})
	}
}

// TestCheckUsage: mistakes in the call are usage errors (exit 2) that say what is allowed.
func TestCheckUsage(t *testing.T) {
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"-f", tree, "--ignore", "job-clasic-sidecar"}, []string{`--ignore "job-clasic-sidecar": not a check`, "job-classic-sidecar", "unknown-istio-annotation", "ignore-unknown-check"}},
		{[]string{"-f", tree, "--fail-on", "warn"}, []string{`--fail-on "warn"`, "info, warning, error or none"}},
		{[]string{"-f", tree, "-o", "xml"}, []string{`-o "xml"`, "text, json, sarif or github"}},
		{nil, []string{"-f FILENAME"}},
	}
	for _, c := range cases {
		_, _, err := runCLI(t, "", append([]string{"check"}, c.args...)...)
		if exitCodeOf(err) != 2 {
			t.Errorf("%v: exit %d (%v), want 2", c.args, exitCodeOf(err), err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: %q lacks %q", c.args, err, w)
			}
		}
	}
}

// TestCheckFormats: every format carries the same findings at the same places (the formats' own
// details are tested in package report).
func TestCheckFormats(t *testing.T) {
	type place struct {
		File       string
		Line, Col  int
		Check      string
		Suppressed bool
	}
	want := []place{
		{"testdata/check/apps/web.yaml", 18, 9, "unknown-istio-annotation", false},
		{"testdata/check/jobs/migrate.yaml", 9, 7, "job-classic-sidecar", false},
	}
	run := func(format string) string {
		out, stderr, err := runCLI(t, "", "check", "-f", tree, "-R", "-o", format, "--fail-on", "none")
		if err != nil {
			t.Fatalf("-o %s: %v: %s", format, err, stderr)
		}
		return out
	}

	var js []struct {
		File         string
		Line, Column int
		Check        string
	}
	if err := json.Unmarshal([]byte(run("json")), &js); err != nil {
		t.Fatal(err)
	}
	var got []place
	for _, j := range js {
		got = append(got, place{j.File, j.Line, j.Column, j.Check, false})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("json (-want +got):\n%s", diff)
	}

	var sarif struct {
		Runs []struct {
			Results []struct {
				RuleID    string `json:"ruleId"`
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI string }
						Region           struct{ StartLine, StartColumn int }
					}
				}
				Suppressions []struct{ Kind string }
			}
		}
	}
	if err := json.Unmarshal([]byte(run("sarif")), &sarif); err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, r := range sarif.Runs[0].Results {
		l := r.Locations[0].PhysicalLocation
		got = append(got, place{l.ArtifactLocation.URI, l.Region.StartLine, l.Region.StartColumn, r.RuleID, len(r.Suppressions) > 0})
	}
	// SARIF keeps the finding the manifest accepted, suppressed.
	wantSARIF := append(append([]place(nil), want...), place{"testdata/check/jobs/accepted.yaml", 12, 7, "job-classic-sidecar", true})
	if diff := cmp.Diff(wantSARIF, got); diff != "" {
		t.Errorf("sarif (-want +got):\n%s", diff)
	}

	gh := strings.Split(strings.TrimSuffix(run("github"), "\n"), "\n")
	wantGH := []string{
		"::warning file=testdata/check/apps/web.yaml,line=18,col=9,title=unknown-istio-annotation::",
		"::error file=testdata/check/jobs/migrate.yaml,line=9,col=7,title=job-classic-sidecar::",
	}
	if len(gh) != len(wantGH) {
		t.Fatalf("github: %q", gh)
	}
	for i, w := range wantGH {
		if !strings.HasPrefix(gh[i], w) {
			t.Errorf("github line %q, want %q…", gh[i], w)
		}
	}
}
