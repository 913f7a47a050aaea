//go:build e2e

package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestPanelSearchAndProxyConfigEditor: the search box narrows the annotation panel as one types;
// then two fields added one after the other through the proxy.istio.io/config editor both stand in
// the second step, as the timeline shows.
func TestPanelSearchAndProxyConfigEditor(t *testing.T) {
	ctx := browser(t)
	sh := newShots(t)
	const (
		cpu     = `[data-testid="annotation-sidecar.istio.io/proxyCPU"]`
		exclude = `[data-testid="annotation-traffic.sidecar.istio.io/excludeOutboundPorts"]`
		config  = `[data-testid="annotation-proxy.istio.io/config"]`
	)
	do(ctx, t,
		chromedp.Navigate(baseURL+"/"),
		shown(`.cm-content`),
		setTo(`#manifest`, deployment),
		shown(cpu),
		keysTo(`#annotation-search`, "outbound"),
		hidden(cpu),
		shown(exclude),
	)
	sh.take(ctx, "search-outbound")
	// "drain" is in no key and no description: proxy.istio.io/config matches by its fields.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const s = document.getElementById("annotation-search"); s.select(); return true; })()`)); err != nil {
		t.Fatal(err)
	}
	do(ctx, t,
		keysTo(`#annotation-search`, "drain"),
		hidden(exclude),
		shown(config),
		clickOn(`[data-testid="pc-editor"] > summary`),
		shown(`#pc\:concurrency`),
		keysTo(`#pc\:concurrency`, "2"),
		clickOn(`[data-testid="pcset-concurrency"]`),
		shown(`[data-testid="diff-step-1"]`),
		clickOn(`[data-testid="pcset-holdApplicationUntilProxyStarts"]`),
		shown(moveRow),
	)
	sh.take(ctx, "concurrency-then-hold")
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="replaces"]').length`)); err != nil || n != 0 {
		t.Fatalf("%d replacement notices (%v) after a merge", n, err)
	}
	do(ctx, t,
		clickOn(`[data-testid="tab-timeline"]`),
		shown(`[data-testid="timeline-2"]`),
	)
	step2 := text(ctx, t, `[data-testid="timeline-2"]`)
	if !strings.Contains(step2, "concurrency: 2") || !strings.Contains(step2, "holdApplicationUntilProxyStarts: true") {
		t.Fatalf("timeline step 2 reads %q, want both fields", step2)
	}
	sh.take(ctx, "timeline")
}
