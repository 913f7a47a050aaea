//go:build e2e

package e2e

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/chromedp/chromedp"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/permalink"
)

// highlightedJS answers the rows the page highlights, each as "its step's data-testid, whether
// it is open (every fold around the row: its step's, the serializer's), data-doc, data-path", and
// whether the field diff's panel is shown, as JSON.
const highlightedJS = `JSON.stringify({
	rows: [...document.querySelectorAll("tr.highlight")].map((r) => {
		let open = true;
		for (let d = r.closest("details"); d; d = d.parentElement.closest("details")) open = open && d.open;
		const s = r.closest("details.step");
		return (s ? s.dataset.testid : "-") + (open ? " open" : " closed") + " " + r.dataset.doc + " " + r.dataset.path;
	}),
	diffShown: !document.querySelector('[data-panel="diff"]').hidden,
})`

// waitHighlighted waits until the settled page highlights exactly the row want ("diff-step-N
// open DOC PATH") on the shown field diff, and fails saying what it highlights if it does not.
func waitHighlighted(ctx context.Context, t *testing.T, what, want string) {
	t.Helper()
	wantJSON := `{"rows":[` + jsString(want) + `],"diffShown":true}`
	if _, err := chromedp.Run(ctx, until(settledJS+` && `+highlightedJS+` === `+jsString(wantJSON))); err != nil {
		got, _ := chromedp.Run(ctx, chromedp.Evaluate[string](highlightedJS))
		t.Fatalf("%s: the page highlights %s, want %s", what, got, wantJSON)
	}
}

// TestDeepLinkOpensItsStep: a field changed in two steps has a deep link per step, and each opens
// its own step's row — by the address (a link opened) and by a click (a link copied) — while an
// older link, which names no step, opens the first row with its path. A link opens every fold
// around its row; on a page of two documents it opens its document's row, from another tab.
func TestDeepLinkOpensItsStep(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	sh := newShots(t)
	cpu := "spec.template.spec.containers[istio-proxy].resources.requests.cpu"
	twice := baseURL + "/?s=" + url.QueryEscape(permalink.Encode(api.State{Manifest: deployment,
		Steps: []input.Step{{Key: "sidecar.istio.io/proxyCPU", Value: "200m"}, {Key: "sidecar.istio.io/proxyCPU", Value: "300m"}}}))

	// Opened: step 2's link highlights step 2's row, not step 1's.
	do(ctx, t, chromedp.Navigate(twice+"#step=2&path="+url.PathEscape(cpu)))
	waitHighlighted(ctx, t, "step 2's link", "diff-step-2 open 1 "+cpu)
	sh.take(ctx, "step-2")
	// An older link names no step: the first row with the path, step 1's.
	do(ctx, t, chromedp.Navigate(twice+"#path="+url.PathEscape(cpu)))
	waitHighlighted(ctx, t, "a link without a step", "diff-step-1 open 1 "+cpu)

	// Clicked: each row's own link highlights that row, and the address names its step.
	for _, step := range []string{"2", "1"} {
		row := `[data-testid="diff-step-` + step + `"] [data-testid="change"][data-path="` + cpu + `"]`
		do(ctx, t, clickOn(row+` [data-testid="deep-link"]`))
		waitHighlighted(ctx, t, "a click on step "+step+"'s link", "diff-step-"+step+" open 1 "+cpu)
		hash, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.hash`))
		if err != nil || hash != "#step="+step+"&path="+url.PathEscape(cpu) {
			t.Fatalf("after a click on step %s's link the address ends %q (%v)", step, hash, err)
		}
	}

	// A change of the serializer's in row 0, which starts folded, in a fold of its own: both open.
	do(ctx, t, chromedp.Navigate(twice+"#step=0&path=status"))
	waitHighlighted(ctx, t, "a link into the serializer's changes of folded row 0", "diff-step-0 open 1 status")

	// Two documents, a step after them (row 0 starts folded), opened on the unified tab: document
	// 2's link opens row 0, shows the field diff and highlights document 2's row.
	proxy := "spec.template.spec.containers[istio-proxy]"
	two := deployment + "---\n" + strings.Replace(deployment, "name: checkout\n  namespace", "name: cart\n  namespace", 1)
	batch := baseURL + "/?s=" + url.QueryEscape(permalink.Encode(api.State{Manifest: two,
		Steps: []input.Step{{Key: "sidecar.istio.io/proxyCPU", Value: "200m"}}})) + "&tab=unified"
	do(ctx, t, chromedp.Navigate(batch+"#step=0&doc=2&path="+url.PathEscape(proxy)))
	waitHighlighted(ctx, t, "document 2's link in folded row 0", "diff-step-0 open 2 "+proxy)
	sh.take(ctx, "doc-2")
}
