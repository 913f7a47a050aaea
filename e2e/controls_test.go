//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestPanelSearchAndProxyConfigEditor: the search box narrows the annotation panel as one types;
// then two fields added one after the other through the proxy.istio.io/config editor both stand in
// the second step, as the timeline shows.
func TestPanelSearchAndProxyConfigEditor(t *testing.T) {
	t.Parallel()
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

// TestEmbedOfferCloses: the Embed offer (a popover over the results) closes on Esc, giving the
// focus back to its button, and on a click anywhere else; a click inside it leaves it open.
func TestEmbedOfferCloses(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	const offer, pop = `[data-testid="embed-offer"]`, `[data-testid="embed-snippet"]`
	isOpen := func() bool {
		return pageValue[bool](ctx, t, "the Embed offer", `const d = document.querySelector('[data-testid="embed-offer"]'); return {ok: !!d, v: d.open};`)
	}
	sh := newShots(t)
	do(ctx, t, chromedp.Navigate(baseURL+"/"), shown(`.cm-content`), clickOn(offer+" summary"), shown(pop))
	for _, s := range []screen{checkedScreens[0], checkedScreens[2]} {
		do(ctx, t, s.emulate())
		if over := sidewaysBy(ctx, t); over > 0 {
			t.Errorf("the open Embed offer at %s scrolls the page sideways by %d px", s.name, over)
		}
		sh.take(ctx, "open-"+s.name)
		checkA11y(ctx, t, "the open Embed offer at "+s.name)
	}
	do(ctx, t, checkedScreens[0].emulate(), clickOn(pop))
	if !isOpen() {
		t.Fatal("a click inside the Embed offer closed it")
	}
	// (A closed <details>'s content keeps its boxes in Chromium: ask the element, not the layout.)
	const closed = `!document.querySelector('[data-testid="embed-offer"]').open`
	do(ctx, t, chromedp.KeyEvent(kb.Escape))
	waitJS(ctx, t, "the Embed offer closed by Esc", settledJS+" && "+closed)
	if f := pageValue[bool](ctx, t, "the focus", `return {ok: true, v: document.activeElement === document.querySelector('[data-testid="embed-offer"] summary')};`); !f {
		t.Error("after Esc the focus is not on the Embed button")
	}
	do(ctx, t, clickOn(offer+" summary"), shown(pop), clickOn(`[data-testid="tab-unified"]`))
	waitJS(ctx, t, "the Embed offer closed by a click on the tabs", settledJS+" && "+closed)
}

// TestProxyConfigDocs: the proxy.istio.io/config editor shows each field's doc from proxy.proto
// as it reads: links to Istio's docs are links, the stats matcher's example a code block, no
// Markdown left as text, and a long doc's rest opens from its "more" — with JavaScript off too,
// since it is a <details>. Looked at in the checked screens (axe, nothing sideways).
func TestProxyConfigDocs(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	sh := newShots(t)
	const (
		matcher = `[data-testid="pc-doc-proxyStatsMatcher"]`
		more    = `[data-testid="pc-more-proxyStatsMatcher"]`
	)
	// (The contents of a closed <details> still have boxes in Chromium: open is what says it is shut.)
	closed := void(until(settledJS + ` && !!` + query(more) + ` && !` + query(more) + `.open`))
	open := void(until(settledJS + ` && (() => { const m = ` + query(more) + `; if (!m) return false; m.closest(".annotations").scrollTop = 0;
		m.scrollIntoView({block: "center"}); return m.open && m.querySelector("pre").offsetHeight > 0; })()`))
	do(ctx, t,
		chromedp.Navigate(baseURL+"/?q=stats"),
		shown(`[data-testid="pc-editor"] > summary`),
		clickOn(`[data-testid="pc-editor"] > summary`),
		shown(matcher),
		closed,
		clickOn(more+` > summary`),
		open,
	)
	raw := pageValue[[]string](ctx, t, "Markdown left in the docs", `const out = [];
		for (const d of document.querySelectorAll(".pc-doc")) {
			const c = d.cloneNode(true);
			c.querySelectorAll("code, summary").forEach((e) => e.remove());
			if (/\]\(|`+"`"+`/.test(c.textContent)) out.push(d.dataset.testid + ": " + c.textContent.trim().slice(0, 80));
		}
		return {ok: document.querySelectorAll(".pc-doc").length > 20, v: out};`)
	if len(raw) > 0 {
		t.Errorf("Markdown shown as text:\n  %s", strings.Join(raw, "\n  "))
	}
	if href := attr(ctx, t, `[data-testid="pc-doc-meshId"] a`, "href"); href != "https://istio.io/docs/reference/glossary/#service-mesh" {
		t.Errorf("meshId's link goes to %q", href)
	}
	everyScreen(ctx, t, sh, "the proxy config editor's docs", "docs", open)

	// Without JavaScript the "more" opens all the same.
	tab, cancel := chromedp.NewContext(ctx)
	defer cancel()
	focused(tab, t)
	do(tab, t, chromedp.Navigate("about:blank"))
	noJS(tab, t)
	do(tab, t,
		chromedp.Navigate(baseURL+"/?q=stats"),
		shown(`[data-testid="pc-editor"] > summary`),
		clickOn(`[data-testid="pc-editor"] > summary`),
		shown(matcher),
		closed,
		clickOn(more+` > summary`),
		void(until(settledJS+` && `+query(more)+`.open`)),
	)
	if got := text(tab, t, more+` pre`); !strings.HasPrefix(got, "proxyStatsMatcher:\n  inclusionRegexps:") {
		t.Errorf("without JavaScript, the example reads %q", got)
	}
	sh.take(tab, "no-javascript")
}

// TestAnnotationDescriptionsWhole: every annotation's description in the panel is shown whole:
// none is cut at a few lines with nothing to say there is more (16 of them were, readable only
// under a mouse pointer).
func TestAnnotationDescriptionsWhole(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	do(ctx, t, chromedp.EmulateViewport(1440, 900), chromedp.Navigate(baseURL+"/"), shown(`.cm-content`))
	clipped := pageValue[string](ctx, t, "the clipped descriptions", `for (const d of document.querySelectorAll("details")) d.open = true;
		const cut = [...document.querySelectorAll(".a-desc")].filter((p) => p.scrollHeight > p.clientHeight + 1);
		return {ok: document.querySelectorAll(".a-desc").length > 20, v: cut.map((p) => p.textContent.slice(0, 60)).join(" | ")};`)
	if clipped != "" {
		t.Errorf("descriptions cut short: %s", clipped)
	}
}

// TestLabStepKeys: outside presenter mode, ] and [ go to the lab's next and previous step (a
// press, not a dozen Tabs), the focus lands on the step's first change, and the ? list says so.
func TestLabStepKeys(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	do(ctx, t,
		chromedp.Navigate(baseURL+"/"),
		shown(`[data-testid="lab-2"]`),
		clickOn(`[data-testid="lab-2"]`),
		shown(`[data-testid="lab-look"]`),
		// The chip is a link: step 2 is a new document, whose keys work once its script has set
		// up (the editor is its sign), as for a person who presses ] while the page still loads.
		shown(`.cm-content`),
	)
	at := func(n string) string {
		return `document.querySelector('[data-testid="lab-` + n + `"]')?.classList.contains("current") && document.activeElement?.dataset.testid === "change"`
	}
	do(ctx, t, chromedp.KeyEvent("]"))
	if _, err := chromedp.Run(ctx, until(at("3"))); err != nil {
		t.Fatalf("] did not go to lab step 3 with the focus on its first change (%s)", labWhere(ctx, t))
	}
	do(ctx, t, chromedp.KeyEvent("["))
	if _, err := chromedp.Run(ctx, until(at("2"))); err != nil {
		t.Fatalf("[ did not go back to lab step 2 with the focus on its first change (%s)", labWhere(ctx, t))
	}
	do(ctx, t, chromedp.KeyEvent("?"), shown(`#shortcuts`))
	if got := text(ctx, t, `#shortcuts`); !strings.Contains(got, "[ ]") || !strings.Contains(got, "The lab: previous / next step") {
		t.Fatalf("the ? list does not name [ and ]:\n%s", got)
	}
	checkA11y(ctx, t, "the lab's step 2, reached with [")
}

// labWhere says where a lab page is, for a failure: the current step, the focus, the status line
// and an action's error (a request answered 503 says so there, the busy server's way).
func labWhere(ctx context.Context, t *testing.T) string {
	t.Helper()
	return pageValue[string](ctx, t, "where the lab is", `const q = (s) => document.querySelector(s);
		return {ok: true, v: "step " + (q(".chip.current")?.dataset.testid || "none") + ", focus on " + (document.activeElement?.dataset?.testid || document.activeElement?.tagName) +
			", status " + JSON.stringify(q("#status")?.textContent || "") + ", action error " + JSON.stringify((q("#action-error")?.textContent || "").trim().slice(0, 200))};`)
}
