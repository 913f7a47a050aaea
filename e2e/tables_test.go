//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// chip is the lab strip's chip n.
func chip(n int) string { return `[data-testid="lab-` + strconv.Itoa(n) + `"]` }

// labHref is chip n's link on the page as it is.
func labHref(ctx context.Context, t *testing.T, n int) string {
	t.Helper()
	return attr(ctx, t, chip(n), "href")
}

// inBox says where the batch table's column headers are against the scroll box and the window:
// "" when every one of cols is inside both, else which is not.
const inBox = `((cols) => {
	const box = document.querySelector('[data-testid="batch-scroll"]').getBoundingClientRect();
	const out = [];
	if (document.documentElement.scrollWidth > document.documentElement.clientWidth) out.push("the page scrolls sideways");
	for (const c of cols) {
		const th = document.querySelector('[data-testid="batch"] th[data-col="' + c + '"]');
		if (!th) { out.push(c + ": no such column"); continue; }
		const r = th.getBoundingClientRect();
		if (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.right > window.innerWidth) {
			out.push(c + " at " + Math.round(r.left) + "–" + Math.round(r.right) + ", box " + Math.round(box.left) + "–" + Math.round(box.right) + ", window " + window.innerWidth);
		}
	}
	return out.join("; ");
})`

// browserWithScrollbars is browser() without chromedp's hide-scrollbars, so that a test can see
// whether a scroll box shows its scrollbar.
func browserWithScrollbars(t *testing.T) context.Context {
	t.Helper()
	return browser(t, chromedp.Flag("hide-scrollbars", false))
}

// TestBatchTableFits: at 1440×900 the lab's batch shows proxy first, requests, limits and
// pitfalls without scrolling anything sideways, ends with the totals (in the rows' units), and
// passes axe; the chooser adds columns, and then the table scrolls in its box with the workload
// column stuck to its left edge. At 390 px the page itself does not scroll sideways.
func TestBatchTableFits(t *testing.T) {
	t.Parallel()
	ctx := browserWithScrollbars(t)
	sh := newShots(t)
	do(ctx, t, chromedp.EmulateViewport(1440, 900), chromedp.Navigate(baseURL+"/"), shown(chip(8)))
	batch := labHref(ctx, t, 8)
	do(ctx, t, chromedp.Navigate(baseURL+batch), shown(`[data-testid="batch"]`))
	out, err := chromedp.Run(ctx, chromedp.Evaluate[string](inBox+`(["proxy first", "requests", "limits", "pitfalls", "total requests"])`))
	if err != nil {
		t.Fatal(err)
	}
	if out != "" {
		t.Errorf("at 1440×900: %s", out)
	}
	if total := text(ctx, t, `[data-testid="batch-total"]`); !strings.Contains(total, "2,010 pods") || !strings.Contains(total, "cpu=201.2 memory=251.5Gi") {
		t.Errorf("totals row %q", total)
	}
	if attr(ctx, t, `[data-testid="batch-scroll"]`, "tabindex") != "0" || attr(ctx, t, `[data-testid="batch-scroll"]`, "aria-label") == "" {
		t.Error("the table's scroll box is not in the tab order with a name")
	}
	sh.take(ctx, "1440-default-columns")
	checkA11y(ctx, t, "the batch tab (lab batch, default columns)")

	// Every column, through the chooser: the table is wider than its box and scrolls in it.
	do(ctx, t, clickOn(`[data-testid="batch-cols"] summary`))
	for _, id := range []string{"doc", "namespace", "poststart", "prestop", "istio-init", "proxy-config", "total-limits"} {
		do(ctx, t, clickOn(`[data-testid="col-`+id+`"]`))
	}
	do(ctx, t,
		clickOn(`[data-testid="batch-cols-apply"]`),
		shown(`[data-testid="batch"] th[data-col="PROXY_CONFIG"]`),
	)
	if loc, _ := chromedp.Run(ctx, chromedp.Location()); !strings.Contains(loc, "cols=") {
		t.Errorf("the address %q does not keep the columns", loc)
	}
	sticky, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
		const box = document.querySelector('[data-testid="batch-scroll"]');
		if (box.scrollWidth <= box.clientWidth) return "every column fits: nothing to scroll";
		if (box.offsetHeight - box.clientHeight < 8) return "no visible scrollbar (" + (box.offsetHeight - box.clientHeight) + " px)";
		box.scrollLeft = 400;
		const th = box.querySelector('tbody th[scope="row"]').getBoundingClientRect();
		const b = box.getBoundingClientRect();
		return Math.abs(th.left - b.left) <= 2 ? "" : "the workload column moved to " + Math.round(th.left) + " (box at " + Math.round(b.left) + ")";
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if sticky != "" {
		t.Errorf("all columns: %s", sticky)
	}
	if over, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > document.documentElement.clientWidth`)); over {
		t.Error("with every column the page scrolls sideways")
	}
	sh.take(ctx, "1440-every-column-scrolled")
	checkA11y(ctx, t, "the batch tab (every column)")

	do(ctx, t,
		chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(3), chromedp.EmulateMobile),
		chromedp.Navigate(baseURL+batch),
		shown(`[data-testid="batch"]`),
	)
	if out, err := chromedp.Run(ctx, chromedp.Evaluate[string](inBox+`([])`)); err != nil || out != "" {
		t.Errorf("at 390 px: %q %v", out, err)
	}
	do(ctx, t, onNode(`[data-testid="batch-scroll"]`, chromedp.ScrollIntoView(chromedp.CSS(`[data-testid="batch-scroll"]`))))
	sh.take(ctx, "390")
}

// TestLabPathInBrowser walks the lab's strip chip by chip, as a learner clicks it: each chip
// marks itself (and only itself) aria-current="step"; the annotation chips are cumulative (chip
// n's timeline is the injection and n−1 steps); chip 7 is the compare page, whose strip's
// "next" is chip 8; chip 8 is the batch of eight.
func TestLabPathInBrowser(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	sh := newShots(t)
	do(ctx, t, chromedp.Navigate(baseURL+"/"), shown(chip(8)))
	for n := 1; n <= 8; n++ {
		if n == 8 {
			// From step 7's page, by its "next".
			if next, eight := attr(ctx, t, `[data-testid="lab-next"]`, "href"), labHref(ctx, t, 8); next != eight {
				t.Fatalf("step 7's next is %q, chip 8 is %q", next, eight)
			}
			do(ctx, t, clickOn(`[data-testid="lab-next"]`))
		} else {
			do(ctx, t, clickOn(chip(n)))
		}
		// The click's answer has come when the page has settled at the chip's address with the
		// chip marked: chip 1 is marked on the home page already, before its own page arrives.
		const markedJS = `[...document.querySelectorAll('[data-testid="lab"] [aria-current]')].map((e) => e.dataset.testid + "=" + e.getAttribute("aria-current"))`
		want := fmt.Sprintf("lab-%d=step", n)
		if _, err := chromedp.Run(ctx, until(settledJS+` && location.pathname + location.search === new URL(`+query(chip(n))+`.href).pathname + new URL(`+query(chip(n))+`.href).search && JSON.stringify(`+markedJS+`) === `+jsString(`["`+want+`"]`))); err != nil {
			marked, _ := chromedp.Run(ctx, chromedp.Evaluate[[]string](markedJS))
			t.Fatalf("after clicking chip %d: marked %v, want [%s] (%v)", n, marked, want, err)
		}
		look := text(ctx, t, `[data-testid="lab-look"]`)
		if !strings.Contains(strings.ToLower(look), fmt.Sprintf("step %d of 11", n)) {
			t.Errorf("chip %d: what to look for says %q", n, look)
		}
		switch {
		case n <= 6:
			rows, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="timeline"] > li').length`))
			if err != nil {
				t.Fatal(err)
			}
			// Row 0 is the injection; then one row per annotation so far.
			if rows != n {
				t.Errorf("chip %d: the timeline has %d rows, want the injection and %d steps", n, rows, n-1)
			}
		case n == 7:
			do(ctx, t, shown(`[data-testid="compare"]`))
		case n == 8:
			do(ctx, t, shown(`[data-testid="batch"]`))
			rows, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid="batch-row"]').length`))
			if err != nil || rows != 8 {
				t.Errorf("chip 8: %d batch rows (%v), want 8", rows, err)
			}
		}
		sh.take(ctx, fmt.Sprintf("chip-%d", n))
	}
}

// TestLabOnPhone: on a phone (390×844) no step of the lab scrolls sideways — step 7 is the
// compare page, whose two outputs stack — in English, Japanese and Korean, and each passes axe;
// screenshots of steps 1, 4, 7 and 8 at 390×844 and 1440×900.
func TestLabOnPhone(t *testing.T) {
	t.Parallel()
	phone := checkedScreens[2]
	if phone.width != 390 {
		t.Fatalf("checkedScreens[2] is %s, want the phone", phone.name)
	}
	for _, lang := range []string{"en", "ja", "ko"} {
		t.Run(lang, func(t *testing.T) {
			t.Parallel()
			ctx := browser(t)
			sh := newShots(t)
			do(ctx, t, phone.emulate(), chromedp.Navigate(baseURL+"/"), shown(`.cm-content`))
			hrefs := pageValue[[]string](ctx, t, "the lab's chips", `const a = [...document.querySelectorAll('.chip[data-testid^="lab-"]')].map((c) => c.getAttribute("href")); return {ok: a.length > 0, v: a};`)
			if len(hrefs) < 8 {
				t.Fatalf("the lab has %d steps, want at least 8", len(hrefs))
			}
			for n, href := range hrefs {
				i := n + 1
				do(ctx, t, phone.emulate(), chromedp.Navigate(baseURL+href+"&lang="+lang), shown(chip(i)))
				if over := sidewaysBy(ctx, t); over > 0 {
					t.Errorf("lab step %d (%s) at 390 px scrolls sideways by %d px: %s", i, lang, over, strings.Join(widest(ctx, t), "; "))
				}
				checkA11y(ctx, t, fmt.Sprintf("lab step %d (%s) at 390 px", i, lang))
				if i == 1 || i == 4 || i == 7 || i == 8 {
					sh.take(ctx, fmt.Sprintf("step-%d-%s-390", i, lang))
					do(ctx, t, checkedScreens[0].emulate())
					sh.take(ctx, fmt.Sprintf("step-%d-%s-1440", i, lang))
				}
			}
		})
	}
}

// widest names the elements that reach past the window's right edge and hold no element that
// does (where a sideways scroll comes from), at most five.
func widest(ctx context.Context, t *testing.T) []string {
	t.Helper()
	return pageValue[[]string](ctx, t, "what is too wide", `const w = document.documentElement.clientWidth;
		const past = (el) => el.getBoundingClientRect().right > w + 0.5;
		const out = [];
		for (const el of document.querySelectorAll("body *")) {
			if (!past(el) || [...el.children].some(past)) continue;
			out.push(el.tagName.toLowerCase() + (el.className && typeof el.className === "string" ? "." + el.className.trim().split(/\s+/).join(".") : "") + " right=" + Math.round(el.getBoundingClientRect().right) + " «" + el.textContent.trim().slice(0, 40) + "»");
			if (out.length === 5) break;
		}
		return {ok: true, v: out};`)
}
