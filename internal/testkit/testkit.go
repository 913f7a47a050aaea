// Package testkit holds what the tests of several packages (engine, handlers, cmd, e2e) build
// their cases from, so that each does not keep its own copy: generated manifests and the one way
// to wait for a condition. Only tests import it.
package testkit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// Deployment is the smallest Deployment a test injects: one container, web, of nginx.
const Deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: web
        image: nginx
`

// AliasList is a List of n copies of Deployment, in flow style, written as an anchor and n−1
// aliases: a few hundred bytes (a link of 376 in issue 40) that Kubernetes' reader decodes into
// n workloads.
func AliasList(n int) string {
	return "apiVersion: v1\nkind: List\nitems: [&d {apiVersion: apps/v1, kind: Deployment, metadata: {name: web}, spec: {selector: {matchLabels: {app: web}}, " +
		"template: {metadata: {labels: {app: web}}, spec: {containers: [{name: web, image: nginx}]}}}}" + strings.Repeat(", *d", n-1) + "]\n"
}

// PodList is a List of n Pods of one container each, every item written out.
func PodList(n int) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: List\nitems:\n")
	for i := range n {
		fmt.Fprintf(&b, "- {apiVersion: v1, kind: Pod, metadata: {name: p%d}, spec: {containers: [{name: app, image: nginx}]}}\n", i)
	}
	return b.String()
}

// Pods are n Pods of one container each; with depth > 0 each also carries a top-level value
// nested depth lists deep: a few kilobytes of link that are costly to decode, which the servers'
// work limits must refuse before decoding them.
func Pods(n, depth int) string {
	docs := make([]string, n)
	for i := range docs {
		docs[i] = fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p%d\nspec:\n  containers:\n  - name: app\n    image: nginx\n", i)
		if depth > 0 {
			docs[i] += "extra: " + strings.Repeat("[", depth) + strings.Repeat("]", depth) + "\n"
		}
	}
	return strings.Join(docs, "---\n")
}

// Patience bounds every wait of the tests: far above what any machine, however busy, takes for
// what is waited for, so that it only turns a hang into a failure.
const Patience = 2 * time.Minute

// WaitFor polls cond until it holds; if it does not within Patience, the test fails saying what
// it waited for. No test waits a fixed time for something to happen; it waits for the thing.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(Patience); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %v", what, Patience)
		}
	}
}

// Binary is the sidecarlab binary the tests run as a process: the one `make test` built once
// for the whole run (SIDECARLAB_BIN, an absolute path), or else one built into dir now (go
// build's cache makes that a link when the packages are compiled already).
func Binary(dir string) (string, error) {
	if bin := os.Getenv("SIDECARLAB_BIN"); bin != "" {
		if !filepath.IsAbs(bin) {
			return "", fmt.Errorf("SIDECARLAB_BIN=%q: want an absolute path", bin)
		}
		if _, err := os.Stat(bin); err != nil {
			return "", fmt.Errorf("SIDECARLAB_BIN: %w", err)
		}
		return bin, nil
	}
	bin := filepath.Join(dir, "sidecarlab")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/sidecarlab/sidecarlab/cmd/sidecarlab").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build ./cmd/sidecarlab: %v\n%s", err, out)
	}
	return bin, nil
}

// CollectLess makes the test process collect garbage a quarter as often (GOGC 400, bounded by a
// 3 GiB soft limit): the tests of engine, handlers, cmd/sidecarlab and admission spent ~22 % of
// their CPU in the collector (engine's: 71 → 55 CPU-s, ~0.4 → ~0.9 GB resident). It sets the
// test process alone, from TestMain, never the environment: servers, sandbox workers and istioctl
// that the tests start keep the runtime's defaults and the limits they are tested with.
func CollectLess() {
	debug.SetGCPercent(400)
	debug.SetMemoryLimit(3 << 30)
}

// The test cluster's environment: SIDECARLAB_TEST_KUBECONFIG names a running cluster's kubeconfig
// (`make controlplane` prints one); scripts/testenv.sh starts the cluster beside the tests and
// names in SIDECARLAB_TEST_CLUSTER_READY the file it writes once the cluster is ready ("kubeconfig:
// PATH") or could not start ("failed: WHY"), so that the tests build and run meanwhile.
const (
	EnvKubeconfig   = "SIDECARLAB_TEST_KUBECONFIG"
	EnvClusterReady = "SIDECARLAB_TEST_CLUSTER_READY"
)

// ClusterStart bounds the wait for the test cluster: its programs' first build (~12 minutes
// alone on 2 cores, longer beside the tests' own) and meshup's own bounds (2 minutes for the API
// server, 5 for Istio), with room; testenv.sh writes the ready file when either ends before the
// cluster is ready, so only a hang waits this long.
const ClusterStart = 45 * time.Minute

// Kubeconfig is the test cluster's kubeconfig, waiting for the cluster when testenv.sh is still
// starting it; "" when there is none. A cluster that could not start fails the test with why.
func Kubeconfig(t testing.TB) string {
	t.Helper()
	if k := os.Getenv(EnvKubeconfig); k != "" {
		return k
	}
	ready := os.Getenv(EnvClusterReady)
	if ready == "" {
		return ""
	}
	var b []byte
	for deadline := time.Now().Add(ClusterStart); ; time.Sleep(50 * time.Millisecond) {
		var err error
		if b, err = os.ReadFile(ready); err == nil && len(b) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the test cluster (%s=%s): not ready after %v", EnvClusterReady, ready, ClusterStart)
		}
	}
	s := strings.TrimSpace(string(b))
	if k, ok := strings.CutPrefix(s, "kubeconfig: "); ok {
		return k
	}
	t.Fatalf("the test cluster did not start (%s):\n%s", ready, s)
	return ""
}

// WriteFiles writes files (a name relative to dir → its content) under dir, making folders.
func WriteFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// PostgresDSN is the test database, SIDECARLAB_TEST_POSTGRES: `make test` (scripts/testenv.sh)
// starts a throwaway PostgreSQL and sets it, and sets SIDECARLAB_REQUIRE_POSTGRES so that a
// missing DSN fails the test there (and under CI); a plain `go test` without it skips.
func PostgresDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv("SIDECARLAB_TEST_POSTGRES")
	if dsn == "" {
		if os.Getenv("SIDECARLAB_REQUIRE_POSTGRES") != "" || os.Getenv("CI") != "" {
			t.Fatal("SIDECARLAB_TEST_POSTGRES is not set; scripts/testenv.sh (make test) must start PostgreSQL")
		}
		t.Skip("SIDECARLAB_TEST_POSTGRES not set; `make test` starts a throwaway PostgreSQL and sets it")
	}
	return dsn
}
