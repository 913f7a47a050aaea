//go:build e2e

package e2e

import (
	"net/url"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/chromedp/chromedp"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/permalink"
)

// onDeployment is an Istio annotation put on the Deployment's own metadata (line 5), where Istio
// never reads it.
const onDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  annotations:
    sidecar.istio.io/logLevel: debug
  name: checkout
spec:
  selector:
    matchLabels:
      app: checkout
  template:
    metadata:
      labels:
        app: checkout
    spec:
      containers:
      - name: checkout
        image: nginx
`

// TestWrongPlaceMarker: the annotation on the Deployment's own metadata is marked in the editor
// on its line, and the banner names it; on the pod template there is neither.
func TestWrongPlaceMarker(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	do(ctx, t,
		chromedp.Navigate(link(onDeployment)),
		shown(`.cm-gutter-lint .cm-lint-marker-warning`),
	)
	lines, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](markedLines))
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 1 || strings.TrimSpace(lines[0]) != "sidecar.istio.io/logLevel: debug" {
		t.Fatalf("marked lines %q, want the annotation's line on the Deployment", lines)
	}
	if banner := text(ctx, t, `[data-testid="pitfall-banner"]`); !strings.Contains(banner, "sidecar.istio.io/logLevel") {
		t.Fatalf("banner %q", banner)
	}
	checkA11y(ctx, t, "the wrong-place pitfall")
	onTemplate := strings.Replace(strings.Replace(onDeployment, "  annotations:\n    sidecar.istio.io/logLevel: debug\n", "", 1),
		"    metadata:\n      labels:", "    metadata:\n      annotations:\n        sidecar.istio.io/logLevel: debug\n      labels:", 1)
	do(ctx, t,
		chromedp.Navigate(link(onTemplate)),
		shown(`[data-testid="results"]`),
		shown(`.cm-content`),
	)
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(".cm-lint-marker, [data-testid='pitfall-banner']").length`))
	if err != nil || n != 0 {
		t.Fatalf("the annotation on the pod template has %d markers or banners (%v)", n, err)
	}
}

// TestTruncatedLinkAndTitles: a link whose tail a chat client cut says it looks truncated and
// points to the short link; two states of one workload have two titles, the second naming its step.
func TestTruncatedLinkAndTitles(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	full := link(onDeployment)
	do(ctx, t, chromedp.Navigate(full[:len(full)-12]), shown(`[data-testid="error"]`))
	if msg := text(ctx, t, `[data-testid="error"]`); !strings.Contains(msg, "truncated") || !strings.Contains(msg, "short link") {
		t.Fatalf("a cut link says %q", msg)
	}
	checkA11y(ctx, t, "a truncated link's error page")
	do(ctx, t, chromedp.Navigate(full), shown(`[data-testid="results"]`))
	first, err := chromedp.Run(ctx, chromedp.Title())
	if err != nil {
		t.Fatal(err)
	}
	withStep := baseURL + "/?s=" + url.QueryEscape(permalink.Encode(api.State{Manifest: onDeployment,
		Steps: []input.Step{{Key: "sidecar.istio.io/proxyMemory", Value: "256Mi"}}}))
	do(ctx, t, chromedp.Navigate(withStep), shown(`[data-testid="results"]`))
	second, err := chromedp.Run(ctx, chromedp.Title())
	if err != nil {
		t.Fatal(err)
	}
	if first == second || !strings.Contains(first, "Deployment/checkout") || !strings.Contains(second, "proxyMemory=256Mi") {
		t.Fatalf("titles %q and %q: want two, each naming the workload", first, second)
	}
}
