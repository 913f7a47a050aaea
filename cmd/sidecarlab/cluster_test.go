package main

// The test cluster: a Kubernetes control plane with Istio installed as the engine renders it
// (internal/testcluster; its command meshup starts one, and scripts/testenv.sh runs it for `make
// test`). The conformance tests (conformance_test.go) ask it what sidecarlab predicts.
//
// Without SIDECARLAB_TEST_KUBECONFIG the conformance tests skip, unless
// SIDECARLAB_REQUIRE_CONTROLPLANE is set (scripts/testenv.sh sets it): then they fail.

import (
	"context"
	"os"
	"sync"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/sidecarlab/sidecarlab/internal/testcluster"
)

const (
	envKubeconfig = "SIDECARLAB_TEST_KUBECONFIG"
	envRequire    = "SIDECARLAB_REQUIRE_CONTROLPLANE"
)

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

var connect = sync.OnceValues(func() (*testCluster, error) {
	kubeconfig := os.Getenv(envKubeconfig)
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
})

// needCluster returns the test cluster, once it has checked that Istio is installed in it as
// testcluster.Install installs it.
func needCluster(t *testing.T) *testCluster {
	t.Helper()
	if os.Getenv(envKubeconfig) == "" {
		if os.Getenv(envRequire) != "" {
			t.Fatalf("%s is set but %s is not: scripts/testenv.sh starts the cluster and sets it", envRequire, envKubeconfig)
		}
		t.Skipf("no test cluster (%s); `make test` starts one, `make controlplane` too", envKubeconfig)
	}
	c, err := connect()
	if err != nil {
		t.Fatal(err)
	}
	ok, err := testcluster.Installed(context.Background(), c.client)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		t.Fatalf("the cluster of %s has not the test mesh (Istio revisions %v with their istiods running): start it with `make controlplane` or scripts/testenv.sh", envKubeconfig, testcluster.Revisions)
	}
	return c
}
