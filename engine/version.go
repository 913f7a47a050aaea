package engine

import (
	_ "embed"
	"strings"
)

// istioVersion holds two lines: the release line of the embedded Istio (its VERSION file) and
// the istio.io/istio module version pinned in go.mod. It is a golden file: TestIstioVersion
// compares it with the module in use, and `go test ./engine -update` refreshes it after an
// upgrade. (Build info cannot serve here: test binaries carry no dependency versions.)
//
//go:embed istio_version.txt
var istioVersion string

// VersionInfo names the Istio inside this build.
type VersionInfo struct {
	// Istio is the release line, "1.31".
	Istio string `json:"istio"`
	// Module is the istio.io/istio module version pinned in go.mod.
	Module string `json:"module"`
	// Commit is the upstream commit the module version names.
	Commit string `json:"commit"`
}

// Version reports the embedded Istio.
func Version() VersionInfo {
	release, module, _ := strings.Cut(strings.TrimSpace(istioVersion), "\n")
	v := VersionInfo{Istio: strings.TrimSpace(release), Module: strings.TrimSpace(module)}
	// A pseudo-version ends in the commit: v0.0.0-20260827124520-eed52ebb66ad.
	if i := strings.LastIndexByte(v.Module, '-'); i >= 0 && len(v.Module)-i-1 == 12 {
		v.Commit = v.Module[i+1:]
	}
	return v
}
