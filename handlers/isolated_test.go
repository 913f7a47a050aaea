package handlers

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sidecarlab/sidecarlab/engine"
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
// injection slot, so a request that still held it after its answer would block the next one.
func isolatedServer(t *testing.T, timeout time.Duration) http.Handler {
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
	return New(slog.New(slog.NewTextHandler(os.Stderr, nil)), func() Engine { return isoEng }, Config{MaxConcurrent: 1, QueueWait: time.Second, RequestTimeout: timeout, Links: newMemLinks()})
}

// TestIsolatedTemplates: with templates allowed, the reproductions of issue 10 run in a worker:
// the environment it reads is empty, the loop is killed at the request's deadline, the
// allocation at the worker's memory limit; each answers at once with a 4xx or 503, and the one
// injection slot is free for the next request.
func TestIsolatedTemplates(t *testing.T) {
	t.Setenv(secretEnv, canary)
	h := isolatedServer(t, 3*time.Second)
	cases := []struct {
		name   string
		o      engine.InstallOptions
		status int
		want   string
	}{
		{"a template printing the environment", engine.InstallOptions{Overlay: withTemplate(`{{ env "` + secretEnv + `" "" }}`)}, http.StatusOK, "leak: got-\n"},
		{"a template looping for a minute", engine.InstallOptions{Overlay: withTemplate(`{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}`)}, http.StatusServiceUnavailable, "took too long"},
		{"a template allocating 2 GB", engine.InstallOptions{Overlay: withTemplate(`{{ $a := repeat 2000000000 "x" }}`)}, http.StatusUnprocessableEntity, "went over the memory"},
		{"a value Helm's tpl runs, looping", engine.InstallOptions{Overlay: withInitContainer(`{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}busybox`)}, http.StatusServiceUnavailable, "took too long"},
		{"the server's chart directory, still", engine.InstallOptions{Set: []string{"installPackagePath=" + istioManifests(t)}}, http.StatusUnprocessableEntity, "names a directory on the server"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := State{Manifest: deploymentYAML, Steps: selectMine, Settings: engine.Settings{Install: c.o}}
			start := time.Now()
			r := get(t, h, "/injected.yaml?s="+EncodeState(st))
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("took %v", took)
			}
			if r.status != c.status || !strings.Contains(r.body, c.want) {
				t.Fatalf("status %d, want %d with %q:\n%s", r.status, c.status, c.want, r.body[:min(4000, len(r.body))])
			}
			if strings.Contains(r.body, canary) {
				t.Fatal("the answer holds the server's secret")
			}
			if ok := get(t, h, stateLink(t, State{Manifest: deploymentYAML})); ok.status != http.StatusOK {
				t.Fatalf("a normal request after it: %d", ok.status)
			}
		})
	}
}

// TestIsolatedNoSecretInAnyOutput: the canary sweep of TestNoSecretInAnyOutput on the isolated
// server, where the templates do run. The name a template resolves needs DNS (the worker's
// network namespace has none); TestNoNetwork in package sandbox shows the worker reaches nothing.
func TestIsolatedNoSecretInAnyOutput(t *testing.T) {
	t.Setenv(secretEnv, canary)
	checkNoSecret(t, isolatedServer(t, 15*time.Second), []string{`{{ getHostByName "kubernetes.default.svc.cluster.local" }}`})
}
