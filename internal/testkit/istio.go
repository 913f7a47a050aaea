package testkit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// istioModule is where the pinned istio.io/istio module sits in the module cache, and its
// version: looked up once per test process.
var istioModule = sync.OnceValues(func() ([2]string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}} {{.Version}}", "istio.io/istio").Output()
	dir, version, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	return [2]string{dir, version}, err
})

// IstioDir is the pinned istio.io/istio module's directory in the module cache: Istio's golden
// corpus, charts and sources are read from there, never copied.
func IstioDir(t testing.TB) string {
	t.Helper()
	return pinnedIstio(t)[0]
}

// IstioVersion is the pinned istio.io/istio module's version (a pseudo-version).
func IstioVersion(t testing.TB) string {
	t.Helper()
	return pinnedIstio(t)[1]
}

func pinnedIstio(t testing.TB) [2]string {
	t.Helper()
	m, err := istioModule()
	if err != nil || m[0] == "" {
		t.Fatalf("locate istio.io/istio in the module cache (go list -m): %v", err)
	}
	return m
}

var istioctl = sync.OnceValues(func() (string, error) {
	if bin := os.Getenv("SIDECARLAB_ISTIOCTL"); bin != "" {
		if !filepath.IsAbs(bin) {
			return "", fmt.Errorf("SIDECARLAB_ISTIOCTL=%q: want an absolute path", bin)
		}
		_, err := os.Stat(bin)
		return bin, err
	}
	out, err := exec.Command("go", "tool", "-n", "istioctl").Output()
	return strings.TrimSpace(string(out)), err
})

// Istioctl is the pinned Istio's istioctl (a tool in go.mod), built once — or found in the build
// cache — per test process: `go tool -n istioctl` (~2.5 CPU-seconds, hashing the tool's
// sources), or the one SIDECARLAB_ISTIOCTL names, which `make unit` looks up once for every
// package's tests.
func Istioctl(t testing.TB) string {
	t.Helper()
	bin, err := istioctl()
	if err != nil || bin == "" {
		t.Fatalf("build istioctl (go tool -n istioctl): %v", err)
	}
	return bin
}
