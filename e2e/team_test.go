//go:build e2e

package e2e

import (
	"context"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/chromedp/chromedp"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/permalink"
)

// holdingMesh is a whole mesh (its three ConfigMap texts) whose defaultConfig already holds the
// application until the proxy starts, compacted as a link keeps it.
func holdingMesh(t *testing.T) engine.OwnMesh {
	t.Helper()
	in := rendered(t, "meshConfig.defaultConfig.holdApplicationUntilProxyStarts=true")
	return engine.CompactMesh(engine.OwnMesh{InjectorConfig: in.InjectorConfig, Values: in.Values, MeshConfig: in.MeshConfigYAML})
}

// TestTeamStory: a team's mesh on the page, as issue 43 asked — the results say which mesh
// injected and offer the upgrade in the tab bar; the lab's hold step says why it changes less on
// a mesh that already holds; the Cluster tab's CNI fix, which a --set cannot apply to a pasted
// mesh, says what to do instead and previews it, and the preview's new side is admitted; a YAML
// error is named at the line and column a person points at, and the editor marks it from there. Each view is
// looked at in every checked window and theme (axe, no sideways scrolling), and the results in
// Japanese and Korean at 1440 and 390.
func TestTeamStory(t *testing.T) {
	t.Parallel() // heavy work for the server, which runs one heavy request per test at once (e2e_test.go)
	ctx := browser(t)
	sh := newShots(t)
	hold := []input.Step{
		{Key: "sidecar.istio.io/proxyCPU", Value: "200m"},
		{Key: "proxy.istio.io/config", Value: "concurrency: 2\nterminationDrainDuration: 30s"},
		{Key: "proxy.istio.io/config", Value: "concurrency: 2\nterminationDrainDuration: 30s\nholdApplicationUntilProxyStarts: true"},
	}
	st := api.State{Manifest: deployment, Steps: hold, Settings: engine.Settings{
		Install:   engine.InstallOptions{Mesh: holdingMesh(t)},
		Namespace: engine.Namespace{Name: "shop", Labels: map[string]string{"istio-injection": "enabled", "pod-security.kubernetes.io/enforce": "baseline"}}}}
	link := baseURL + "/?s=" + url.QueryEscape(permalink.Encode(st))

	// 1. Which mesh injected, the upgrade in the tab bar, and why the hold step changes less.
	do(ctx, t, checkedScreens[0].emulate(), chromedp.Navigate(link+"&step=3"))
	waitFor(ctx, t, `[data-testid="default-config-gives"]`, "the hold step's note")
	if line := strings.Join(strings.Fields(text(ctx, t, `[data-testid="results-mesh"]`)), " "); !strings.HasPrefix(line, "Injected with your mesh") {
		t.Errorf("the results say %q", line)
	}
	if note := text(ctx, t, `[data-testid="default-config-gives"]`); !strings.Contains(note, "holdApplicationUntilProxyStarts: true") {
		t.Errorf("the hold step's note %q", note)
	}
	if href := attr(ctx, t, `[data-testid="tab-upgrade"]`, "href"); !strings.HasPrefix(href, "/upgrade?") {
		t.Errorf("the tab bar's upgrade entry %q", href)
	}
	tabRows(ctx, t, "en")
	everyScreen(ctx, t, sh, "the results with a mesh that holds", "results", onNode(`[data-testid="default-config-gives"]`,
		chromedp.ScrollIntoView(chromedp.CSS(`[data-testid="default-config-gives"]`))))
	for _, lang := range []string{"ja", "ko"} {
		for _, s := range []screen{checkedScreens[0], checkedScreens[2]} {
			do(ctx, t, s.emulate(), chromedp.Navigate(link+"&step=3&lang="+lang))
			waitFor(ctx, t, `[data-testid="default-config-gives"]`, "the hold step's note in "+lang)
			if s.name == "1440" {
				tabRows(ctx, t, lang)
			}
			for _, theme := range []string{"light", "dark"} {
				setTheme(ctx, t, theme)
				if over := sidewaysBy(ctx, t); over > 0 {
					t.Errorf("the results in %s at %s, %s: the page scrolls sideways by %d px", lang, s.name, theme, over)
				}
				do(ctx, t, chromedp.ScrollIntoView(chromedp.CSS(`[data-testid="results-mesh"]`)))
				sh.save(ctx, "results-"+lang+"-"+s.name+"-"+theme, chromedp.CaptureScreenshot())
			}
			checkA11y(ctx, t, "the results with a mesh in "+lang+" at "+s.name)
		}
	}
	do(ctx, t, checkedScreens[0].emulate(), chromedp.Navigate(link), clickOn(`[data-testid="tab-upgrade"]`))
	waitFor(ctx, t, `[data-testid="upgrade-plan"]`, "the upgrade preview from the tab bar")

	// 2. The CNI fix cannot apply to a pasted mesh: what to do instead, and its preview.
	do(ctx, t, chromedp.Navigate(link+"&tab=cluster"))
	waitFor(ctx, t, `[data-testid="settings-fix-instead-cni"]`, "the CNI fix, instead")
	if n := pageValue[int](ctx, t, "the CNI fix's button", `return {ok: true, v: document.querySelectorAll('[data-testid="settings-fix-cni"]').length}`); n != 0 {
		t.Errorf("the CNI fix is a button (%d) on a pasted mesh", n)
	}
	if words := text(ctx, t, `[data-testid="settings-fix-instead-cni"]`); !strings.Contains(words, "pilot.cni.enabled=true") {
		t.Errorf("the CNI fix says %q", words)
	}
	everyScreen(ctx, t, sh, "the Cluster tab's fix, instead", "instead", onNode(`[data-testid="settings-fix-instead-cni"]`,
		chromedp.ScrollIntoView(chromedp.CSS(`[data-testid="settings-fix-instead-cni"]`))))
	do(ctx, t, checkedScreens[0].emulate(), clickOn(`[data-testid="settings-fix-instead-cni"] [data-testid="settings-fix-preview"]`))
	waitFor(ctx, t, `[data-testid="upgrade-set"]`, "the upgrade preview with CNI")
	if b := text(ctx, t, `[data-testid="admission-b"]`); strings.Contains(b, "NET_ADMIN") || !strings.Contains(b, "Admitted") {
		t.Errorf("the new side with CNI: %q", b)
	}
	checkA11y(ctx, t, "the upgrade preview with the CNI fix")
	sh.take(ctx, "instead-preview")

	// 3. A YAML error at the line a person points at, in the message and in the editor.
	broken, err := os.ReadFile("../engine/testdata/broken/unclosed-double-quote.yaml")
	if err != nil {
		t.Fatal(err)
	}
	do(ctx, t, chromedp.Navigate(baseURL+"/?s="+url.QueryEscape(permalink.Encode(api.State{Manifest: string(broken)}))), shown(`.cm-content`))
	waitFor(ctx, t, `[data-testid="manifest-error"]`, "the YAML error")
	if msg := text(ctx, t, `[data-testid="manifest-error"]`); !strings.Contains(msg, "line 17, column 16") {
		t.Errorf("the error names %q, want line 17, column 16 (the opening quote's)", msg)
	}
	marked := pageValue[int](ctx, t, "the editor's marked line", `const lines = [...document.querySelectorAll(".cm-content .cm-line")];
		const i = lines.findIndex((l) => l.querySelector(".cm-lintRange-error"));
		return {ok: i >= 0, v: i + 1};`)
	if marked != 17 {
		t.Errorf("the editor marks line %d, want 17", marked)
	}
	if from := text(ctx, t, `.cm-lintRange-error`); !strings.HasPrefix(from, `"nginx`) {
		t.Errorf("the editor's mark starts at %q, want the opening quote", from)
	}
	everyScreen(ctx, t, sh, "a YAML error", "yaml-error", nil)
}

// tabRows fails the test unless the results' tabs are on one row (at 1440 px, with nine tabs and
// a count): a tab alone on a second row reads as a tab of another bar.
func tabRows(ctx context.Context, t *testing.T, lang string) {
	t.Helper()
	rows := pageValue[int](ctx, t, "the tabs' rows", `return {ok: true, v: new Set([...document.querySelectorAll('[role="tab"]')].map((a) => Math.round(a.getBoundingClientRect().top))).size}`)
	if rows != 1 {
		t.Errorf("the tabs in %s take %d rows at 1440 px", lang, rows)
	}
}
