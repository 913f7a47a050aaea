package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

// istioTime is the time at the start of each entry of Istio's logger; it is all two runs'
// entries may differ in.
var istioTime = regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z\t`)

// istioEntries are the entries of Istio's logger in stderr, without their time, and the warnings
// after them: what comes before istioctl's "Error: " or sidecarlab's first line of its own.
func istioEntries(stderr string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(stderr, "\n") {
		if strings.HasPrefix(l, "Error: ") || strings.HasPrefix(l, "sidecarlab: ") || strings.HasPrefix(l, "pitfall: ") {
			break
		}
		b.WriteString(l)
	}
	return istioTime.ReplaceAllString(b.String(), "")
}

// withoutRestated is istioctl's stderr without Istio's log entries that restate its error msg
// (restated): what sidecarlab prints of them.
func withoutRestated(stderr, msg string) string {
	starts := istioTime.FindAllStringIndex(stderr, -1)
	var b strings.Builder
	prev := 0
	for i, s := range starts {
		b.WriteString(stderr[prev:s[0]])
		end := len(stderr)
		if i+1 < len(starts) {
			end = starts[i+1][0]
		} else if j := strings.Index(stderr[s[0]:], "\nError: "); j >= 0 {
			end = s[0] + j + 1
		}
		if entry := stderr[s[0]:end]; !restated(entry, []error{errors.New(msg)}) {
			b.WriteString(entry)
		}
		prev = end
	}
	b.WriteString(stderr[prev:])
	return b.String()
}

// injectFalse is the deployment with sidecar.istio.io/inject "False", for which Istio's injector
// logs a warning (log.Warnf, not its warning handler) and injects all the same.
var injectFalse = strings.Replace(testkit.Deployment, "      labels:\n", "      annotations:\n        sidecar.istio.io/inject: \"False\"\n      labels:\n", 1)

// TestInjectPrintsIstioLog: what Istio's logger writes while inject runs is printed on stderr
// as istioctl kube-inject prints it for the same file (the same entries, in the same order, but
// for their time); a clean file gets none. Several documents that each log come in istioctl's
// order, whichever worker injected them.
func TestInjectPrintsIstioLog(t *testing.T) {
	var many []string
	for i, v := range []string{"False", "no", "TRUE", "maybe", "x", "False", "0", "yes"} {
		many = append(many, fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p%d\n  namespace: ns%d\n  annotations:\n    sidecar.istio.io/inject: %q\n"+
			"spec:\n  containers:\n  - name: app\n    image: nginx\n", i, i, v))
	}
	dir := writeFiles(t, map[string]string{"false.yaml": injectFalse, "clean.yaml": testkit.Deployment, "many.yaml": strings.Join(many, "---\n")})
	bin, cfg := istioctlWithDefaults(t)
	for _, c := range []struct {
		file string
		want string // an entry stderr must hold, "" for none at all
	}{
		{"false.yaml", "warn\tInvalid value for sidecar.istio.io/inject: \"False\". Only 'true' and 'false' are accepted. Falling back to default injection policy.\tpod=/\n"},
		{"clean.yaml", ""},
		{"many.yaml", "pod=ns7/p7\n"},
	} {
		t.Run(c.file, func(t *testing.T) {
			file := filepath.Join(dir, c.file)
			cmd := exec.Command(bin, append([]string{"kube-inject", "-f", file}, cfg...)...)
			var ctlOut, ctlErr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &ctlOut, &ctlErr
			if err := cmd.Run(); err != nil {
				t.Fatalf("istioctl kube-inject: %v: %s", err, ctlErr.String())
			}
			out, stderr, err := runCLI(t, "", "inject", "-f", file)
			if err != nil || out != ctlOut.String() {
				t.Fatalf("%v: %s", err, stderr)
			}
			ours, theirs := istioEntries(stderr), istioEntries(ctlErr.String())
			if ours != theirs {
				t.Fatalf("Istio's entries:\n%s\nistioctl's:\n%s", ours, theirs)
			}
			if c.want == "" && ours != "" || !strings.Contains(ours, c.want) {
				t.Fatalf("Istio's entries:\n%s\nwant %q", ours, c.want)
			}
		})
	}
}

// TestServeKeepsIstioLogOut: the server injects the same deployment — Istio reads its inject
// value, the pitfall says so — and neither its log nor the process's standard output or error
// (Istio's logger writes to standard output by default) carries what Istio's logger would say of
// it (TestInjectPrintsIstioLog: the CLI prints it).
func TestServeKeepsIstioLogOut(t *testing.T) {
	stdout, stderr := os.Stdout, os.Stderr
	restore := func() { os.Stdout, os.Stderr = stdout, stderr }
	t.Cleanup(restore)
	var files []*os.File
	for _, std := range []**os.File{&os.Stdout, &os.Stderr} {
		f, err := os.CreateTemp(t.TempDir(), "std")
		if err != nil {
			t.Fatal(err)
		}
		*std = f
		files = append(files, f)
	}

	srv := startServe(t, "--db", filepath.Join(t.TempDir(), "links.db"))
	body, _ := json.Marshal(map[string]string{"manifest": injectFalse})
	res, err := http.Post(srv.base+"/api/v1/inject", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(res.Body)
	res.Body.Close()
	srv.stop()
	<-srv.done
	restore()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(answer), `"inject-value"`) {
		t.Fatalf("status %d, no inject-value finding: %.500s", res.StatusCode, answer)
	}
	const line = "Invalid value for sidecar.istio.io/inject"
	if strings.Contains(srv.logs.String(), line) {
		t.Fatalf("Istio's log line is in the server's log:\n%s", srv.logs.String())
	}
	for _, f := range files {
		if b, err := os.ReadFile(f.Name()); err != nil || strings.Contains(string(b), line) {
			t.Fatalf("Istio's log line reached the process's %s (%v):\n%s", filepath.Base(f.Name()), err, b)
		}
	}
}

// TestRestated: an error entry of Istio's logger that says what a reported error says is left
// out (one message per error); a warning, or an error about something else, is kept.
func TestRestated(t *testing.T) {
	reported := []error{errors.New(`document 1, line 1: failed to run injection template: template: inject:192:12: executing "inject" at <.EstimatedConcurrency>: can't evaluate field EstimatedConcurrency`)}
	for entry, want := range map[string]bool{
		"2026-12-06T02:37:35.615373Z\terror\tInvalid template: template: inject:192:12: executing \"inject\" at <.EstimatedConcurrency>: can't evaluate field EstimatedConcurrency\n": true,
		"2026-12-06T02:37:35.615373Z\twarn\tInvalid template: template: inject:192:12: executing \"inject\" at <.EstimatedConcurrency>: can't evaluate field EstimatedConcurrency\n":  false,
		"2026-12-06T02:37:35.615373Z\terror\tsomething else entirely\tpod=a/b\n":                                                                                                      false,
		"2026-12-06T02:37:35.615373Z\terror\tInjection failed due to invalid annotations: 1 error occurred:\n\t* can't evaluate field EstimatedConcurrency\n\n":                       true,
		"2026-12-06T02:37:35.615373Z\terror\tInjection failed due to invalid annotations: 1 error occurred:\n\t* invalid value 'x'\n\n":                                               false,
		"not an entry\n": false,
	} {
		if got := restated(entry, reported); got != want {
			t.Errorf("restated(%q) = %v, want %v", entry, got, want)
		}
	}
}

// TestInjectSaysAnErrorOnce: a mesh whose template reads a field today's injector lacks (Istio
// 1.11–1.17's templates read .EstimatedConcurrency) fails with that error said once on stderr —
// istioctl says it twice, in Istio's log entry and in its own Error line.
func TestInjectSaysAnErrorOnce(t *testing.T) {
	in := defaultInstall(t)
	dir := writeFiles(t, map[string]string{"inject-config.yaml": "templates:\n  sidecar: |\n    metadata:\n      annotations:\n        concurrency: '{{ .EstimatedConcurrency }}'\n",
		"values.json": in.Values, "mesh.yaml": in.MeshConfigYAML})
	_, stderr, err := runCLI(t, testkit.Deployment, "inject", "-f", "-", "--revision", "default",
		"--injectConfigFile", filepath.Join(dir, "inject-config.yaml"), "--valuesFile", filepath.Join(dir, "values.json"), "--meshConfigFile", filepath.Join(dir, "mesh.yaml"))
	if err == nil {
		t.Fatal("the template ran")
	}
	if n := strings.Count(stderr, "can't evaluate field EstimatedConcurrency"); n != 1 {
		t.Fatalf("the error is said %d times:\n%s", n, stderr)
	}
}
