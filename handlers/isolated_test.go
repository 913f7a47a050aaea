package handlers

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
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

// TestIsolatedExplainRefused: an installation whose templates run in a worker is not explained
// (yet): include=provenance is a 422 that says so, while the same request without it answers.
func TestIsolatedExplainRefused(t *testing.T) {
	h := isolatedServer(t)
	req := api.InjectRequest{Manifest: testkit.Deployment, Settings: engine.Settings{Install: engine.InstallOptions{Overlay: withTemplate(`{{ "plain" }}`)}}}
	if status, body, _ := postAPI(t, h, "?include=output", req); status != http.StatusOK {
		t.Fatalf("without provenance: %d %s", status, body)
	}
	if status, body, _ := postAPI(t, h, "?include=provenance", req); status != http.StatusUnprocessableEntity || !strings.Contains(body, "custom installation, whose templates run in an isolated worker") {
		t.Errorf("with provenance: %d %s", status, body)
	}
}
