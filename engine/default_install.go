package engine

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/json"
	"io"
)

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
