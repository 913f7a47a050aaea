//go:build e2e

package e2e

import (
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/permalink"
)

// typoDeployment is the lab's typo case pasted: holdApplicationUntilProxyStart (no s) inside
// proxy.istio.io/config, on line 13.
const typoDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: checkout
spec:
  selector:
    matchLabels:
      app: checkout
  template:
    metadata:
      annotations:
        proxy.istio.io/config: |
          holdApplicationUntilProxyStart: true
      labels:
        app: checkout
    spec:
      containers:
      - name: checkout
        image: nginx
`

func link(manifest string) string {
	return baseURL + "/?s=" + url.QueryEscape(permalink.Encode(api.State{Manifest: manifest}))
}

// markedLines are the editor's lines that carry a pitfall's underline, by their text.
const markedLines = `[...document.querySelectorAll(".cm-line")].filter(l => l.querySelector(".cm-lintRange-warning")).map(l => l.textContent)`

// TestPitfallMarkerAndBanner: the typo case shows a warning marker in the editor's gutter and
// the offending line underlined, and a banner above the results that opens the Pitfalls tab in
// place. A manifest without a pitfall has neither.
func TestPitfallMarkerAndBanner(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	sh := newShots(t)
	do(ctx, t,
		chromedp.Navigate(link(typoDeployment)),
		shown(`.cm-gutter-lint .cm-lint-marker-warning`),
	)
	lines, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](markedLines))
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 1 || strings.TrimSpace(lines[0]) != "holdApplicationUntilProxyStart: true" {
		t.Fatalf("marked lines %q, want the typo's line", lines)
	}
	// The marker sits beside line 13: its gutter row and line 13's number are at the same height.
	same, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => {
		const m = document.querySelector(".cm-gutter-lint .cm-lint-marker-warning").closest(".cm-gutterElement").getBoundingClientRect();
		const n = [...document.querySelectorAll(".cm-lineNumbers .cm-gutterElement")].find(e => e.textContent === "13").getBoundingClientRect();
		return Math.abs(m.top - n.top) < 2;
	})()`))
	if err != nil || !same {
		t.Fatalf("the gutter marker is not beside line 13 (%v)", err)
	}
	banner := text(ctx, t, `[data-testid="pitfall-banner"]`)
	if !strings.Contains(banner, "holdApplicationUntilProxyStart") || !strings.Contains(banner, "pitfall") {
		t.Fatalf("banner %q", banner)
	}
	sh.take(ctx, "typo-marked")
	do(ctx, t,
		clickOn(`[data-testid="pitfall-banner"] a`),
		shown(`[data-testid="finding-unknown-proxy-config-field"]`),
	)
	if got := attr(ctx, t, `[data-testid="tab-pitfalls"]`, "aria-selected"); got != "true" {
		t.Fatalf("after the banner, the Pitfalls tab is aria-selected=%q", got)
	}
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil || !strings.Contains(loc, "tab=pitfalls") {
		t.Fatalf("address %q after the banner (%v)", loc, err)
	}
	sh.take(ctx, "banner-opened-pitfalls")

	// Without a pitfall: no marker, no banner.
	clean := strings.Replace(typoDeployment, "ProxyStart: true", "ProxyStarts: true", 1)
	do(ctx, t,
		chromedp.Navigate(link(clean)),
		shown(`[data-testid="results"]`),
		shown(`.cm-content`),
	)
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(".cm-lint-marker, [data-testid='pitfall-banner']").length`))
	if err != nil || n != 0 {
		t.Fatalf("a manifest without a pitfall has %d markers or banners (%v)", n, err)
	}
}
