package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
	"github.com/sidecarlab/sidecarlab/permalink"
	"github.com/sidecarlab/sidecarlab/sandbox"
)

// workerMain is the test binary as the isolated worker (`sidecarlab worker`).
func workerMain() {
	if err := sandbox.EngineWorker(context.Background(), os.Args[2:], os.Stdin); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

var (
	isoOnce sync.Once
	isoEng  *engine.Engine
	isoErr  error
)

// isolatedLimits are the workers' limits in these tests: a render needs ~192 MiB and a second.
var isolatedLimits = sandbox.Limits{CPUSeconds: 5, MemoryBytes: 384 << 20}

// isolatedServer is the real router over an engine as `serve --allow-custom-templates` builds
// it: user templates allowed, run in workers of the sandbox (this test binary as the worker); one
// injection slot, so a request that still held it after its answer would block the next one. Its
// deadlines are far away (testConfig): a render in a worker takes a second of CPU, many on a busy
// machine; a test of the deadline gives its request one of its own (withDeadline).
func isolatedServer(t *testing.T) http.Handler {
	t.Helper()
	isoOnce.Do(func() {
		var sb *sandbox.Sandbox
		sb, isoErr = sandbox.New(context.Background(), sandbox.Config{Command: []string{os.Args[0], "worker"}, Limits: isolatedLimits})
		if isoErr != nil {
			return
		}
		isoEng, isoErr = engine.New(context.Background(), engine.Options{
			InstallPolicy: engine.InstallPolicy{AllowCustomTemplates: true},
			Isolator:      sandbox.Isolator(sb),
		})
	})
	if isoErr != nil {
		t.Fatal(isoErr)
	}
	return New(slog.New(slog.NewTextHandler(os.Stderr, nil)), func() Engine { return isoEng }, testConfig(Config{MaxConcurrent: 1, Links: newMemLinks()}))
}

// TestIsolatedTemplates: with templates allowed, the reproductions of issue 10 run in a worker:
// the environment it reads is empty, the loop is killed at the request's deadline, the
// allocation at the worker's memory limit; each answers with a 4xx or 503, and the one injection
// slot is free for the next request.
//
// The loops take hours (10¹⁰ turns): the request's own deadline (withDeadline, 1 s) always comes
// first, whatever the machine's speed. That the worker was killed there, not left to run into
// its CPU limit (5 s), is measured in work: the CPU time the worker used, which a single-threaded
// loop cut off after 1 s of wall time keeps well under the limit however busy the machine is. The
// installation with the looping injection template is rendered first (warm: a request that does
// not select the template), so that the deadline falls in the injection's worker, which loops.
func TestIsolatedTemplates(t *testing.T) {
	t.Setenv(secretEnv, canary)
	h := isolatedServer(t)
	const loop = `{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}`
	cases := []struct {
		name     string
		o        engine.InstallOptions
		warm     bool
		deadline time.Duration // the request's own; 0: the server's, far away
		status   int
		want     string
	}{
		{"a template printing the environment", engine.InstallOptions{Overlay: withTemplate(`{{ env "` + secretEnv + `" "" }}`)}, false, 0, http.StatusOK, "leak: got-\n"},
		{"a template looping for hours", engine.InstallOptions{Overlay: withTemplate(loop)}, true, time.Second, http.StatusServiceUnavailable, "took too long"},
		{"a template allocating 2 GB", engine.InstallOptions{Overlay: withTemplate(`{{ $a := repeat 2000000000 "x" }}`)}, false, 0, http.StatusUnprocessableEntity, "went over the memory"},
		// Near its memory limit the worker's garbage collector works hard, so which of its limits
		// it reaches first, memory or CPU time, depends on the machine: either is the limit's 422.
		{"a template doubling a string 40 times", engine.InstallOptions{Overlay: withTemplate(`{{$s:="xxxxxxxx"}}{{range until 40}}{{$s = print $s $s}}{{end}}`)}, false, 0, http.StatusUnprocessableEntity, "went over the"},
		{"a value Helm's tpl runs, looping", engine.InstallOptions{Overlay: withInitContainer(loop + `busybox`)}, false, time.Second, http.StatusServiceUnavailable, "took too long"},
		{"the server's chart directory, still", engine.InstallOptions{Set: []string{"installPackagePath=" + istioManifests(t)}}, false, 0, http.StatusUnprocessableEntity, "names a directory on the server"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.warm {
				if r := get(t, h, "/injected.yaml?s="+permalink.Encode(api.State{Manifest: testkit.Deployment, Settings: engine.Settings{Install: c.o}})); r.status != http.StatusOK {
					t.Fatalf("rendering the installation first: status %d: %.2000s", r.status, r.body)
				}
			}
			st := api.State{Manifest: testkit.Deployment, Steps: selectMine, Settings: engine.Settings{Install: c.o}}
			req := httptest.NewRequest(http.MethodGet, "/injected.yaml?s="+permalink.Encode(st), nil)
			if c.deadline > 0 {
				req = withDeadline(t, req, c.deadline)
			}
			cpu := workersCPU()
			r := do(t, h, req)
			if used := workersCPU() - cpu; c.deadline > 0 && used >= time.Duration(isolatedLimits.CPUSeconds)*time.Second {
				t.Errorf("the worker used %v of CPU, its limit: it was not killed at the request's deadline", used)
			}
			if r.status != c.status || !strings.Contains(r.body, c.want) {
				t.Fatalf("status %d, want %d with %q:\n%s", r.status, c.status, c.want, testid(r, "error").Text()+" "+r.body[:min(4000, len(r.body))])
			}
			if strings.Contains(r.body, canary) {
				t.Fatal("the answer holds the server's secret")
			}
			if ok := get(t, h, stateLink(t, api.State{Manifest: testkit.Deployment})); ok.status != http.StatusOK {
				t.Fatalf("a normal request after it: %d", ok.status)
			}
		})
	}
}

// TestIsolatedNoSecretInAnyOutput: the canary sweep of TestNoSecretInAnyOutput on the isolated
// server, where the templates do run. The name a template resolves needs DNS (the worker's
// network namespace has none); TestNoNetwork in package sandbox shows the worker reaches nothing.
func TestIsolatedNoSecretInAnyOutput(t *testing.T) {
	if testing.Short() {
		t.Skip("renders templates in sandbox workers for every route; run without -short")
	}
	t.Setenv(secretEnv, canary)
	checkNoSecret(t, isolatedServer(t), true, []string{`{{ getHostByName "kubernetes.default.svc.cluster.local" }}`})
}

// workersCPU is the CPU time, user and system, of the test's child processes that have ended
// (the sandbox waits for its workers).
func workersCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestIsolatedExplain: an installation whose templates run in a worker is explained there, and
// the explanation that comes back is the one this process makes of the same installation (an
// engine that runs templates in process): the mesh's own template by its own lines, Istio's by
// Istio's. An explanation over what the server takes from a worker is a 422 that says so, where
// the injection alone fits.
func TestIsolatedExplain(t *testing.T) {
	h := isolatedServer(t)
	req := api.InjectRequest{Manifest: testkit.Deployment, Steps: selectMine, Settings: engine.Settings{Install: engine.InstallOptions{Overlay: withTemplate(`{{ "plain" }}`)}}}
	status, body, _ := postAPI(t, h, "?include=provenance", req)
	if status != http.StatusOK {
		t.Fatalf("with provenance: %d %s", status, body)
	}
	var got api.InjectResponse
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(t.Context(), engine.Options{InstallPolicy: engine.InstallPolicy{AllowCustomTemplates: true}})
	if err != nil {
		t.Fatal(err)
	}
	want, err := eng.Explain(t.Context(), []byte(req.Manifest), req.Steps, req.Settings)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Provenance, want) {
		t.Fatalf("the worker's explanation (%d leaves) is not this process's (%d leaves)", len(got.Provenance), len(want))
	}
	whose := map[string]int{}
	for _, p := range got.Provenance {
		whose[p.Template+"/"+p.Whose]++
		if p.Path == "spec.template.metadata.annotations.leak" && (p.Template != "mine" || p.Whose != "mesh" || p.Line != 3 || !strings.Contains(p.Text, `leak: 'got-{{ "plain" }}'`)) {
			t.Errorf("the mesh's own template's leaf: %+v", p)
		}
	}
	if whose["mine/mesh"] != 1 || whose["sidecar/istio"] < 50 {
		t.Errorf("leaves by template and whose: %v", whose)
	}
	// The why page of the mesh's own leaf, from the worker's explanation.
	why := get(t, h, "/why?"+url.Values{"s": {permalink.Encode(api.State{Manifest: req.Manifest, Steps: req.Steps, Settings: req.Settings})}, "path": {"spec.template.metadata.annotations.leak"}}.Encode())
	if why.status != http.StatusOK {
		t.Fatalf("why: %d %s", why.status, why.body)
	}
	if wrote, says := why.doc.Find(`[data-testid="why-lines"] tr.wrote`).Text(), why.doc.Find(`[data-testid="why-says"]`).Text(); !strings.Contains(wrote, `got-{{ "plain" }}`) || !strings.Contains(says, "mine") {
		t.Errorf("why: wrote %q, says %q", wrote, says)
	}

	sb, err := sandbox.New(t.Context(), sandbox.Config{Command: []string{os.Args[0], "worker"}, Limits: isolatedLimits, MaxOutput: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	small, err := engine.New(t.Context(), engine.Options{InstallPolicy: engine.InstallPolicy{AllowCustomTemplates: true}, Isolator: sandbox.Isolator(sb)})
	if err != nil {
		t.Fatal(err)
	}
	// The render's answer is ~120 KB, four injections' ~40 KB, their explanation ~600 KB.
	four := []byte(strings.Repeat(testkit.Deployment+"\n---\n", 4))
	if _, err := small.Inject(t.Context(), four, req.Steps, req.Settings); err != nil {
		t.Fatalf("the injection over a small bound: %v", err)
	}
	_, err = small.Explain(t.Context(), four, req.Steps, req.Settings)
	var ie *input.Error
	if !errors.As(err, &ie) || ie.ID != "explain-too-large" || !strings.Contains(ie.Text(), "256 KiB") {
		t.Errorf("the explanation over a small bound: %v", err)
	}
}
