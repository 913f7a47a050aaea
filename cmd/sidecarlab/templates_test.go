package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
	"github.com/sidecarlab/sidecarlab/sandbox"
)

// The test binary is also `sidecarlab worker`, the isolated worker serve starts (os.Executable).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "worker" {
		if err := run(context.Background(), os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	testkit.CollectLess()
	os.Exit(m.Run())
}

// userTemplate is an overlay adding the injection template "mine", which reads the environment.
const userTemplate = `apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
spec:
  values:
    sidecarInjectorWebhook:
      templates:
        mine: |
          metadata:
            annotations:
              mine: '{{ env "SIDECARLAB_TEST_MINE" "unset" }}'
`

// TestInjectRunsTheUsersTemplates: the CLI runs with its user's own rights, so their own
// templates run, as istioctl runs them.
func TestInjectRunsTheUsersTemplates(t *testing.T) {
	t.Setenv("SIDECARLAB_TEST_MINE", "from-my-shell")
	iop := filepath.Join(t.TempDir(), "iop.yaml")
	if err := os.WriteFile(iop, []byte(userTemplate), 0o600); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := runCLI(t, testkit.Deployment, "inject", "-f", "-", "--operator", iop, "--annotate", "inject.istio.io/templates=sidecar,mine")
	if err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	if !strings.Contains(out, "mine: from-my-shell") || !strings.Contains(out, "name: istio-proxy") {
		t.Fatalf("the user's template did not run:\n%s", out)
	}
	// And the same through diff, which builds its own engine.
	if out, stderr, err := runCLI(t, testkit.Deployment, "diff", "-f", "-", "--operator", iop, "--annotate", "inject.istio.io/templates=sidecar,mine"); err != nil || !strings.Contains(out, "mine") {
		t.Fatalf("diff: %v: %s\n%s", err, stderr, out)
	}
}

// TestServeRefusesTemplates: the engine of a locked-down serve (--allow-custom-templates=false)
// refuses the same template, with a message that says why.
func TestServeRefusesTemplates(t *testing.T) {
	e, err := engine.New(context.Background(), serveEngineOptions(lockedDownHint))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	_, err = e.Inject(t.Context(), []byte(testkit.Deployment), nil, engine.Settings{Install: engine.InstallOptions{Overlay: userTemplate}})
	var ie *input.Error
	if !errors.As(err, &ie) || !strings.Contains(ie.Text(), "carries template text") || !strings.Contains(ie.Text(), "--allow-custom-templates=false") {
		t.Fatalf("serve's engine: %v", err)
	}
	// The same engine takes plain options.
	if _, err := e.Inject(t.Context(), []byte(testkit.Deployment), nil, engine.Settings{Install: engine.InstallOptions{Set: []string{"values.global.proxy.holdApplicationUntilProxyStarts=true"}}}); err != nil {
		t.Fatal(err)
	}
}

// TestServeAllowCustomTemplates: serve runs a user's template by default, in a worker that has
// none of the server's environment.
func TestServeAllowCustomTemplates(t *testing.T) {
	t.Setenv("SIDECARLAB_TEST_MINE", "canary-9d2e")
	srv := startServe(t, "--db", filepath.Join(t.TempDir(), "links.db"))
	base, logs := srv.base, srv.logs
	if !strings.Contains(logs.String(), "custom templates allowed") {
		t.Fatalf("the log does not say templates are allowed:\n%s", logs.String())
	}
	body, _ := json.Marshal(map[string]any{"manifest": testkit.Deployment, "steps": []map[string]string{{"key": "inject.istio.io/templates", "value": "sidecar,mine"}},
		"settings": map[string]any{"install": map[string]any{"overlay": userTemplate}}})
	resp, err := http.Post(base+"/api/v1/inject", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "mine: unset") {
		t.Fatalf("status %d; want the template run with an empty environment:\n%.2000s", resp.StatusCode, b)
	}
	if strings.Contains(string(b), "canary-9d2e") {
		t.Fatal("the worker read the server's environment")
	}
}

// TestServeAllowCustomTemplatesOwnMesh: a pasted mesh with a template of its own runs on a
// default serve, in the worker too, with none of the server's environment; a locked-down serve
// (--allow-custom-templates=false) refuses it naming that template alone, and why.
func TestServeAllowCustomTemplatesOwnMesh(t *testing.T) {
	t.Setenv("SIDECARLAB_TEST_MINE", "canary-7f1a")
	e, err := engine.New(context.Background(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	def, err := e.Install(t.Context(), engine.InstallOptions{})
	e.Close()
	if err != nil {
		t.Fatal(err)
	}
	const mine = "templates:\n  mine: |\n    metadata:\n      annotations:\n        mine: '{{ env \"SIDECARLAB_TEST_MINE\" \"unset\" }}'\n"
	config := strings.Replace(def.InjectorConfig, "templates:\n", mine, 1)
	if config == def.InjectorConfig {
		t.Fatal("the injector config has no templates: key")
	}
	body, _ := json.Marshal(map[string]any{"manifest": testkit.Deployment, "steps": []map[string]string{{"key": "inject.istio.io/templates", "value": "sidecar,mine"}},
		"settings": map[string]any{"install": map[string]any{"mesh": engine.OwnMesh{InjectorConfig: config, Values: def.Values, MeshConfig: def.MeshConfigYAML}}}})
	post := func(srv *served) (int, string) {
		resp, err := http.Post(srv.base+"/api/v1/inject", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b)
	}
	code, b := post(startServe(t, "--db", filepath.Join(t.TempDir(), "links.db")))
	if code != http.StatusOK || !strings.Contains(b, "mine: unset") || strings.Contains(b, "canary-7f1a") {
		t.Fatalf("status %d; want the template run in the worker, with an empty environment:\n%.2000s", code, b)
	}
	locked := startServe(t, "--db", filepath.Join(t.TempDir(), "links.db"), "--allow-custom-templates=false")
	if !strings.Contains(locked.logs.String(), "custom templates refused (--allow-custom-templates=false)") {
		t.Errorf("the locked-down server's log does not say templates are refused:\n%s", locked.logs.String())
	}
	code, b = post(locked)
	if code != http.StatusUnprocessableEntity || !strings.Contains(b, `templates \"mine\" are not`) || !strings.Contains(b, "--allow-custom-templates=false") || strings.Contains(b, `\"sidecar\"`) {
		t.Fatalf("locked down: status %d; want a 422 naming the mesh's template \"mine\" alone, and why:\n%.2000s", code, b)
	}
}

// TestServeWithoutWorkers: where no worker can start, a default serve serves locked down and
// says why, in its log and in the refusal; told --allow-custom-templates, it does not start.
func TestServeWithoutWorkers(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	iso := isolation{allow: true, worker: "/nonexistent/sidecarlab", limits: sandbox.DefaultLimits()}
	opts, err := iso.engineOptions(t.Context(), logger)
	if err != nil {
		t.Fatal(err)
	}
	if opts.InstallPolicy.AllowCustomTemplates || opts.Isolator != nil ||
		!strings.Contains(opts.InstallPolicy.TemplatesHint, "could not start the isolated worker") ||
		!strings.Contains(opts.InstallPolicy.TemplatesHint, "/nonexistent/sidecarlab") {
		t.Errorf("without workers: %+v, want a locked-down policy whose hint says why", opts.InstallPolicy)
	}
	if !strings.Contains(logs.String(), "custom templates refused: the isolated workers they run in cannot start here") {
		t.Errorf("the log does not say why templates are refused:\n%s", logs.String())
	}
	iso.explicit = true
	if _, err := iso.engineOptions(t.Context(), logger); err == nil || !strings.Contains(err.Error(), "--allow-custom-templates") {
		t.Errorf("told --allow-custom-templates without workers: %v, want it refused", err)
	}
	// The same with a worker that starts: templates allowed.
	iso = isolation{allow: true, limits: sandbox.DefaultLimits()}
	if opts, err := iso.engineOptions(t.Context(), logger); err != nil || !opts.InstallPolicy.AllowCustomTemplates || opts.Isolator == nil {
		t.Errorf("with workers: %+v %v, want templates allowed", opts.InstallPolicy, err)
	}
}
