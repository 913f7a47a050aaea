//go:build e2e

package e2e

import (
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
	"github.com/sidecarlab/sidecarlab/permalink"
)

// TestWhyPage: in the field diff, the change that holdApplicationUntilProxyStarts made (the
// proxy's postStart hook) links to why it is there; the link is reached and followed with the
// keyboard alone; the page marks the template lines that wrote it and the branch around them,
// says the branch ran, and names what it reads; it is looked at on every checked screen, light
// and dark, with axe; its way back opens the playground at that step.
func TestWhyPage(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	sh := newShots(t)
	st := api.State{Manifest: testkit.Deployment, Steps: []input.Step{{Key: "proxy.istio.io/config", Value: "holdApplicationUntilProxyStarts: true"}}}
	link := `tr[data-path="spec.template.spec.containers[istio-proxy].lifecycle"] [data-testid="why-link"]`
	do(ctx, t, chromedp.EmulateViewport(1440, 900), chromedp.Navigate(baseURL+"/?s="+permalink.Encode(st)), shown(link))
	do(ctx, t, focusOn(link), chromedp.KeyEvent(kb.Enter))
	waitFor(ctx, t, `[data-testid="why-group"]`, "the why page")
	if got := text(ctx, t, `[data-testid="why-path"]`); got != "spec.template.spec.containers[istio-proxy].lifecycle" {
		t.Errorf("the page is about %q", got)
	}
	page := text(ctx, t, `[data-testid="why"]`)
	for _, want := range []string{"postStart.exec.command[0]", "Written by lines", "template sidecar", "pilot-agent", "$holdProxy", "which ran", "HoldApplicationUntilProxyStarts"} {
		if !strings.Contains(page, want) {
			t.Errorf("the why page lacks %q:\n%s", want, page)
		}
	}
	if got := text(ctx, t, `[data-testid="why-lines"] tr.wrote`); !strings.Contains(got, "pilot-agent") {
		t.Errorf("the marked lines: %q", got)
	}
	branches, err := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll('[data-testid="why-lines"] tr.branch')].map(r => r.textContent).join("\n")`))
	if err != nil || !strings.Contains(branches, "$holdProxy") {
		t.Errorf("the branches' lines: %q", branches)
	}
	everyScreen(ctx, t, sh, "the why page", "why", nil)
	do(ctx, t, chromedp.EmulateViewport(1440, 900), focusOn(`[data-testid="why-back"]`), chromedp.KeyEvent(kb.Enter))
	waitFor(ctx, t, `[data-testid="change"]`, "the playground again")
	if u, err := chromedp.Run(ctx, chromedp.Location()); err != nil || !strings.Contains(u, "step=1") {
		t.Errorf("back to %s (%v), want the step the why page was about", u, err)
	}
	// From the YAML view: a click on a line fills in its number, and Ask explains that line's field.
	do(ctx, t, clickOn(`[data-testid="tab-yaml"]`), shown(`[data-testid="injected-yaml"]`))
	lines, err := chromedp.Run(ctx, chromedp.Evaluate[int](`(() => {
		const pre = document.querySelector('[data-testid="injected-yaml"]');
		const n = pre.textContent.split("\n").findIndex(l => l.trim() === "- pilot-agent");
		// A caret on that line, as a click puts it there.
		const walker = document.createTreeWalker(pre, NodeFilter.SHOW_TEXT);
		let seen = 0, node;
		while ((node = walker.nextNode())) {
			const i = [...node.textContent].reduce((at, c, k) => at >= 0 ? at : (c === "\n" && ++seen === n ? k : -1), -1);
			if (i >= 0) { const r = document.createRange(); r.setStart(node, i + 1); r.collapse(true); getSelection().removeAllRanges(); getSelection().addRange(r); break; }
		}
		pre.click();
		return n + 1;
	})()`))
	if err != nil || lines < 2 {
		t.Fatalf("the YAML's pilot-agent line: %d %v", lines, err)
	}
	value, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid="why-line"]').value`))
	if err != nil || value != strconv.Itoa(lines) {
		t.Fatalf("a click on line %d fills in %q (%v)", lines, value, err)
	}
	do(ctx, t, focusOn(`[data-testid="why-line-ask"]`), chromedp.KeyEvent(kb.Enter))
	waitFor(ctx, t, `[data-testid="why-group"]`, "the why page of a YAML line")
	if got := text(ctx, t, `[data-testid="why-path"]`); !strings.Contains(got, "lifecycle.postStart.exec.command") {
		t.Errorf("the YAML line asks about %q", got)
	}
	checkA11y(ctx, t, "the why page of a YAML line")
}
