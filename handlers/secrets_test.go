package handlers

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/secrets"
)

// TestScanAndRedactOwnMesh: a shared mesh's texts are scanned for secrets like the rest of the
// state (a proxyMetadata secret in the mesh config, a known-format key in the values), named by
// part and line, and redacted; a mesh without any has no finding and is kept byte for byte.
func TestScanAndRedactOwnMesh(t *testing.T) {
	const awsKey = "AKIAZ52HGXYRN4WBTEST"
	clean := engine.OwnMesh{InjectorConfig: "policy: enabled\n", Values: `{"global":{"meshID":"mesh1"}}`, MeshConfig: "defaultConfig:\n  holdApplicationUntilProxyStarts: true\n"}
	if got := scanSettings(engine.Settings{Install: engine.InstallOptions{Mesh: clean}}); len(got) != 0 {
		t.Fatalf("a clean mesh: %+v", got)
	}
	dirty := clean
	dirty.Values = `{"global":{"meshID":"` + awsKey + `"}}`
	dirty.MeshConfig = "defaultConfig:\n  proxyMetadata:\n    DB_PASSWORD: hunter2\n"
	s := engine.Settings{Install: engine.InstallOptions{Mesh: dirty}}
	var where []string
	for _, f := range scanSettings(s) {
		if strings.Contains(f.Excerpt+f.Path, "hunter2") || strings.Contains(f.Excerpt+f.Path, awsKey) {
			t.Errorf("a finding shows the secret: %+v", f)
		}
		where = append(where, fmt.Sprintf("%s:%d:%s", f.Setting, f.Line, strings.SplitN(f.Path, ":", 2)[0]))
	}
	if want := []string{"install.mesh:1:values", "install.mesh:3:meshConfig"}; !slices.Equal(where, want) {
		t.Fatalf("findings %v, want %v", where, want)
	}
	red, err := redactSettings(s)
	if err != nil {
		t.Fatal(err)
	}
	m := red.Install.Mesh
	if strings.Contains(m.Values+m.MeshConfig, "hunter2") || strings.Contains(m.Values, awsKey) || m.InjectorConfig != clean.InjectorConfig {
		t.Fatalf("redacted: %+v", m)
	}
	if got := scanSettings(red); len(got) != 0 {
		t.Fatalf("after redaction: %+v", got)
	}
}

// TestSecretsSeam: what package secrets gives back is put back in its place — ordinary settings
// and steps come back exactly as they were — and a document it cannot redact is an
// engine.InputError of the manifest, as the engine's own are.
func TestSecretsSeam(t *testing.T) {
	s := engine.Settings{Mode: engine.ModeNative, KubernetesVersion: "1.34",
		Install: engine.InstallOptions{Set: []string{"values.global.proxy.holdApplicationUntilProxyStarts=true"}, Overlay: "spec: {}\n",
			Mesh: engine.OwnMesh{MeshConfig: "defaultConfig: {}\n", Istio: "1.31.0"}, Revision: "canary"},
		Namespace: engine.Namespace{Name: "shop", Labels: map[string]string{"istio-injection": "enabled"}}}
	if r, err := redactSettings(s); err != nil || !reflect.DeepEqual(r, s) {
		t.Errorf("ordinary settings redacted: %+v %v", r, err)
	}
	steps := []engine.Step{{Key: "sidecar.istio.io/proxyCPU", Value: "200m"}, {Key: "example.com/gone", Remove: true}}
	if got := redactSteps(steps); !slices.Equal(got, steps) {
		t.Errorf("ordinary steps redacted: %+v", got)
	}
	if redactSteps(nil) != nil {
		t.Error("no steps became some")
	}
	err := redactError(&secrets.Error{Doc: 2, Line: 7, ID: "redact-differs", Msg: "this document could not be redacted"})
	if ie, ok := err.(*engine.InputError); !ok || ie.Doc != 2 || ie.Line != 7 || ie.Field != "manifest" || ie.ID != "redact-differs" || ie.Msg == "" {
		t.Errorf("redactError: %#v", err)
	}
}
