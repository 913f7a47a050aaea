package main

// The test cluster: a Kubernetes control plane with Istio installed as the engine renders it
// (internal/testcluster; its command meshup starts one, and scripts/testenv.sh runs it for `make
// test`). The conformance tests (conformance_test.go) ask it what sidecarlab predicts.
//
// Without a cluster (SIDECARLAB_TEST_KUBECONFIG, or SIDECARLAB_TEST_CLUSTER_READY while testenv.sh
// starts one: testkit.Kubeconfig) the conformance tests skip, unless
// SIDECARLAB_REQUIRE_CONTROLPLANE is set (scripts/testenv.sh sets it): then they fail.

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/sidecarlab/sidecarlab/internal/testcluster"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

const envRequire = "SIDECARLAB_REQUIRE_CONTROLPLANE"

// setFlags are the revision's install options as sidecarlab's --set flags.
func setFlags(r testcluster.Revision) []string {
	var out []string
	for _, s := range r.Set {
		out = append(out, "--set", s)
	}
	return out
}

// testCluster is the running cluster: a client with the admin's rights, and the kubeconfig.
type testCluster struct {
	kubeconfig string
	cfg        *rest.Config
	client     kubernetes.Interface
}

// connect is the client of the cluster of the first kubeconfig it is given, made once.
var (
	connectOnce sync.Once
	connected   *testCluster
	connectErr  error
)

func connect(kubeconfig string) (*testCluster, error) {
	connectOnce.Do(func() { connected, connectErr = newTestCluster(kubeconfig) })
	return connected, connectErr
}

// newTestCluster makes a client of the cluster kubeconfig names.
func newTestCluster(kubeconfig string) (*testCluster, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 200, 400
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &testCluster{kubeconfig: kubeconfig, cfg: cfg, client: client}, nil
}

// needCluster returns the test cluster, once it has checked that Istio is installed in it as
// testcluster.Install installs it.
func needCluster(t *testing.T) *testCluster {
	t.Helper()
	kubeconfig := testkit.Kubeconfig(t)
	if kubeconfig == "" {
		if os.Getenv(envRequire) != "" {
			t.Fatalf("%s is set but neither %s nor %s is: scripts/testenv.sh starts the cluster and sets them", envRequire, testkit.EnvKubeconfig, testkit.EnvClusterReady)
		}
		t.Skipf("no test cluster (%s); `make test` starts one, `make controlplane` too", testkit.EnvKubeconfig)
	}
	c, err := connect(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	ok, err := testcluster.Installed(context.Background(), c.client)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		t.Fatalf("the cluster of %s has not the test mesh (Istio revisions %v with their istiods running): start it with `make controlplane` or scripts/testenv.sh", c.kubeconfig, testcluster.Revisions)
	}
	return c
}

// TestClusterReadNoKubeconfig: with no kubeconfig where KUBECONFIG (or ~/.kube/config) points and
// not in a Pod, reading the cluster says so in our words, in the reader's language, and not
// client-go's KUBERNETES_MASTER hint; with a kubeconfig whose API server does not listen, it says
// that instead.
func TestClusterReadNoKubeconfig(t *testing.T) {
	if os.Getenv("KUBERNETES_SERVICE_HOST") != "" {
		t.Skip("running in a Pod: client-go reads the Pod's own cluster (KUBERNETES_SERVICE_HOST), so there is always a cluster")
	}
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing", "config")
	for _, c := range []struct {
		lang string
		args []string
		want string
	}{
		{"C", []string{"serve", "--addr", "127.0.0.1:0", "--cluster-read"}, "no cluster to read: no kubeconfig found at " + missing + " (KUBECONFIG), and this is not a Pod in a cluster"},
		{"ja_JP.UTF-8", []string{"serve", "--addr", "127.0.0.1:0", "--cluster-read"}, "読み取るクラスターがありません: " + missing + " (KUBECONFIG)にkubeconfigがなく"},
		{"ko_KR.UTF-8", []string{"serve", "--addr", "127.0.0.1:0", "--cluster-read"}, "읽을 클러스터가 없습니다: " + missing + " (KUBECONFIG)에 kubeconfig가 없고"},
	} {
		_, _, err := runEnv(t, map[string]string{"LANG": c.lang, "KUBECONFIG": missing}, "", c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "KUBERNETES_MASTER") {
			t.Errorf("%s %v: %v, want %q", c.lang, c.args, err, c.want)
		}
	}
	noMissing(t)

	// A kubeconfig whose API server does not listen: not "no kubeconfig", and "refused" because
	// it was.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	kubeconfig := filepath.Join(dir, "config")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "http://`+addr+`"}}]
users: [{name: u, user: {}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err = runEnv(t, map[string]string{"KUBECONFIG": kubeconfig}, testkit.Deployment, "inject", "-f", "-", "--kubeconfig", kubeconfig)
	if err == nil || strings.Contains(err.Error(), "no kubeconfig") || !strings.Contains(err.Error(), "could not connect to the API server (connection refused)") {
		t.Errorf("a kubeconfig whose server does not listen: %v", err)
	}
}
