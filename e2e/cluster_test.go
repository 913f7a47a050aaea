//go:build e2e

package e2e

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/permalink"
)

// waitFor waits for an element to be shown in the settled page (shown).
func waitFor(ctx context.Context, t *testing.T, sel, what string) {
	t.Helper()
	if err := chromedp.Do(ctx, shown(sel)); err != nil {
		t.Fatalf("%s: %s is not shown (%v)", what, sel, err)
	}
}

// checked is whether a checkbox is checked, as the page has it now.
func checked(ctx context.Context, t *testing.T, sel string) bool {
	t.Helper()
	ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector('`+sel+`').checked`))
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// TestClusterTab: the lab's two Cluster steps in the browser — not injected in an unlabelled
// namespace, then rejected under baseline — each fixed with one click of a settings fix,
// answered in place; the namespace typed in the settings and the Cluster tab fetched when
// chosen; a label the API server would refuse.
func TestClusterTab(t *testing.T) {
	t.Parallel() // heavy work for the server, which runs one heavy request per test at once (e2e_test.go)
	ctx := browser(t)
	sh := newShots(t)
	do(ctx, t, chromedp.EmulateViewport(1440, 900), chromedp.Navigate(baseURL+"/"), shown(chip(9)))
	notInjected, baseline := labHref(ctx, t, 9), labHref(ctx, t, 10)

	// Not injected: the label fix, answered in place.
	do(ctx, t, clickOn(chip(9)))
	waitFor(ctx, t, `[data-testid="verdict-not-injected"]`, "chip 9")
	if trace := text(ctx, t, `[data-testid="cluster-trace"]`); !strings.Contains(trace, "Not injected: no webhook selected the Pod") {
		t.Errorf("trace: %q", trace)
	}
	checkA11y(ctx, t, "the Cluster tab (not injected)")
	sh.take(ctx, "not-injected")
	do(ctx, t, clickOn(`[data-testid="settings-fix-label-injection"]`))
	waitFor(ctx, t, `[data-testid="verdict-injected"]`, "after the label fix")
	if !checked(ctx, t, `[data-testid="ns-injection"]`) {
		t.Error("after the label fix, the settings' istio-injection toggle is off")
	}
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(loc, "tab=cluster") || loc == baseURL+notInjected {
		t.Errorf("the address bar after the fix: %s", loc)
	}
	checkA11y(ctx, t, "the Cluster tab (after the label fix)")

	// Rejected under baseline: Pod Security's words verbatim, then the CNI fix.
	do(ctx, t, chromedp.Navigate(baseURL+baseline))
	waitFor(ctx, t, `[data-testid="verdict-rejected"]`, "chip 10")
	if v := text(ctx, t, `[data-testid="cluster-violations"]`); !strings.Contains(v, `container "istio-init" must not include "NET_ADMIN", "NET_RAW"`) {
		t.Errorf("violations: %q", v)
	}
	checkA11y(ctx, t, "the Cluster tab (rejected under baseline)")
	do(ctx, t, chromedp.EmulateViewport(1440, 900), chromedp.Navigate(baseURL+baseline))
	waitFor(ctx, t, `[data-testid="settings-fix-cni"]`, "chip 10's CNI fix")
	do(ctx, t, clickOn(`[data-testid="settings-fix-cni"]`))
	waitFor(ctx, t, `[data-testid="verdict-admitted"]`, "after the CNI fix")
	set := value(ctx, t, `[data-testid="install-set"]`)
	if !strings.Contains(set, "components.cni.enabled=true") {
		t.Errorf("install options after the CNI fix: %q", set)
	}
	// The admitted Pod's lifecycle, opened: its diagram and verdicts, with istio-proxy.
	do(ctx, t, clickOn(`[data-testid="cluster-lifecycle"] summary`))
	waitFor(ctx, t, `[data-testid="cluster-lifecycle"] [data-testid="lifecycle"]`, "the admitted Pod's lifecycle")
	if got := text(ctx, t, `[data-testid="cluster-lifecycle"]`); !strings.Contains(got, "istio-proxy") {
		t.Errorf("the admitted Pod's lifecycle: %q", got)
	}
	checkA11y(ctx, t, "the Cluster tab (admitted with CNI, the lifecycle open)")
	sh.take(ctx, "admitted-lifecycle")

	// The namespace typed in the settings, then the Cluster tab chosen (fetched when chosen).
	do(ctx, t, chromedp.Navigate(baseURL+"/"), shown(`.cm-content`),
		clickOn(`[data-testid="settings"] summary`),
		keysTo(`[data-testid="ns-name"]`, "shop"),
		clickOn(`[data-testid="ns-injection"]`),
		setTo(`[data-testid="ns-enforce"]`, "restricted"),
	)
	sh.take(ctx, "namespace-settings")
	checkA11y(ctx, t, "the settings with the namespace group open")
	do(ctx, t, clickOn(`[data-testid="apply"]`))
	waitFor(ctx, t, `[data-testid="panel-diff"] [data-testid="diff-step-0"]`, "after apply")
	do(ctx, t, clickOn(`[data-testid="tab-cluster"]`))
	waitFor(ctx, t, `[data-testid="verdict-rejected"]`, "the Cluster tab of the typed namespace")
	// The preset's Deployment names its own namespace: its Pod is created in bookinfo, with the
	// settings' labels, and the header says so.
	if ns := text(ctx, t, `[data-testid="cluster-namespace"]`); !strings.HasPrefix(ns, "bookinfo") || !strings.Contains(ns, "the settings' namespace is shop") ||
		!strings.Contains(ns, "pod-security.kubernetes.io/enforce=restricted") {
		t.Errorf("namespace shown as %q", ns)
	}
	checkA11y(ctx, t, "the Cluster tab (restricted)")

	// A label the API server would refuse: the error beside the field, the text kept.
	do(ctx, t, setTo(`[data-testid="ns-labels"]`, "team"), clickOn(`[data-testid="apply"]`))
	waitFor(ctx, t, `[data-testid="namespace-error"]`, "a bad label")
	if e := text(ctx, t, `[data-testid="namespace-error"]`); !strings.Contains(e, "namespace labels") || !strings.Contains(e, "KEY=VALUE") {
		t.Errorf("the error says %q", e)
	}
	if st := text(ctx, t, `#status`); !strings.Contains(st, "namespace") {
		t.Errorf("the status line says %q", st)
	}
	labels := value(ctx, t, `[data-testid="ns-labels"]`)
	if labels != "team" {
		t.Errorf("the labels field holds %q after the error", labels)
	}
	checkA11y(ctx, t, "the namespace group with an error")
	sh.take(ctx, "namespace-error")

}

// TestClusterTabScreens: the Cluster tab of the baseline step at 1440×900, 1920×1080, 390×844
// and 150 % zoom, light and dark, without sideways scrolling; the page and the tab alone.
func TestClusterTabScreens(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	sh := newShots(t)
	do(ctx, t, chromedp.Navigate(baseURL+"/"), shown(chip(10)))
	baseline := labHref(ctx, t, 10)
	for _, s := range checkedScreens {
		do(ctx, t, s.emulate(), chromedp.Navigate(baseURL+baseline))
		waitFor(ctx, t, `[data-testid="verdict-rejected"]`, "chip 10 at "+s.name)
		for _, theme := range []string{"light", "dark"} {
			setTheme(ctx, t, theme)
			if over := sidewaysBy(ctx, t); over > 0 {
				t.Errorf("the Cluster tab at %s, %s: the page scrolls sideways by %d px", s.name, theme, over)
			}
			sh.take(ctx, "baseline-"+s.name+"-"+theme)
			sh.element(ctx, `[data-testid="cluster"]`, "panel-"+s.name+"-"+theme)
		}
		setTheme(ctx, t, "light")
	}
}

// TestClusterTabWithoutJavaScript: the Cluster tab is a link and a settings fix a form post
// (POST, 303, the new state's link).
func TestClusterTabWithoutJavaScript(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	do(ctx, t, chromedp.Navigate(baseURL+"/"), shown(chip(9)))
	notInjected := labHref(ctx, t, 9)
	nctx, cancel := chromedp.NewContext(ctx)
	defer cancel()
	focused(nctx, t)
	do(nctx, t, chromedp.Navigate("about:blank"))
	noJS(nctx, t)
	do(nctx, t, chromedp.Navigate(baseURL+"/"))
	do(nctx, t, clickOn(`[data-testid="tab-cluster"]`))
	waitFor(nctx, t, `[data-testid="cluster"]`, "the Cluster tab's link without JavaScript")
	do(nctx, t, chromedp.Navigate(baseURL+notInjected))
	waitFor(nctx, t, `[data-testid="settings-fix-label-injection"]`, "chip 9 without JavaScript")
	do(nctx, t, clickOn(`[data-testid="settings-fix-label-injection"]`))
	waitFor(nctx, t, `[data-testid="verdict-injected"]`, "the label fix without JavaScript")
	loc, err := chromedp.Run(nctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(loc, "/?") || !strings.Contains(loc, "tab=cluster") {
		t.Errorf("after the fix's POST, the address is %s (want the new state's link)", loc)
	}
	// Scripts back on for axe alone (DevTools cannot evaluate while they are off); the page's
	// own script does not run again.
	if _, err := chromedp.Call(nctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: false}); err != nil {
		t.Fatal(err)
	}
	if n, _ := chromedp.Run(nctx, chromedp.Evaluate[int](`document.querySelectorAll(".cm-content").length`)); n != 0 {
		t.Fatal("the editor was built: the page's script ran")
	}
	checkA11y(nctx, t, "the Cluster tab without JavaScript")
}

// TestClusterLabelFix: a Pod that asks for injection with the annotation in an unlabelled
// namespace is not injected; the fix rewrites the manifest (the editor shows the label) and the
// Pod is injected.
func TestClusterLabelFix(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	annotated := strings.Replace(onDeployment, "  annotations:\n    sidecar.istio.io/logLevel: debug\n", "", 1)
	annotated = strings.Replace(annotated, "    metadata:\n      labels:", "    metadata:\n      annotations:\n        sidecar.istio.io/inject: \"true\"\n      labels:", 1)
	st := api.State{Manifest: annotated, Settings: engine.Settings{Namespace: engine.Namespace{Name: "shop"}}}
	do(ctx, t, chromedp.Navigate(baseURL+"/?tab=cluster&s="+url.QueryEscape(permalink.Encode(st))))
	waitFor(ctx, t, `[data-testid="verdict-not-injected"]`, "the annotated Pod, not injected")
	if got := text(ctx, t, `[data-testid="cluster-trace"]`); !strings.Contains(got, "selectors read labels") {
		t.Fatalf("the trace does not say why: %q", got)
	}
	checkA11y(ctx, t, "the Cluster tab (annotation instead of label)")
	do(ctx, t, clickOn(`[data-testid="settings-fix-label-not-annotation"]`))
	waitFor(ctx, t, `[data-testid="verdict-injected"]`, "after the label fix")
	editor := text(ctx, t, `.cm-content`)
	if !strings.Contains(editor, `sidecar.istio.io/inject: "true"`) || strings.Contains(editor, "annotations") {
		t.Fatalf("the editor after the label fix: %q", editor)
	}
}

// TestClusterAmbient: the lab's workload in a namespace labelled istio.io/dataplane-mode=ambient,
// with Istio's ambient profile: admitted as written (not injected), the trace not advising a
// label that would bring a sidecar, and the ambient answer — joins by the chart's selector, with
// what happens at run time — looked at on every checked screen, light and dark, with axe.
func TestClusterAmbient(t *testing.T) {
	t.Parallel() // heavy work for the server, which runs one heavy request per test at once (e2e_test.go)
	ctx := browser(t)
	sh := newShots(t)
	st := api.State{Manifest: onDeployment, Settings: engine.Settings{
		Install:   engine.InstallOptions{Set: []string{"profile=ambient"}},
		Namespace: engine.Namespace{Name: "shop", Labels: map[string]string{"istio.io/dataplane-mode": "ambient"}},
	}}
	do(ctx, t, chromedp.Navigate(baseURL+"/?tab=cluster&s="+url.QueryEscape(permalink.Encode(st))))
	waitFor(ctx, t, `[data-testid="cluster-ambient"][data-joins="true"]`, "the ambient answer")
	waitFor(ctx, t, `[data-testid="verdict-not-injected"]`, "the Pod admitted as written")
	if trace := text(ctx, t, `[data-testid="cluster-trace"]`); !strings.Contains(trace, "out of ambient") || strings.Contains(trace, "Label the namespace") {
		t.Errorf("the trace of a Pod that joins ambient: %q", trace)
	}
	if got := text(ctx, t, `[data-testid="cluster-ambient-runtime"]`); !strings.Contains(got, "ambient.istio.io/redirection") {
		t.Errorf("the run-time facts: %q", got)
	}
	everyScreen(ctx, t, sh, "the Cluster tab (ambient)", "ambient", onNode(`[data-testid="cluster-ambient"]`, chromedp.ScrollIntoView(chromedp.CSS(`[data-testid="cluster-ambient"]`))))
}
