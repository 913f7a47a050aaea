package testkit

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// fatalTB records a Fatalf and stops the goroutine, as testing.T does.
type fatalTB struct {
	testing.TB
	fatal string
}

func (f *fatalTB) Helper() {}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// kubeconfigOf runs Kubeconfig as a test would and returns what it returned or why it failed.
func kubeconfigOf(t *testing.T) (got, fatal string) {
	tb := &fatalTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		got = Kubeconfig(tb)
	}()
	<-done
	return got, tb.fatal
}

// TestKubeconfig: a kubeconfig named outright is the one; while testenv.sh's cluster starts,
// the tests wait for its ready file and read the kubeconfig or the reason it failed from it;
// with neither there is no cluster.
func TestKubeconfig(t *testing.T) {
	dir := t.TempDir()
	ready := filepath.Join(dir, "ready")

	t.Setenv(EnvKubeconfig, "")
	t.Setenv(EnvClusterReady, "")
	if got, fatal := kubeconfigOf(t); got != "" || fatal != "" {
		t.Errorf("no cluster: %q, %q", got, fatal)
	}

	t.Setenv(EnvKubeconfig, "/named/kubeconfig")
	t.Setenv(EnvClusterReady, ready) // not written: the named one is used without waiting
	if got, fatal := kubeconfigOf(t); got != "/named/kubeconfig" || fatal != "" {
		t.Errorf("a named kubeconfig: %q, %q", got, fatal)
	}

	// The cluster starting: the file comes while the test waits (or before; either way).
	t.Setenv(EnvKubeconfig, "")
	go func() {
		if err := os.WriteFile(ready+".tmp", []byte("kubeconfig: /tmp/cluster/kubeconfig\n"), 0o600); err == nil {
			_ = os.Rename(ready+".tmp", ready)
		}
	}()
	if got, fatal := kubeconfigOf(t); got != "/tmp/cluster/kubeconfig" || fatal != "" {
		t.Errorf("a cluster that became ready: %q, %q", got, fatal)
	}

	// A cluster that could not start fails the test, saying why.
	if err := os.WriteFile(ready, []byte("failed: meshup exited before the cluster was ready; the end of its output:\nno etcd\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, fatal := kubeconfigOf(t); got != "" || !strings.Contains(fatal, "did not start") || !strings.Contains(fatal, "no etcd") {
		t.Errorf("a cluster that failed: %q, %q", got, fatal)
	}
}
