//go:build e2e

package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestAmbientCompare: the lab's last chip opens the sidecar-or-ambient comparison of the lab's
// workload, marked as that step: it joins ambient, istio-validation (not istio-init) goes, two
// lifecycles; the node count is typed and sent with the keyboard alone and ztunnel's share
// follows it. The page is looked at on every checked screen, light and dark, with axe.
func TestAmbientCompare(t *testing.T) {
	ctx := browser(t)
	sh := newShots(t)
	do(ctx, t, chromedp.EmulateViewport(1440, 900), chromedp.Navigate(baseURL+"/"), shown(chip(11)))
	do(ctx, t, clickOn(chip(11)))
	waitFor(ctx, t, `[data-testid="ambient-enrolment"][data-joins="true"]`, "the ambient comparison")
	if got := attr(ctx, t, chip(11), "aria-current"); got == "" {
		t.Error("the ambient page does not mark the lab's last chip")
	}
	if got := text(ctx, t, `[data-testid="ambient"]`); !strings.Contains(got, "initContainers[istio-validation]") || strings.Contains(got, "initContainers[istio-init]") {
		t.Errorf("the sidecar side is not the ambient profile's:\n%s", got)
	}
	everyScreen(ctx, t, sh, "the ambient comparison", "ambient", nil)

	// The node count, with the keyboard: focus the field, type, Enter.
	do(ctx, t, chromedp.EmulateViewport(1440, 900), focusOn(`[data-testid="ambient-nodes"]`),
		chromedp.KeyEvent(kb.End), chromedp.KeyEvent(kb.Backspace), chromedp.KeyEvent("10"), chromedp.KeyEvent(kb.Enter))
	waitFor(ctx, t, `[data-testid="ambient-nodes"][value="10"]`, "the page for 10 nodes")
	if z := text(ctx, t, `[data-testid="ambient-capacity-ztunnel"]`); !strings.Contains(z, "cpu=2 memory=5Gi") {
		t.Errorf("ztunnel on 10 nodes: %q", z)
	}
	checkA11y(ctx, t, "the ambient comparison on 10 nodes")
	everyScreen(ctx, t, sh, "the ambient capacity", "capacity", onNode(`[data-testid="ambient-capacity"]`, chromedp.ScrollIntoView(chromedp.CSS(`[data-testid="ambient-capacity"]`))))
}
