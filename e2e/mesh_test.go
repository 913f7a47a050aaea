//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

// rendered is the installation the embedded Istio's charts render with the --set paths, by an
// engine of the test's own (the tests' meshes are made from it).
func rendered(t *testing.T, set ...string) *engine.Install {
	t.Helper()
	e, err := engine.New(context.Background(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	in, err := e.Install(context.Background(), engine.InstallOptions{Set: set})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// canaryMesh is a revisioned mesh's ConfigMaps as kubectl prints them (a List), rendered by the
// engine with a custom proxy CPU request.
func canaryMesh(t *testing.T) string {
	t.Helper()
	in := rendered(t, "revision=canary", "values.global.proxy.resources.requests.cpu=50m")
	return testkit.MeshList(t, "canary", in.InjectorConfig, in.Values, in.MeshConfigYAML, nil)
}

// applyMesh pastes a mesh's ConfigMaps into the settings of a new playground at 1440×900 and
// applies: it returns what the settings then say of the mesh, and the page's text.
func applyMesh(ctx context.Context, t *testing.T, mesh string) (used, page string) {
	t.Helper()
	do(ctx, t, chromedp.EmulateViewport(1440, 900), chromedp.Navigate(baseURL+"/"), shown(`.cm-content`),
		clickOn(`[data-testid="settings"] summary`),
		setTo(`[data-testid="install-mesh"]`, mesh),
		clickOn(`[data-testid="apply"]`))
	waitFor(ctx, t, `[data-testid="install-mesh-used"]`, "the settings after apply")
	page, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("main").textContent`))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(strings.Fields(text(ctx, t, `[data-testid="install-mesh-used"]`)), " "), page
}

// TestOwnMesh: a learner pastes their mesh's ConfigMaps into the settings and applies: the
// output is their mesh's (its revision, its values), the settings say which mesh injects, and
// the page passes axe at 1440×900, 1920×1080, 390×844 and 150 % zoom, light and dark, without
// sideways scrolling.
func TestOwnMesh(t *testing.T) {
	t.Parallel() // heavy work for the server, which runs one heavy request per test at once (e2e_test.go)
	ctx := browser(t)
	sh := newShots(t)
	used, page := applyMesh(ctx, t, canaryMesh(t))
	if !strings.Contains(used, "revision canary") {
		t.Errorf("the settings say %q", used)
	}
	// The results say it too, above the tabs, with the settings closed.
	if line := strings.Join(strings.Fields(text(ctx, t, `[data-testid="results-mesh"]`)), " "); !strings.HasPrefix(line, "Injected with your mesh: revision canary") {
		t.Errorf("the results say %q", line)
	}
	if !strings.Contains(page, "istio.io/rev: canary") || !strings.Contains(page, "cpu: 50m") {
		t.Error("the results are not the pasted mesh's (no canary revision, no 50m CPU request)")
	}
	everyScreen(ctx, t, sh, "the settings with a mesh", "mesh", onNode(`[data-testid="install-mesh-used"]`, chromedp.ScrollIntoView(chromedp.CSS(`[data-testid="install-mesh-used"]`))))
}

// TestOwnMeshOwnTemplates: a mesh whose templates are not the embedded Istio's (an older Istio's
// real ones, testkit.OlderIstio), pasted into the page of a default server: the server runs them
// in an isolated worker and shows their injection, and the settings say the templates are the
// mesh's own. A locked-down server would refuse it (cmd/sidecarlab's
// TestServeAllowCustomTemplatesOwnMesh).
func TestOwnMeshOwnTemplates(t *testing.T) {
	t.Parallel() // heavy work for the server, as TestOwnMesh
	in := rendered(t, "revision=canary")
	mesh := testkit.MeshList(t, "canary", testkit.WithOlderTemplates(t, in.InjectorConfig), in.Values, in.MeshConfigYAML, nil)
	ctx := browser(t)
	used, page := applyMesh(ctx, t, mesh)
	if !strings.Contains(used, "revision canary, your own templates") {
		t.Errorf("the settings say %q, want the mesh's own templates", used)
	}
	if !strings.Contains(page, "istio.io/rev: canary") || !strings.Contains(page, "name: istio-proxy") {
		t.Error("the results are not the pasted mesh's injection (no canary revision, no istio-proxy)")
	}
	checkA11y(ctx, t, "the settings with a mesh of its own templates")
}
