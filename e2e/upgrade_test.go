//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestUpgradePreview: with a mesh pasted (today's Istio, revision canary, a CPU request), the
// results offer the upgrade preview; it lists the CPU as carried and finds the outputs the same;
// unticked and previewed again, the CPU is what changes. The page passes axe at every checked
// size and theme, without sideways scrolling.
func TestUpgradePreview(t *testing.T) {
	t.Parallel() // heavy work for the server, which runs one heavy request per test at once (e2e_test.go)
	ctx := browser(t)
	sh := newShots(t)
	do(ctx, t, chromedp.EmulateViewport(1440, 900), chromedp.Navigate(baseURL+"/"), shown(`.cm-content`),
		clickOn(`[data-testid="settings"] summary`),
		setTo(`[data-testid="install-mesh"]`, canaryMesh(t)),
		clickOn(`[data-testid="apply"]`))
	waitFor(ctx, t, `[data-testid="install-mesh-used"]`, "the settings after apply")
	do(ctx, t, clickOn(`[data-testid="tab-lifecycle"]`), clickOn(`a[href^="/upgrade?"]`))
	waitFor(ctx, t, `[data-testid="upgrade-plan"]`, "the upgrade preview")
	if row := text(ctx, t, `[data-testid="upgrade-key"]`); !strings.Contains(row, "global.proxy.resources.requests.cpu") {
		t.Fatalf("the plan's first key: %q", row)
	}
	waitFor(ctx, t, `[data-testid="compare-same"]`, "the outputs, the CPU carried")
	everyScreen(ctx, t, sh, "the upgrade preview", "upgrade", nil)
	// The keyboard: focus the CPU's box, untick it with Space, and preview again.
	do(ctx, t, chromedp.EmulateViewport(1440, 900), focusOn(`[data-testid="upgrade-key"] input[type="checkbox"]`), chromedp.KeyEvent(" "),
		clickOn(`[data-testid="upgrade-again"]`))
	waitFor(ctx, t, `[data-testid="compare-changes"]`, "the changes, the CPU left out")
	if changes := text(ctx, t, `[data-testid="compare-changes"]`); !strings.Contains(changes, "resources.requests.cpu") {
		t.Errorf("the CPU left out, the changes: %q", changes)
	}
	checkA11y(ctx, t, "the upgrade preview, the CPU left out")
	sh.take(ctx, "upgrade-cpu-left-out")
	// Presented: its plan and changes on slides that fit both projectors.
	preview := pageValue[string](ctx, t, "the address", `return {ok: true, v: location.pathname + location.search};`)
	for _, p := range projectors {
		do(ctx, t, chromedp.EmulateViewport(int64(p.w), int64(p.h)), chromedp.Navigate(baseURL+preview), shown(`[data-testid="present"]`), clickOn(`[data-testid="present"]`), shown(`[data-testid="slide-n"]`))
		checkDeck(ctx, t, sh, fmt.Sprintf("upgrade-slides-%d", p.w), fmt.Sprintf("the upgrade preview at %d×%d", p.w, p.h), p.h, p.min)
	}
	checkA11y(ctx, t, "the upgrade preview's slides")
	do(ctx, t, chromedp.EmulateViewport(1440, 900), chromedp.Navigate(baseURL+preview), shown(`[data-testid="compare-changes"]`))
	// Why the CPU changes, with the keyboard: both sides, the same lines, what they read.
	why := `[data-testid="compare-changes"] tr[data-path="spec.template.spec.containers[istio-proxy].resources.requests.cpu"] [data-testid="why-link"]`
	do(ctx, t, focusOn(why), chromedp.KeyEvent(kb.Enter))
	waitFor(ctx, t, `[data-testid="why-side-1"]`, "the upgrade's why page")
	if says := text(ctx, t, `[data-testid="why-sides-says"]`); !strings.Contains(says, "same in both templates") {
		t.Errorf("the upgrade's why says %q", says)
	}
	for _, side := range []string{"why-side-0", "why-side-1"} {
		if got := text(ctx, t, `[data-testid="`+side+`"] [data-testid="why-lines"] tr.wrote`); !strings.Contains(got, "global.proxy.resources") {
			t.Errorf("%s's marked lines: %q", side, got)
		}
	}
	everyScreen(ctx, t, sh, "the upgrade's why page", "upgrade-why", nil)
}
