package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"

	"github.com/sidecarlab/sidecarlab/admission"
)

// TestControlPlaneVersions: the test control plane's programs (controlplane/, a module of its own,
// and istiod, a tool of this one) are the versions sidecarlab answers for: istiod is built from
// the Istio the engine embeds,
// and Kubernetes' staging modules are replaced by the k8s.io/api version the engine uses, every
// one of them.
func TestControlPlaneVersions(t *testing.T) {
	version := func(f *modfile.File, mod string) string {
		for _, r := range f.Require {
			if r.Mod.Path == mod {
				return r.Mod.Version
			}
		}
		return ""
	}
	root := filepath.Join("..", "..")
	main := readModFile(t, filepath.Join(root, "go.mod"))
	// istiod is a tool of this module, so it is built from the Istio the engine embeds.
	if !slices.ContainsFunc(main.Tool, func(tl *modfile.Tool) bool { return tl.Path == "istio.io/istio/pilot/cmd/pilot-discovery" }) {
		t.Error("go.mod has no tool istio.io/istio/pilot/cmd/pilot-discovery (istiod, which make controlplane-bin builds)")
	}
	kube := readModFile(t, filepath.Join(root, "controlplane", "go.mod"))
	api := version(main, "k8s.io/api")
	if len(kube.Replace) < 30 {
		t.Fatalf("controlplane/go.mod replaces %d modules; Kubernetes 1.36 has 33 staging modules", len(kube.Replace))
	}
	if want := "v0." + strings.TrimPrefix(admission.CheckedKubernetes, "1.") + "."; !strings.HasPrefix(api, want) {
		t.Errorf("admission.CheckedKubernetes is %s, but the control plane is built at %s (k8s.io/api's version)", admission.CheckedKubernetes, api)
	}
	for _, r := range kube.Replace {
		if r.New.Path != r.Old.Path || r.New.Version != api {
			t.Errorf("controlplane/go.mod replaces %s with %s %s, want the same module at %s (k8s.io/api's version)", r.Old.Path, r.New.Path, r.New.Version, api)
		}
	}
}

// readModFile parses a go.mod file.
func readModFile(t *testing.T, path string) *modfile.File {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.Parse(path, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestControlPlaneSharesModuleVersions: the test control plane's module (controlplane/go.mod)
// requires every module it shares with sidecarlab's go.mod at the same version. Built with the
// same flags (the Makefile's GOFLAGS, -trimpath among them), a package both builds compile is
// then one entry of the go build cache, compiled once: on a machine with no cache, the control
// plane's Kubernetes reuses the k8s.io/api, client-go, gRPC, … the server's build compiled
// (docs/testing.md, seventh round; the Makefile builds this module after the server). A version apart in one module makes its packages, and every
// package above them, compile twice.
func TestControlPlaneSharesModuleVersions(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	main, cp := readModFile(t, filepath.Join(root, "go.mod")), readModFile(t, filepath.Join(root, "controlplane", "go.mod"))
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
