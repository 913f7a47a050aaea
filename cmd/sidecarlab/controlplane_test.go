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
	read := func(path string) *modfile.File {
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
	version := func(f *modfile.File, mod string) string {
		for _, r := range f.Require {
			if r.Mod.Path == mod {
				return r.Mod.Version
			}
		}
		return ""
	}
	root := filepath.Join("..", "..")
	main := read(filepath.Join(root, "go.mod"))
	// istiod is a tool of this module, so it is built from the Istio the engine embeds.
	if !slices.ContainsFunc(main.Tool, func(tl *modfile.Tool) bool { return tl.Path == "istio.io/istio/pilot/cmd/pilot-discovery" }) {
		t.Error("go.mod has no tool istio.io/istio/pilot/cmd/pilot-discovery (istiod, which make controlplane-bin builds)")
	}
	kube := read(filepath.Join(root, "controlplane", "go.mod"))
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
