package engine

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestDefaultInstallFile renders the default installation afresh from Istio's charts and checks
// that the build-time render embedded in the binary is the same, made with the same Istio; with
// -update (or `go generate ./engine`) it rewrites the file.
func TestDefaultInstallFile(t *testing.T) {
	cm, err := renderConfigMaps(InstallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := writeDefaultInstall(defaultInstallFile{Module: Version().Module, ConfigMaps: cm})
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("default_install.json.gz", want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(defaultInstallGz, want) {
		got, err := readDefaultInstall(defaultInstallGz)
		t.Fatalf("default_install.json.gz is stale (made with %q, %v; Istio here is %q): run go generate ./engine", got.Module, err, Version().Module)
	}
	if _, ok := embeddedDefault(); !ok {
		t.Fatal("the embedded default is not used")
	}
}

// TestEmbeddedDefaultIsUsedOnlyForItsIstio: a file made with another Istio is not used.
func TestEmbeddedDefaultIsUsedOnlyForItsIstio(t *testing.T) {
	f, err := readDefaultInstall(defaultInstallGz)
	if err != nil {
		t.Fatal(err)
	}
	f.Module = "v0.0.0-other"
	other, err := writeDefaultInstall(f)
	if err != nil {
		t.Fatal(err)
	}
	saved := defaultInstallGz
	defer func() { defaultInstallGz = saved }()
	defaultInstallGz = other
	if _, ok := embeddedDefault(); ok {
		t.Fatal("a render made with another Istio would be used")
	}
}

// TestEnginesShareTheDefaultInstall: engines in one process, whatever their policy, answer the
// default options with one Install, built from the embedded render once.
func TestEnginesShareTheDefaultInstall(t *testing.T) {
	if _, ok := embeddedDefault(); !ok {
		t.Fatal("the embedded default render is not this Istio's: go test -run ^TestDefaultInstallFile$ ./engine -update")
	}
	var got []*Install
	for _, policy := range []InstallPolicy{{}, TrustedInstalls()} {
		e, err := New(t.Context(), Options{InstallPolicy: policy})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		in, err := e.Install(t.Context(), InstallOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, in)
	}
	if got[0] != got[1] {
		t.Error("two engines built the default installation each")
	}
}

// TestEmbeddedProxyImage: the image the default installation injects is the one
// EmbeddedProxyImage names (the charts' development default); an installation with a hub and tag
// of its own injects another.
func TestEmbeddedProxyImage(t *testing.T) {
	e := testEngine(t)
	img := EmbeddedProxyImage()
	if !strings.HasPrefix(img, "registry.istio.io/testing/proxyv2:") {
		t.Fatalf("EmbeddedProxyImage %q", img)
	}
	for _, c := range []struct {
		set  []string
		want bool
	}{{nil, true}, {[]string{"hub=docker.io/istio", "tag=1.31.0"}, false}} {
		r, err := e.Inject(t.Context(), []byte(readFile(t, "testdata/corpus/deployment.yaml")), nil, Settings{Install: InstallOptions{Set: c.set}})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(r.Documents[0].Output(), "image: "+img); got != c.want || r.Documents[0].InjectsImage(img) != c.want {
			t.Errorf("--set %v: the output has %s: %v (InjectsImage %v), want %v", c.set, img, got, r.Documents[0].InjectsImage(img), c.want)
		}
	}
}
