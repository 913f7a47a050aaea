package engine

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
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

// EmbeddedProxyImage is the proxy image the embedded Istio's default installation injects: its
// charts' own default hub and tag (a development build's, registry.istio.io/testing/proxyv2:latest),
// as its values name them; "" if this build has no build-time render. A release of the same line
// names its own hub and tag, so where this image appears the page says whose it is.
var EmbeddedProxyImage = sync.OnceValue(func() string {
	cm, ok := embeddedDefault()
	if !ok {
		return ""
	}
	var v struct {
		Global struct {
			Hub   string `json:"hub"`
			Tag   any    `json:"tag"`
			Proxy struct {
				Image string `json:"image"`
			} `json:"proxy"`
		} `json:"global"`
	}
	if json.Unmarshal([]byte(cm.Values), &v) != nil || v.Global.Hub == "" || v.Global.Proxy.Image == "" {
		return ""
	}
	return fmt.Sprintf("%s/%s:%v", v.Global.Hub, v.Global.Proxy.Image, v.Global.Tag)
})

// The default installation (the `default` profile, no options) is rendered once, at build time,
// into default_install.json.gz: its ConfigMaps and the istio.io/istio module they were rendered
// with. Starting an engine then parses them (~tens of ms) instead of running the charts (~0.3 s),
// which is most of what a CLI run cost. TestDefaultInstallFile renders afresh and fails if the file
// differs, so it cannot go stale; regenerate it with `go generate ./engine`.
//
//go:generate go test -count=1 -run ^TestDefaultInstallFile$ . -update
//go:embed default_install.json.gz
var defaultInstallGz []byte

// defaultInstallFile is the file's content.
type defaultInstallFile struct {
	// Module is the istio.io/istio module version the ConfigMaps were rendered with.
	Module     string     `json:"module"`
	ConfigMaps ConfigMaps `json:"configMaps"`
}

// embeddedDefault returns the build-time render of the default installation, if it was made with
// the Istio this binary embeds.
func embeddedDefault() (ConfigMaps, bool) {
	f, err := readDefaultInstall(defaultInstallGz)
	if err != nil || f.Module != Version().Module {
		return ConfigMaps{}, false
	}
	return f.ConfigMaps, true
}

func readDefaultInstall(gz []byte) (defaultInstallFile, error) {
	var f defaultInstallFile
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return f, err
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		return f, err
	}
	err = json.Unmarshal(b, &f)
	return f, err
}

// writeDefaultInstall encodes the file; the gzip header carries no name or time, so the same
// render always gives the same bytes.
func writeDefaultInstall(f defaultInstallFile) ([]byte, error) {
	js, err := json.MarshalIndent(f, "", " ")
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(js); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
