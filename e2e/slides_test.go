//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// belowFold is every text on the slide shown (slideText's runs) that ends below the window, the
// page scrolled to its top: a slide is read without scrolling.
const belowFold = `(() => {
	window.scrollTo(0, 0);
	const main = document.querySelector("main.present");
	if (!main) return [];
	const out = [];
	const walk = document.createTreeWalker(main, NodeFilter.SHOW_TEXT);
	for (let n; (n = walk.nextNode());) {
		const el = n.parentElement;
		if (!n.textContent.trim() || el.closest(".sr-only") || !el.checkVisibility({visibilityProperty: true, opacityProperty: true})) continue;
		const r = document.createRange();
		r.selectNodeContents(n);
		const box = r.getBoundingClientRect();
		if (box.height && box.bottom > window.innerHeight + 0.5) out.push(n.textContent.trim().slice(0, 50) + " (" + Math.round(box.bottom) + ")");
	}
	return out;
})()`

// slideState names the slide shown: its step and, for a step of several slides, which one.
const slideState = `(document.querySelector('[data-testid="slide-n"]')?.textContent || "") + " " + (document.getElementById("slide-page")?.textContent || "")`

// projectors are the screens rooms have, and the smallest type a slide may have on each.
var projectors = []struct {
	w, h int
	min  float64
}{{1280, 720, 18}, {1920, 1080, 24}}

// TestSlidesFit: a trainer presents every state of the lab's path — the playground's, the
// comparison of its Job two ways, its sidecar or ambient — on the two projectors rooms have,
// 1280×720 and 1920×1080. Every slide of each — each step, the next slides of a step (or a view)
// whose parts do not fit on one, the lifecycle, the batch table's and the Cluster tab's — has every
// text at ≥ 18 px (1280) or ≥ 24 px (1920), and nothing below the fold.
func TestSlidesFit(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	sh := newShots(t)
	do(ctx, t, chromedp.Navigate(baseURL+"/"), shown(chip(1)))
	n := pageValue[int](ctx, t, "the lab's steps", `return {ok: true, v: document.querySelectorAll('#lab [data-testid^="lab-"].chip').length};`)
	if n < 10 {
		t.Fatalf("the lab has %d steps", n)
	}
	var labs []string
	for i := 1; i <= n; i++ {
		labs = append(labs, labHref(ctx, t, i))
	}
	slides := 0
	for _, p := range projectors {
		do(ctx, t, chromedp.EmulateViewport(int64(p.w), int64(p.h)))
		for i, href := range labs {
			do(ctx, t, chromedp.Navigate(baseURL+href), shown(`[data-testid="present"]`))
			do(ctx, t, chromedp.Navigate(baseURL+attr(ctx, t, `[data-testid="present"]`, "href")), shown(`[data-testid="slide-n"]`))
			if p.w == 1920 && (i+1 == 7 || i+1 == 8 || i+1 == 9 || i+1 == 11) {
				// The decks of the other views and tabs, light and dark: a comparison, the batch
				// table, the Cluster tab, sidecar or ambient (the playground's are TestPresenterReadable's).
				checkA11y(ctx, t, fmt.Sprintf("the slides of lab step %d", i+1))
			}
			slides += checkDeck(ctx, t, sh, fmt.Sprintf("lab-%d-%d", i+1, p.w), fmt.Sprintf("lab step %d at %d×%d", i+1, p.w, p.h), p.h, p.min)
		}
	}
	t.Logf("%d slides measured", slides)
}

// checkDeck goes through every slide of the presentation shown, from the one shown, with →: each
// must have its text at ≥ min px and nothing below the fold of a window h px high. It answers
// how many slides it measured; shot names the screenshots of the first dozen.
func checkDeck(ctx context.Context, t *testing.T, sh *shots, shot, what string, h int, min float64) int {
	t.Helper()
	for k := 1; ; k++ {
		// One look at the slide: its name, its texts (slideText) and which are small, what is
		// below the fold (belowFold), and whether a next slide follows.
		var got struct {
			State string     `json:"state"`
			Runs  []slideRun `json:"runs"`
			Below []string   `json:"below"`
			More  bool       `json:"more"`
		}
		look, err := chromedp.Run(ctx, chromedp.Evaluate[json.RawMessage](`(() => {
			const p = document.getElementById("slide-page")?.textContent.match(/(\d+)\/(\d+)/);
			return {state: `+slideState+`, runs: `+slideText+`, below: `+belowFold+`,
				more: !!document.getElementById("slide-next") || (!!p && p[1] !== p[2])};
		})()`))
		if err == nil {
			err = json.Unmarshal(look, &got)
		}
		if err != nil {
			t.Fatal(err)
		}
		name := what + ", " + got.State
		small := 0
		for _, r := range got.Runs {
			if r.PX < min-0.01 {
				if small++; small <= 12 {
					t.Errorf("presenter mode, %s: %q (%s) is %.1f px, want ≥ %.0f px", name, r.Text, r.Where, r.PX, min)
				}
			}
		}
		if len(got.Runs) < 5 {
			t.Errorf("presenter mode, %s: only %d texts on the slide", name, len(got.Runs))
		}
		for j, b := range got.Below {
			if j == 5 {
				t.Errorf("%s: %d more below the fold", name, len(got.Below)-5)
				break
			}
			t.Errorf("%s: %q is below the fold (%d px high)", name, b, h)
		}
		if k <= 12 {
			sh.window(ctx, fmt.Sprintf("%s-%d", shot, k))
		}
		if !got.More {
			return k
		}
		if k > 150 {
			t.Fatalf("%s: more than 150 slides", name)
		}
		do(ctx, t, chromedp.KeyEvent(kb.ArrowRight))
		waitJS(ctx, t, name+", then →", settledJS+` && (`+slideState+`) !== `+jsString(got.State))
	}
}

// toSlide presses → until the slide shown is want's step (a step's own next slides come first).
func toSlide(ctx context.Context, t *testing.T, want string) {
	t.Helper()
	for range 60 {
		if pageValue[string](ctx, t, "the slide", `return {ok: true, v: document.querySelector('[data-testid="slide-n"]')?.textContent || ""};`) == want {
			return
		}
		state := pageValue[string](ctx, t, "the slide", `return {ok: true, v: `+slideState+`};`)
		do(ctx, t, chromedp.KeyEvent(kb.ArrowRight))
		waitJS(ctx, t, "→ towards "+want, settledJS+` && (`+slideState+`) !== `+jsString(state))
	}
	t.Fatalf("60 slides on, not at %q", want)
}

// eachPage runs fn on each of the shown step's slides, → from one to the next, and stops at the
// step's last: fn gets the slide's number from 1.
func eachPage(ctx context.Context, t *testing.T, fn func(page int)) {
	t.Helper()
	for page := 1; ; page++ {
		fn(page)
		mark := pageValue[string](ctx, t, "the slide's page", `return {ok: true, v: document.getElementById("slide-page")?.textContent || ""};`)
		if m := regexp.MustCompile(`(\d+)/(\d+)`).FindStringSubmatch(mark); m == nil || m[1] == m[2] {
			return
		}
		do(ctx, t, chromedp.KeyEvent(kb.ArrowRight))
		waitJS(ctx, t, "the step's next slide", `(document.getElementById("slide-page")?.textContent || "") !== `+jsString(mark))
	}
}
