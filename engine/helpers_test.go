package engine

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"sync"
	"testing"

	istiolog "istio.io/istio/pkg/log"

	"github.com/sidecarlab/sidecarlab/engine/diff"
	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

var (
	sharedOnce sync.Once
	shared     *Engine
	sharedErr  error
)

// testEngine is one engine for the package's tests: the default render happens once. It trusts
// its install options, as the CLI does: these tests hold what Istio does with any of them.
func testEngine(t testing.TB) *Engine {
	t.Helper()
	sharedOnce.Do(func() { shared, sharedErr = New(context.Background(), Options{InstallPolicy: TrustedInstalls()}) })
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return shared
}

func istioTestdata(t testing.TB, name string) string {
	return filepath.Join(testkit.IstioDir(t), "pkg/kube/inject/testdata/inject", name)
}

// corpusManifests are the inputs of Istio's golden corpus and of ours.
func corpusManifests(t testing.TB) []string {
	t.Helper()
	var files []string
	for _, dir := range []string{istioTestdata(t, ""), "testdata/corpus"} {
		names, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, names...)
	}
	if len(files) < 100 {
		t.Fatalf("%d manifests found, want Istio's corpus and ours", len(files))
	}
	return files
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./engine -update to create it)", err)
	}
	if string(want) != string(got) {
		t.Errorf("%s differs from golden; run go test ./engine -update and review the diff\n%s", path, diff.Unified(string(want), string(got)))
	}
}

func mustInject(t testing.TB, e *Engine, manifest []byte, steps []input.Step, s Settings) *Injection {
	t.Helper()
	r, err := e.Inject(context.Background(), manifest, steps, s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestMain(m *testing.M) {
	flag.Parse()
	testkit.CollectLess()
	// Istio's library logs its fake clusters and rejected annotations; the engine reports those as
	// results, so keep test output readable.
	o := istiolog.DefaultOptions()
	o.SetDefaultOutputLevel(istiolog.OverrideScopeName, istiolog.NoneLevel)
	_ = istiolog.Configure(o)
	code := m.Run()
	if ctlConfigDir != "" {
		os.RemoveAll(ctlConfigDir)
	}
	os.Exit(code)
}

// changesOf, unifiedOf and textOf are a row's changes, its unified diff and a timeline's text,
// computed without a deadline.
func changesOf(t testing.TB, r *StepResult) []diff.Change {
	t.Helper()
	c, err := r.Changes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func unifiedOf(t testing.TB, r *StepResult) string {
	t.Helper()
	u, err := r.Unified(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
