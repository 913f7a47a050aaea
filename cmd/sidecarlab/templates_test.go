package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine"
)

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
	out, stderr, err := runCLI(t, deployment, "inject", "-f", "-", "--operator", iop, "--annotate", "inject.istio.io/templates=sidecar,mine")
	if err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	if !strings.Contains(out, "mine: from-my-shell") || !strings.Contains(out, "name: istio-proxy") {
		t.Fatalf("the user's template did not run:\n%s", out)
	}
	// And the same through diff, which builds its own engine.
	if out, stderr, err := runCLI(t, deployment, "diff", "-f", "-", "--operator", iop, "--annotate", "inject.istio.io/templates=sidecar,mine"); err != nil || !strings.Contains(out, "mine") {
		t.Fatalf("diff: %v: %s\n%s", err, stderr, out)
	}
}

// TestServeRefusesTemplates: the engine serve builds refuses the same template, with a message
// that says how to run it.
func TestServeRefusesTemplates(t *testing.T) {
	e, err := engine.New(context.Background(), serveEngineOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	_, err = e.Inject(t.Context(), []byte(deployment), nil, engine.Settings{Install: engine.InstallOptions{Overlay: userTemplate}})
	var ie *engine.InputError
	if !errors.As(err, &ie) || !strings.Contains(ie.Msg, "carries template text") || !strings.Contains(ie.Msg, "sidecarlab") {
		t.Fatalf("serve's engine: %v", err)
	}
	// The same engine takes plain options.
	if _, err := e.Inject(t.Context(), []byte(deployment), nil, engine.Settings{Install: engine.InstallOptions{Set: []string{"values.global.proxy.holdApplicationUntilProxyStarts=true"}}}); err != nil {
		t.Fatal(err)
	}
}
