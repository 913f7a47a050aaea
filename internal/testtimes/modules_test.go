package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
)

// TestControlPlaneSharesModuleVersions: the test control plane's module (controlplane/go.mod)
// requires every module it shares with sidecarlab's go.mod at the same version. Built with the
// same flags (the Makefile's GOFLAGS, -trimpath among them), a package both builds compile is
// then one entry of the go build cache, compiled once: on a machine with no cache, the control
// plane's Kubernetes reuses the k8s.io/api, client-go, gRPC, … the server's build compiled
// (docs/testing.md, seventh round). A version apart in one module makes its packages, and every
// package above them, compile twice.
func TestControlPlaneSharesModuleVersions(t *testing.T) {
	t.Parallel()
	read := func(path string) *modfile.File {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := modfile.Parse(path, data, nil)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	root := filepath.Join("..", "..")
	main, cp := read(filepath.Join(root, "go.mod")), read(filepath.Join(root, "controlplane", "go.mod"))
	if apart := versionsApart(main, cp); len(apart) > 0 {
		t.Errorf("controlplane/go.mod and go.mod select different versions of modules both build, so their packages compile twice on a cold cache; align them (go get MODULE@VERSION in the module with the older one):\n  %s",
			strings.Join(apart, "\n  "))
	}
	// The check can fail: the same pair with one shared module a version apart.
	for _, r := range cp.Require {
		if r.Mod.Path == "google.golang.org/grpc" {
			r.Mod.Version = "v1.0.0"
		}
	}
	if apart := versionsApart(main, cp); !slices.Equal(apart, []string{"google.golang.org/grpc: go.mod " + selected(main)["google.golang.org/grpc"] + ", controlplane/go.mod v1.0.0"}) {
		t.Errorf("with gRPC a version apart: %q", apart)
	}
}

// versionsApart lists the modules two go.mod files both require at different versions (after
// their replace lines), as "path: go.mod V1, controlplane/go.mod V2".
func versionsApart(main, cp *modfile.File) []string {
	a, b := selected(main), selected(cp)
	var apart []string
	for path, v := range b {
		if w, ok := a[path]; ok && w != v {
			apart = append(apart, path+": go.mod "+w+", controlplane/go.mod "+v)
		}
	}
	slices.Sort(apart)
	return apart
}

// selected maps each module a go.mod requires to its version, or to its replacement's where a
// replace line gives one at a version (go.mod lists every module its build needs, since Go 1.17).
func selected(f *modfile.File) map[string]string {
	m := make(map[string]string, len(f.Require))
	for _, r := range f.Require {
		m[r.Mod.Path] = r.Mod.Version
	}
	for _, r := range f.Replace {
		if _, ok := m[r.Old.Path]; ok && r.New.Version != "" && r.New.Path == r.Old.Path {
			m[r.Old.Path] = r.New.Version
		}
	}
	return m
}
