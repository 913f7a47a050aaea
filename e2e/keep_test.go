//go:build e2e

package e2e

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestToggleKeepsSteps: after a toggle the page keeps its own copy of the steps, the lab strip and
// the settings that did not change (the server sent placeholders for them) — the same nodes, with what the
// reader opened in them — and shows exactly what a fresh load of the link shows. When a step the
// page held is gone by the time the answer comes, the script asks again for every step.
func TestToggleKeepsSteps(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	do(ctx, t,
		chromedp.Navigate(baseURL+"/"),
		shown(`.cm-content`),
	)
	pasteJS(ctx, t, jsString(deployment))
	do(ctx, t,
		clickOn(addButton("sidecar.istio.io/proxyCPU")),
		shown(cpuRow),
	)
	// Mark the two steps' nodes, and open a value in row 0 as a reader would.
	mark := `(() => {
		for (const i of [0, 1]) document.querySelector('[data-testid="diff-step-' + i + '"] summary').dataset.mark = "kept-" + i;
		const fold = document.querySelector('[data-testid="diff-step-0"] [data-testid="value-fold"]');
		fold.open = true;
		fold.dataset.mark = "opened";
		document.querySelector('#lab .lab-row').dataset.mark = "kept-lab";
		document.querySelector('#settings-fields .grid2').dataset.mark = "kept-settings";
		window.fetches = 0;
		const f = window.fetch;
		window.fetch = (url, init) => { if (init && init.headers && init.headers["X-Sidecarlab-Partial"]) window.fetches++; return f(url, init); };
		return true;
	})()`
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](mark)); err != nil {
		t.Fatal(err)
	}
	do(ctx, t,
		clickOn(addButton("proxy.istio.io/config")),
		shown(moveRow),
	)
	checkRows(ctx, t)
	kept := `(() => {
		const m = (i) => document.querySelector('[data-testid="diff-step-' + i + '"] summary')?.dataset.mark || "";
		const fold = document.querySelector('[data-testid="diff-step-0"] [data-testid="value-fold"][data-mark="opened"]');
		const lab = document.querySelector('#lab .lab-row')?.dataset.mark || "";
		const settings = document.querySelector('#settings-fields .grid2')?.dataset.mark || "";
		return [m(0), m(1), fold && fold.open ? "open" : "closed", lab, settings, String(document.querySelectorAll("[data-keep]").length), String(window.fetches)];
	})()`
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](kept))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"kept-0", "kept-1", "open", "kept-lab", "kept-settings", "0", "1"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after the toggle: steps' marks, the opened value, the lab strip's and the settings' marks, placeholders left, requests = %q, want %q", got, want)
	}
	before := resultsText(ctx, t)
	labText := `document.getElementById("lab").innerText`
	labBefore, err := chromedp.Run(ctx, chromedp.Evaluate[string](labText))
	if err != nil || labBefore == "" {
		t.Fatalf("the lab strip after the toggle: %q (%v)", labBefore, err)
	}
	permalink := attr(ctx, t, `#playground`, "data-permalink")
	checkA11y(ctx, t, "the playground after a toggle that kept two steps")

	// A step the page held is gone when the answer comes: the script asks again, without keys.
	drop := `(() => {
		window.asks = [];
		const f = window.fetch;
		window.fetch = async (url, init) => {
			const h = (init && init.headers) || {};
			if (h["X-Sidecarlab-Partial"]) window.asks.push(h["X-Sidecarlab-Held"] ? "held" : "all");
			const res = await f(url, init);
			for (const el of document.querySelectorAll("details.step[data-key]")) el.dataset.key = "gone";
			return res;
		};
		return true;
	})()`
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](drop)); err != nil {
		t.Fatal(err)
	}
	do(ctx, t, clickOn(`[data-testid="unset-proxy.istio.io/config"]`))
	if _, err := chromedp.Run(ctx, until(`!!document.querySelector('[data-testid="diff-step-3"]') && !document.body.classList.contains("busy")`)); err != nil {
		t.Fatalf("the toggle did not load: %v", err)
	}
	if asks, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.asks`)); err != nil || fmt.Sprint(asks) != "[held all]" {
		t.Fatalf("the script asked %q (%v), want with the held steps, then for all", asks, err)
	}
	if n, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("[data-keep]").length + document.querySelectorAll('details.step[data-key="gone"]').length`)); n != 0 {
		t.Fatalf("%d placeholders or stale steps left after asking again", n)
	}
	do(ctx, t, shown(cpuRow))

	// The kept page shows what a fresh load of its link shows.
	tab, cancel := chromedp.NewContext(ctx)
	defer cancel()
	focused(tab, t)
	do(tab, t, chromedp.Navigate(baseURL+permalink))
	checkRows(tab, t)
	if after := resultsText(tab, t); after != before {
		t.Fatalf("the page that kept its steps shows a different field diff than its link:\n%s\n---\n%s", before, after)
	}
	if after, _ := chromedp.Run(tab, chromedp.Evaluate[string](labText)); after != labBefore {
		t.Fatalf("the page that kept its lab strip shows another than its link:\n%s\n---\n%s", labBefore, after)
	}
}
