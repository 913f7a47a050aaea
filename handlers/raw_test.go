package handlers

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
	"github.com/sidecarlab/sidecarlab/permalink"
)

func untar(t *testing.T, b []byte) map[string]string {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	out := map[string]string{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(tr)
		out[strings.TrimPrefix(h.Name, "sidecarlab-repro/")] = string(body)
	}
}

// TestReproBundle: the bundle's files are exactly what the engine used, and istioctl of the same
// Istio, given them, prints the expected output.
func TestReproBundle(t *testing.T) {
	h := newServer(t)
	cases := []api.State{
		{Manifest: testkit.Deployment, Steps: []input.Step{{Key: "sidecar.istio.io/proxyCPU", Value: "200m"}, {Key: "proxy.istio.io/config", Value: "holdApplicationUntilProxyStarts: true"}}},
		{Manifest: jobYAML, Settings: engine.Settings{Mode: engine.ModeWebhook, KubernetesVersion: "1.34"}},
		{Manifest: testkit.Deployment + "---\n" + jobYAML, Settings: engine.Settings{Mode: engine.ModeClassic, Install: engine.InstallOptions{Set: []string{"values.global.proxy.holdApplicationUntilProxyStarts=true"}}}},
	}
	bin := ""
	if !testing.Short() {
		bin = testkit.Istioctl(t)
	}
	for i, st := range cases {
		r := get(t, h, "/repro.tar.gz?s="+url.QueryEscape(permalink.Encode(st)))
		if r.status != http.StatusOK {
			t.Fatalf("case %d: %d %s", i, r.status, r.body)
		}
		files := untar(t, []byte(r.body))
		install, err := eng.Install(context.Background(), st.Settings.Install)
		if err != nil {
			t.Fatal(err)
		}
		tl, err := eng.Timeline(context.Background(), []byte(st.Manifest), st.Steps, st.Settings)
		if err != nil {
			t.Fatal(err)
		}
		if files["inject-config.yaml"] != install.InjectorConfig || files["values.json"] != install.Values || files["mesh.yaml"] != install.MeshConfigYAML {
			t.Fatalf("case %d: the bundle's config is not the engine's", i)
		}
		if files["expected.yaml"] != tl.Steps[len(tl.Steps)-1].Output() {
			t.Fatalf("case %d: expected.yaml is not the engine's output", i)
		}
		// The annotated input, injected with no steps, gives the expected output.
		again, err := eng.Timeline(context.Background(), []byte(files["input.yaml"]), nil, st.Settings)
		if err != nil || again.Steps[0].Output() != files["expected.yaml"] {
			t.Fatalf("case %d: input.yaml does not reproduce expected.yaml (%v)", i, err)
		}
		if bin == "" {
			continue
		}
		dir := t.TempDir()
		for name, body := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		binDir := t.TempDir()
		if err := os.Symlink(bin, filepath.Join(binDir, "istioctl")); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("sh", "reproduce.sh")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PATH="+binDir+":"+os.Getenv("PATH"))
		if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "reproduced") {
			t.Fatalf("case %d: istioctl did not reproduce it: %v\n%s", i, err, out)
		}
	}
}

func TestRawOutputs(t *testing.T) {
	h := newServer(t)
	st := api.State{Manifest: testkit.Deployment, Steps: []input.Step{{Key: "sidecar.istio.io/proxyCPU", Value: "200m"}}}
	q := "?s=" + url.QueryEscape(permalink.Encode(st))
	if r := get(t, h, "/injected.yaml"+q); r.status != http.StatusOK || !strings.Contains(r.body, "cpu: 200m") || !strings.HasSuffix(r.body, "---\n") {
		t.Fatalf("injected.yaml: %d", r.status)
	}
	if r := get(t, h, "/diff.txt"+q); !strings.Contains(r.body, "# step 1: sidecar.istio.io/proxyCPU=200m") || !strings.Contains(r.body, "requests.cpu: 100m → 200m") {
		t.Fatalf("diff.txt:\n%s", r.body)
	}
	var back api.State
	if r := get(t, h, "/state.json"+q); json.Unmarshal([]byte(r.body), &back) != nil || back.Steps[0].Value != "200m" {
		t.Fatalf("state.json: %s", r.body)
	}
	if r := get(t, h, "/injected.yaml"); r.status != http.StatusBadRequest {
		t.Fatalf("without a state: %d", r.status)
	}
}
