//go:build e2e

package e2e

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// axePath is axe-core's browser build, a devDependency of static/ (scripts/testenv.sh runs npm ci
// there when it is missing). It is injected by the test only: it is neither in the served bundle
// nor embedded in the binary.
var axePath = filepath.Join("..", "static", "node_modules", "axe-core", "axe.min.js")

var (
	axeOnce   sync.Once
	axeSource string
	axeErr    error
)

func axeScript(t *testing.T) string {
	t.Helper()
	axeOnce.Do(func() {
		b, err := os.ReadFile(axePath)
		axeSource, axeErr = string(b), err
	})
	if axeErr != nil {
		t.Fatalf("axe-core is missing (%v): run `npm ci --no-audit --no-fund` in static/, or make test (scripts/testenv.sh brings it)", axeErr)
	}
	return axeSource
}

// axeRun runs axe-core's WCAG 2.0/2.1 A and AA rules on the page as it is now and returns the
// serious and critical violations, one readable line per rule and element; with colours set, only
// the rules that read colours (axeColourRules).
const axeRun = `(async (colours) => {
	// Let an answer land and its fade (.busy) finish, or axe measures half-transparent text: wait
	// (checkA11y's deadline bounds it) until nothing is busy and no transition runs.
	const frame = () => new Promise((r) => requestAnimationFrame(() => r()));
	while (document.body.classList.contains("busy") || document.getAnimations().some((a) => a instanceof CSSTransition && a.playState === "running")) await frame();
	const r = await axe.run(document, {
		runOnly: colours ? {type: "rule", values: AXE_COLOUR_RULES} : {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]},
		resultTypes: ["violations"],
	});
	const out = [];
	for (const v of r.violations) {
		if (v.impact !== "serious" && v.impact !== "critical") continue;
		for (const n of v.nodes.slice(0, 6)) {
			out.push(v.impact + " " + v.id + ": " + n.target.join(" ") + " — " + (n.failureSummary || v.help).replace(/\s+/g, " ").slice(0, 300));
		}
		if (v.nodes.length > 6) out.push(v.impact + " " + v.id + ": … and " + (v.nodes.length - 6) + " more");
	}
	return out;
})`

// axeColourRules are the rules of axeRun's set whose outcome depends on colours: all that the
// dark theme changes (static/app.css: it sets the colour custom properties and nothing else), so
// the dark theme is checked with these alone, the light theme with every rule.
const axeColourRules = `["color-contrast", "link-in-text-block"]`

// pageState is what axe's outcome depends on besides the theme: the document, the window, the
// scroll and the focus. checkA11y checks each state once per run of the tests.
const pageState = `(() => {
	const a = document.activeElement;
	return [innerWidth, innerHeight, devicePixelRatio, scrollX, scrollY, a ? a.tagName + "#" + a.id + "." + a.className : "",
		document.documentElement.outerHTML].join("\u0000");
})()`

var (
	checkedMu sync.Mutex
	// checkedStates are the page states (pageState's sha256) axe has passed in this run;
	// checkedRuns and skipped how many states were checked and seen again (said at the end).
	checkedStates        = map[[32]byte]bool{}
	checkedRuns, skipped int
)

func init() {
	atExit = append(atExit, func() {
		fmt.Fprintf(os.Stderr, "axe: %d page states checked, %d seen again and not checked twice\n", checkedRuns, skipped)
	})
}

// setTheme puts the page in a theme the way the ◐ toggle does (the data-theme attribute).
func setTheme(ctx context.Context, t *testing.T, theme string) {
	t.Helper()
	js := fmt.Sprintf(`document.documentElement.dataset.theme = %q; getComputedStyle(document.body).color; true`, theme)
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js)); err != nil {
		t.Fatal(err)
	}
}

// screen is a window the UI is checked at: its size, the device's scale (150 % zoom is a
// scale of 1.5 on a window of two thirds the size) and whether it is a phone.
type screen struct {
	name          string
	width, height int64
	scale         float64
	mobile        bool
}

// checkedScreens are the windows every UI change is looked at in: 1440×900, 1920×1080, a
// 390×844 phone and 150 % zoom.
var checkedScreens = []screen{
	{"1440", 1440, 900, 1, false},
	{"1920", 1920, 1080, 1, false},
	{"390", 390, 844, 3, true},
	{"zoom150", 960, 600, 1.5, false},
}

// everyScreen looks at the page as every UI change is looked at: at each checked screen
// (after at, if any, which brings what is checked into view), light and dark, it must not scroll
// sideways and must pass axe; each is a screenshot named NAME-SCREEN-THEME. what names the page
// in the errors.
func everyScreen(ctx context.Context, t *testing.T, sh *shots, what, name string, at chromedp.Action[chromedp.Void]) {
	t.Helper()
	for _, s := range checkedScreens {
		steps := []chromedp.Action[chromedp.Void]{s.emulate()}
		if at != nil {
			steps = append(steps, at)
		}
		do(ctx, t, steps...)
		for _, theme := range []string{"light", "dark"} {
			setTheme(ctx, t, theme)
			if over, err := chromedp.Run(ctx, chromedp.Evaluate[string](sideways)); err != nil {
				t.Fatal(err)
			} else if over != "" {
				t.Errorf("%s at %s, %s: the page scrolls sideways by %s", what, s.name, theme, over)
			}
			sh.take(ctx, name+"-"+s.name+"-"+theme)
		}
		// checkA11y checks both themes and leaves the page light, so it comes after the
		// screenshots: before them, every "dark" screenshot was taken in the light theme.
		checkA11y(ctx, t, what+" at "+s.name)
	}
}

// emulate sets the window to the screen.
func (s screen) emulate() chromedp.Action[chromedp.Void] {
	opts := []chromedp.EmulateViewportOption{chromedp.EmulateScale(s.scale)}
	if s.mobile {
		opts = append(opts, chromedp.EmulateMobile)
	}
	return chromedp.EmulateViewport(s.width, s.height, opts...)
}

// sidewaysBy is how far the page is wider than its window (0: no sideways scrolling).
func sidewaysBy(ctx context.Context, t *testing.T) int {
	t.Helper()
	over, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth - document.documentElement.clientWidth`))
	if err != nil {
		t.Fatal(err)
	}
	return over
}

// sideways is how far the page is wider than the window, and the widest thing sticking out.
const sideways = `(() => {
	const over = document.documentElement.scrollWidth - document.documentElement.clientWidth;
	const w = document.documentElement.clientWidth;
	const name = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + [...el.classList].map((c) => "." + c).join("");
	// The outermost elements that stick out (not those inside a box that scrolls or clips).
	const out = [];
	const walk = (el) => {
		for (const c of el.children) {
			if (c.getBoundingClientRect().right > w + 0.5) { out.push(name(c) + " (" + Math.round(c.getBoundingClientRect().right) + ")"); continue; }
			if (!["auto", "scroll", "hidden", "clip"].includes(getComputedStyle(c).overflowX)) walk(c);
		}
	};
	if (over > 0) walk(document.body);
	return over > 0 ? over + " px; sticking out: " + out.slice(0, 6).join(", ") : "";
})()`

// checkA11y injects axe-core into the page and fails the test on any serious or critical
// violation, in the light and then the dark theme. The page is left in the light theme.
func checkA11y(ctx context.Context, t *testing.T, state string) {
	t.Helper()
	injectAxe(ctx, t, state)
	setTheme(ctx, t, "light")
	st, err := chromedp.Run(ctx, chromedp.Evaluate[string](pageState))
	if err != nil {
		t.Fatal(err)
	}
	key := sha256.Sum256([]byte(st))
	checkedMu.Lock()
	seen := checkedStates[key]
	if seen {
		skipped++
	} else {
		checkedRuns++
	}
	checkedMu.Unlock()
	if seen {
		return // the same page, window, scroll and focus passed already: axe says the same
	}
	for _, theme := range []string{"light", "dark"} {
		found := axeViolations(ctx, t, state, theme)
		if len(found) > 0 {
			t.Errorf("axe: %d serious/critical violation(s) on %s, %s theme:\n  %s", len(found), state, theme, strings.Join(found, "\n  "))
		}
	}
	setTheme(ctx, t, "light")
	if !t.Failed() {
		checkedMu.Lock()
		checkedStates[key] = true
		checkedMu.Unlock()
	}
}

// injectAxe puts axe-core into the page unless it is there.
func injectAxe(ctx context.Context, t *testing.T, state string) {
	t.Helper()
	ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`typeof axe !== "undefined"`))
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](axeScript(t)+";\ntrue")); err != nil {
			t.Fatalf("injecting axe-core into %s: %v", state, err)
		}
	}
}

// axeViolations puts the page in theme and runs axeRun: every rule in the light theme, the
// colour rules in the dark.
func axeViolations(ctx context.Context, t *testing.T, state, theme string) []string {
	t.Helper()
	setTheme(ctx, t, theme)
	actx, cancel := context.WithTimeout(ctx, patience)
	defer cancel()
	found, err := chromedp.Run(actx, chromedp.Evaluate[[]string](fmt.Sprintf("%s(%t)", strings.Replace(axeRun, "AXE_COLOUR_RULES", axeColourRules, 1), theme == "dark"), chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("axe on %s (%s): %v", state, theme, err)
	}
	return found
}

// TestAxeFindsViolations: the check every page gets finds what it is there to find. A page with
// an image without a text alternative and a paragraph readable in the light theme but not in the
// dark: the light run names the image (and not the paragraph), the dark run the paragraph (it
// runs the colour rules alone); the same page with both fixed passes in both themes.
func TestAxeFindsViolations(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	page := func(alt, dark string) string {
		return `<!doctype html><html lang="en"><head><title>axe</title><style>
			p { color: #000; background: #fff; }
			html[data-theme="dark"] p { color: ` + dark + `; background: #222; }
		</style></head><body><main><h1>axe</h1><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" width="20" height="20"` + alt + `>
			<p id="words">Words that must be readable in both themes.</p></main></body></html>`
	}
	for _, c := range []struct {
		name, alt, dark string
		light, inDark   string // the rule each run must name, or "" for none
	}{
		{"broken", "", "#333", "image-alt", "color-contrast"},
		{"fixed", ` alt="a dot"`, "#eee", "", ""},
	} {
		do(ctx, t, chromedp.Navigate("data:text/html;base64,"+base64.StdEncoding.EncodeToString([]byte(page(c.alt, c.dark)))))
		injectAxe(ctx, t, c.name)
		for theme, want := range map[string]string{"light": c.light, "dark": c.inDark} {
			found := axeViolations(ctx, t, c.name, theme)
			if want == "" && len(found) > 0 || want != "" && (len(found) != 1 || !strings.Contains(found[0], " "+want+": ")) {
				t.Errorf("%s page, %s theme: axe found %q, want one %s violation", c.name, theme, found, cmp.Or(want, "no"))
			}
		}
	}
}

// TestAccessibility runs axe-core on every page and state the browser tests visit — the
// playground (each results tab), presenter mode, compare, embed and the error pages — in both
// themes, with JavaScript on, and the playground with it off.
func TestAccessibility(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	do(ctx, t,
		chromedp.Navigate(baseURL+"/"),
		shown(`.cm-content`),
	)
	checkA11y(ctx, t, "the playground (empty)")
	do(ctx, t,
		clickOn(addButton("sidecar.istio.io/proxyCPU")),
		shown(cpuRow),
		clickOn(addButton("proxy.istio.io/config")),
		shown(moveRow),
	)
	permalink := attr(ctx, t, `#playground`, "data-permalink")
	tabs := []string{"diff", "unified", "yaml", "timeline", "pitfalls", "lifecycle", "batch", "warnings", "cluster"}
	for _, tab := range tabs {
		do(ctx, t,
			clickOn(`[data-testid="tab-`+tab+`"]`),
			shown(`[data-testid="panel-`+tab+`"]`),
		)
		if _, err := chromedp.Run(ctx, until(`!document.querySelector('[data-testid="panel-`+tab+`"]').dataset.empty`)); err != nil {
			t.Fatal(err)
		}
		checkA11y(ctx, t, "the playground, tab "+tab)
	}
	// The shortcuts dialog, open.
	do(ctx, t, clickOn(`#shortcuts-open`), shown(`#shortcuts`))
	checkA11y(ctx, t, "the shortcuts dialog")

	present := attr(ctx, t, `[data-testid="present"]`, "href")
	embed := attr(ctx, t, `[data-testid="embed"]`, "href")
	pages := []struct{ name, url, wait string }{
		{"presenter mode", present, `[data-testid="slide-n"]`},
		{"presenter mode, step 2", regexp.MustCompile(`step=\d+`).ReplaceAllString(present, "step=2"), `[data-testid="slide-n"]`},
		{"embed", embed, `[data-testid="embed-page"]`},
		{"an unknown page (404)", "/no-such-page", `[data-testid="error"]`},
		{"an unreadable link (400)", "/?s=not-a-state", `body`},
	}
	for _, p := range pages {
		do(ctx, t, chromedp.Navigate(baseURL+p.url), shown(p.wait))
		checkA11y(ctx, t, p.name+" ("+p.url+")")
	}

	// Compare: the Job classic vs native, from the lifecycle tab's link.
	do(ctx, t,
		chromedp.Navigate(baseURL+"/"),
		shown(`.cm-content`),
		setTo(`#preset`, "job"), // its change event submits the form (the page's script)
		void(until(settledJS+` && document.querySelector(".cm-content").textContent.includes("kind: Job")`)),
	)
	do(ctx, t,
		clickOn(`[data-testid="tab-lifecycle"]`),
		shown(`[data-testid="lifecycle-svg"]`),
	)
	checkA11y(ctx, t, "the Job's lifecycle tab")
	do(ctx, t,
		clickOn(`[data-testid="compare-link"]`),
		shown(`[data-testid="compare"]`),
	)
	checkA11y(ctx, t, "compare")

	// Without JavaScript: the plain textarea and forms.
	nojs, cancel := chromedp.NewContext(ctx)
	defer cancel()
	focused(nojs, t)
	do(nojs, t, chromedp.Navigate("about:blank"))
	noJS(nojs, t)
	do(nojs, t, chromedp.Navigate(baseURL+permalink), shown(moveRow))
	// Scripts back on for axe alone (DevTools cannot evaluate while they are off); the page's own
	// script does not run again, so the page stays as it is without JavaScript.
	if _, err := chromedp.Call(nojs, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: false}); err != nil {
		t.Fatal(err)
	}
	if n, _ := chromedp.Run(nojs, chromedp.Evaluate[int](`document.querySelectorAll(".cm-content").length`)); n != 0 {
		t.Fatal("the editor was built: the page's script ran")
	}
	checkA11y(nojs, t, "the playground without JavaScript")
}

// TestEditorTabLeaves: Tab in the manifest editor moves focus on (seven Tabs used to indent line 1
// and break the YAML); Ctrl+M opts in to indenting, and then Esc, Tab still leaves. The editor
// shows a focus ring, and its description says all this.
func TestEditorTabLeaves(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	do(ctx, t,
		chromedp.Navigate(baseURL+"/"),
		shown(`.cm-content`),
	)
	before := value(ctx, t, `#manifest`)
	inEditor := `!!document.activeElement && document.activeElement.classList.contains("cm-content")`
	do(ctx, t, focusOn(`.cm-content`))
	if in, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](inEditor)); !in {
		t.Fatal("the editor did not take focus")
	}
	// The focus ring: a 3 px outline on the editor's frame while it has focus.
	ring, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => { const s = getComputedStyle(document.querySelector(".cm-host")); return s.outlineStyle + " " + s.outlineWidth; })()`))
	if err != nil || ring != "solid 3px" {
		t.Fatalf("the focused editor's outline is %q (%v), want a visible ring", ring, err)
	}
	desc := text(ctx, t, `#`+attr(ctx, t, `.cm-content`, "aria-describedby"))
	if !strings.Contains(desc, "Tab moves") || !strings.Contains(desc, "Ctrl+M") {
		t.Fatalf("the editor's description %q does not say how Tab works", desc)
	}
	for range 7 {
		do(ctx, t, chromedp.KeyEvent(kb.Tab))
	}
	after := value(ctx, t, `#manifest`)
	if after != before {
		t.Fatalf("Tab changed the manifest:\n%s", after)
	}
	if in, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](inEditor)); in {
		t.Fatal("after seven Tabs the focus is still in the editor")
	}

	// Opt in: Ctrl+M, then Tab indents; Esc then Tab leaves.
	do(ctx, t, focusOn(`.cm-content`), chromedp.KeyEvent("m", chromedp.KeyModifiers(chromedp.ModifierCtrl)))
	if got := text(ctx, t, `#editor-keys`); !strings.HasPrefix(got, "Tab indents") {
		t.Fatalf("after Ctrl+M the hint says %q", got)
	}
	do(ctx, t, chromedp.KeyEvent(kb.Tab))
	indented := value(ctx, t, `#manifest`)
	if indented == before {
		t.Fatal("after Ctrl+M, Tab did not indent")
	}
	if in, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](inEditor)); !in {
		t.Fatal("after Ctrl+M, Tab left the editor")
	}
	do(ctx, t, chromedp.KeyEvent(kb.Escape), chromedp.KeyEvent(kb.Tab))
	if in, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](inEditor)); in {
		t.Fatal("Esc then Tab did not leave the editor")
	}
	if last := value(ctx, t, `#manifest`); last != indented {
		t.Fatal("Esc then Tab changed the manifest")
	}
}

// slideText is every text a room reads on the slide shown: each visible run of text in the
// presenter's main, with its size on screen (an SVG text's font size times the drawing's scale).
// Text for screen readers only (.sr-only) is not on the slide.
const slideText = `(() => {
	const main = document.querySelector("main.present");
	if (!main) return [];
	const out = [];
	const walk = document.createTreeWalker(main, NodeFilter.SHOW_TEXT);
	for (let n; (n = walk.nextNode());) {
		const text = n.textContent.trim();
		const el = n.parentElement;
		if (!text || el.closest(".sr-only") || !el.checkVisibility({visibilityProperty: true, opacityProperty: true})) continue;
		const r = document.createRange();
		r.selectNodeContents(n);
		const box = r.getBoundingClientRect();
		if (!box.width || !box.height) continue;
		let px = parseFloat(getComputedStyle(el).fontSize);
		const svg = el.closest("svg");
		if (svg && svg.viewBox && svg.viewBox.baseVal && svg.viewBox.baseVal.width) px *= svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
		out.push({text: text.slice(0, 60), px, where: el.tagName.toLowerCase() + (typeof el.className === "string" && el.className ? "." + el.className.split(" ").join(".") : "")});
	}
	return out;
})()`

// slideRun is one run of text on a slide (slideText).
type slideRun struct {
	Text  string  `json:"text"`
	PX    float64 `json:"px"`
	Where string  `json:"where"`
}

// checkSlide fails for every text on the slide shown below min px, and answers the slide's text
// (to check that what the slide is about was among what was measured).
func checkSlide(ctx context.Context, t *testing.T, slide string, min float64) string {
	t.Helper()
	runs, err := chromedp.Run(ctx, chromedp.Evaluate[[]slideRun](slideText))
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	small := 0
	for _, r := range runs {
		all.WriteString(r.Text + "\n")
		if r.PX < min-0.01 {
			if small++; small <= 12 {
				t.Errorf("presenter mode, %s: %q (%s) is %.1f px, want ≥ %.0f px", slide, r.Text, r.Where, r.PX, min)
			}
		}
	}
	if small > 12 {
		t.Errorf("presenter mode, %s: %d more texts below %.0f px", slide, small-12, min)
	}
	if len(runs) < 5 { // a step's last slide may hold one change: its kind, path, cause and value
		t.Errorf("presenter mode, %s: only %d texts on the slide: %q", slide, len(runs), all.String())
	}
	return all.String()
}

// labelsInBoxes fails for every event label of the lifecycle diagrams shown that is drawn
// outside its box (in the drawing's own units: its bounding box against its box's).
func labelsInBoxes(ctx context.Context, t *testing.T, where string) {
	t.Helper()
	out := pageValue[[]string](ctx, t, "the diagram's labels", `const out = []; let n = 0;
		for (const svg of document.querySelectorAll('[data-testid="lifecycle-svg"]')) {
			if (!svg.checkVisibility()) continue;
			let box = null;
			for (const el of svg.children) {
				if (el.tagName === "rect") { box = el.getBBox(); continue; }
				if (!el.classList.contains("ev-label") || !box) continue;
				n++;
				const b = el.getBBox();
				if (b.x < box.x - 0.5 || b.x + b.width > box.x + box.width + 0.5 || b.y < box.y - 0.5 || b.y + b.height > box.y + box.height + 0.5)
					out.push(el.textContent + " (" + Math.round(b.width) + " wide in a box of " + Math.round(box.width) + ")");
			}
		}
		if (n === 0) return {ok: false};
		return {ok: true, v: out};`)
	for _, o := range out {
		t.Errorf("%s: the label %s is drawn outside its box", where, o)
	}
}

// TestPresenterReadable: at 1920×1080 every text on every slide of the lab's step 4 (three
// steps and the lifecycle) is ≥ 24 px — the values and collapsed summaries, not only headings —
// the presentation opens at step 1, and the lifecycle is the last slide. A state with no steps
// says there is nothing to present.
func TestPresenterReadable(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	sh := newShots(t)
	do(ctx, t,
		chromedp.EmulateViewport(1920, 1080),
		chromedp.Navigate(baseURL+"/"),
		shown(`.cm-content`),
		clickOn(chip(4)),
		shown(`[data-testid="lab-look"]`),
	)
	do(ctx, t,
		chromedp.Navigate(baseURL+attr(ctx, t, `[data-testid="present"]`, "href")),
		shown(`[data-testid="slide-n"]`),
	)
	if got := text(ctx, t, `[data-testid="slide-n"]`); got != "step 1 of 3" {
		t.Fatalf("presenter mode opens at %q, want step 1 of 3", got)
	}
	// What each step is about, which must be among the text measured on its slides.
	about := []string{"200m", "PROXY_CONFIG", "pilot-agent"}
	for i, want := range about {
		slide := fmt.Sprintf("step %d of 3", i+1)
		toSlide(ctx, t, slide)
		var got strings.Builder
		eachPage(ctx, t, func(page int) {
			got.WriteString(checkSlide(ctx, t, fmt.Sprintf("%s, slide %d", slide, page), 24))
			sh.take(ctx, fmt.Sprintf("step-%d-%d", i+1, page))
		})
		if !strings.Contains(got.String(), want) {
			t.Errorf("presenter mode, %s: %q is not among the texts measured:\n%s", slide, want, got.String())
		}
	}
	// The lifecycle's slides (its verdicts, its start, its stop), here and in Japanese and Korean,
	// whose labels are longer: every label in its box.
	lifecycle := func(lang string) {
		toSlide(ctx, t, map[string]string{"": "lifecycle after step 3", "ja": "ステップ3の後のライフサイクル", "ko": "3단계 이후의 라이프사이클"}[lang])
		var got strings.Builder
		diagrams := 0
		eachPage(ctx, t, func(page int) {
			got.WriteString(checkSlide(ctx, t, fmt.Sprintf("the lifecycle %s, slide %d", lang, page), 24))
			if pageValue[bool](ctx, t, "a diagram", `return {ok: true, v: [...document.querySelectorAll('[data-testid="lifecycle-svg"]')].some((s) => s.checkVisibility())};`) {
				diagrams++
				labelsInBoxes(ctx, t, fmt.Sprintf("the lifecycle slide %d %s", page, lang))
				if lang != "" {
					checkA11y(ctx, t, "presenter mode, the lifecycle slide in "+lang)
				}
			}
			sh.take(ctx, fmt.Sprintf("lifecycle-%s-%d", lang, page))
		})
		if diagrams != 2 {
			t.Errorf("the lifecycle %s: %d slides with a diagram, want its start and its stop", lang, diagrams)
		}
		if lang == "" && !strings.Contains(got.String(), "postStart") {
			t.Errorf("presenter mode, the lifecycle: its labels are not among the texts measured:\n%s", got.String())
		}
	}
	lifecycle("")
	start := pageValue[string](ctx, t, "the address", `return {ok: true, v: location.pathname + location.search};`)
	for _, lang := range []string{"ja", "ko"} {
		do(ctx, t, chromedp.Navigate(baseURL+start+"&lang="+lang), shown(`[data-testid="slide-n"]`))
		lifecycle(lang)
	}

	// No steps: the workload as injected is the slide, then its lifecycle; no way back.
	do(ctx, t, chromedp.Navigate(baseURL+"/?present=1"), shown(`[data-testid="slide-n"]`))
	if got := text(ctx, t, `[data-testid="slide-n"]`); got != "the workload as injected (step 0)" {
		t.Errorf("presenter mode with no steps opens at %q", got)
	}
	if n := pageValue[int](ctx, t, "the slide links", `return {ok: true, v: document.querySelectorAll("#slide-prev").length + (document.getElementById("slide-next") ? 0 : 10)};`); n != 0 {
		t.Errorf("presenter mode with no steps: a way back, or no way on to the lifecycle")
	}
}

// TestEmbedFromLocalFile: slides are often opened as local files. A file: page frames /embed
// (its frame-ancestors admits file: pages); the framed page shows the diff.
func TestEmbedFromLocalFile(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	do(ctx, t,
		chromedp.Navigate(baseURL+"/"),
		shown(`.cm-content`),
		clickOn(addButton("sidecar.istio.io/proxyCPU")),
		shown(cpuRow),
	)
	snippet := value(ctx, t, `[data-testid="embed-snippet"]`)
	if !strings.HasPrefix(snippet, `<iframe src="`+baseURL+`/embed?s=`) {
		t.Fatalf("embed snippet %q", snippet)
	}
	slide := filepath.Join(t.TempDir(), "slide.html")
	html := "<!DOCTYPE html><html><head><title>slide</title></head><body><h1>A slide</h1>\n" + snippet + "\n</body></html>"
	if err := os.WriteFile(slide, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	do(ctx, t, chromedp.Navigate("file://"+slide), shown(`iframe`))
	// The frame's document, through DevTools (a file: page may not read it): the embed's rows.
	// The frame is another site's (a file: page framing http:), so Chromium runs it as its own
	// target: find it, and read the embed's rows in it.
	var frame target.ID
	for deadline := time.Now().Add(patience); frame == ""; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no embed frame in the file: page after %v: its frame-ancestors refused it", patience)
		}
		infos, err := chromedp.Targets(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, ti := range infos { // the browser's targets: this test's are in its browser context
			if ti.Type == "iframe" && strings.HasPrefix(ti.URL, baseURL+"/embed?s=") && ti.BrowserContextID == chromedp.FromContext(ctx).BrowserContextID {
				frame = ti.TargetID
			}
		}
	}
	fctx, cancel := chromedp.NewContext(ctx, chromedp.WithTargetID(frame))
	defer cancel()
	ok, err := chromedp.Run(fctx, until(`document.querySelector('[data-testid="embed-page"] [data-testid="change"]') !== null`))
	if err != nil || !ok {
		where, _ := chromedp.Run(fctx, chromedp.Evaluate[string](`location.href + " | " + document.body.innerText.slice(0, 200)`))
		t.Fatalf("the embed did not show in a file: page (%v): the frame holds %q", err, where)
	}
	newShots(t).take(ctx, "file-slide")
}

// TestSmallScreens: at 390 px (a phone) and at 150 % zoom (a 1440 px window shows 960 CSS px)
// no page scrolls sideways, in either theme; screenshots of each go to e2e/screenshots (make screenshots).
func TestSmallScreens(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	sh := newShots(t)
	do(ctx, t,
		chromedp.Navigate(baseURL+"/"),
		shown(`.cm-content`),
		clickOn(addButton("sidecar.istio.io/proxyCPU")),
		shown(cpuRow),
		clickOn(addButton("proxy.istio.io/config")),
		shown(moveRow),
	)
	permalink := attr(ctx, t, `#playground`, "data-permalink")
	present := attr(ctx, t, `[data-testid="present"]`, "href")
	embed := attr(ctx, t, `[data-testid="embed"]`, "href")
	pages := []struct{ name, url, wait string }{
		{"playground", permalink, moveRow},
		{"lifecycle", strings.Replace(permalink, "/?", "/?tab=lifecycle&", 1), `[data-testid="lifecycle-svg"]`},
		{"presenter", present, `[data-testid="slide-n"]`},
		{"embed", embed, `[data-testid="embed-page"]`},
		{"error", "/no-such-page", `[data-testid="error"]`},
	}
	screens := checkedScreens[2:] // the phone and 150 %
	for _, s := range screens {
		do(ctx, t, s.emulate())
		for _, p := range pages {
			do(ctx, t, chromedp.Navigate(baseURL+p.url), shown(p.wait))
			for _, theme := range []string{"light", "dark"} {
				setTheme(ctx, t, theme)
				over, err := chromedp.Run(ctx, chromedp.Evaluate[string](sideways))
				if err != nil {
					t.Fatal(err)
				}
				if over != "" {
					t.Errorf("%s at %s, %s theme: the page scrolls sideways by %s", p.name, s.name, theme, over)
				}
				if p.name == "playground" || theme == "light" {
					sh.take(ctx, s.name+"-"+p.name+"-"+theme)
				}
			}
			setTheme(ctx, t, "light")
		}
	}
}

// nonTextContrast measures what axe does not (WCAG 1.4.11, ≥ 3:1): the focus ring against the
// page and the panels, and the borders of inputs (text fields, menus, the editor) against what
// is around them, as the browser computes them.
const nonTextContrast = `(() => {
	const rgb = (c) => c.match(/[\d.]+/g).slice(0, 3).map(Number);
	const lum = (c) => { const [r, g, b] = rgb(c).map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; }); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
	const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
	const bg = (el) => { while (el) { const c = getComputedStyle(el).backgroundColor; if (!/rgba\(.*, 0\)$/.test(c) && c !== "transparent") return c; el = el.parentElement; } return "rgb(255, 255, 255)"; };
	const out = {};
	const k = window.keyboardFocused;
	if (!k || getComputedStyle(k).outlineStyle !== "solid") out["focus ring (missing) on " + (k ? k.tagName : "nothing")] = 0;
	else out["focus ring on the page"] = ratio(getComputedStyle(k).outlineColor, bg(k.parentElement));
	const ed = document.querySelector(".cm-content");
	ed.focus();
	const host = document.querySelector(".cm-host");
	out["editor focus ring on the panel"] = ratio(getComputedStyle(host).outlineColor, bg(host.parentElement));
	out["editor border"] = ratio(getComputedStyle(host).borderTopColor, bg(host.parentElement));
	for (const [name, sel] of [["text field border", '.annotation input[type="text"]'], ["menu border", "#preset"]]) {
		const el = document.querySelector(sel);
		out[name] = ratio(getComputedStyle(el).borderTopColor, bg(el.parentElement));
	}
	return out;
})()`

// TestNonTextContrast: the focus ring and input borders reach 3:1 in both themes (before:
// focus ring 2.0, input borders 1.3).
func TestNonTextContrast(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	do(ctx, t, chromedp.Navigate(baseURL+"/"), shown(`.cm-content`))
	for _, theme := range []string{"light", "dark"} {
		setTheme(ctx, t, theme)
		// A field focused by the keyboard (Tab out of the editor), so its ring is :focus-visible.
		do(ctx, t, focusOn(`.cm-content`), chromedp.KeyEvent(kb.Tab))
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.keyboardFocused = document.activeElement; true`)); err != nil {
			t.Fatal(err)
		}
		got, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]float64](nonTextContrast))
		if err != nil {
			t.Fatal(err)
		}
		for what, r := range got {
			if r < 3 {
				t.Errorf("%s theme: %s contrast %.2f:1, want ≥ 3:1", theme, what, r)
			}
		}
		t.Logf("%s theme: %v", theme, got)
	}
}

// TestResultTabsKeyboard: the result tabs follow ARIA's tabs pattern — → and ← move to the
// next and previous tab around the ends, Home and End to the first and last, each showing its
// panel and keeping the focus on the tab — and at 1440×900, in every language, with counts on
// them, all nine tabs are in view (they wrap rather than scroll).
func TestResultTabsKeyboard(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	do(ctx, t, chromedp.EmulateViewport(1440, 900), chromedp.Navigate(baseURL+"/"), shown(chip(8)))
	batch := labHref(ctx, t, 8) // the lab's batch: pitfalls and warnings on the tabs
	for _, lang := range []string{"en", "ja", "ko"} {
		do(ctx, t, chromedp.Navigate(baseURL+batch+"&lang="+lang), shown(`[data-testid="batch"]`))
		cut := pageValue[[]string](ctx, t, "the tabs in view", `const nav = document.querySelector('[role="tablist"]').getBoundingClientRect(); const out = [];
			for (const a of document.querySelectorAll('[role="tab"]')) { const r = a.getBoundingClientRect(); if (r.left < nav.left - 0.5 || r.right > nav.right + 0.5 || r.width === 0) out.push(a.dataset.tab); }
			return {ok: document.querySelectorAll('[role="tab"]').length === 9, v: out};`)
		if len(cut) > 0 {
			t.Errorf("%s at 1440×900: the tabs %q are not all in view", lang, cut)
		}
		checkA11y(ctx, t, "the lab's batch in "+lang)
	}
	selected := func() string {
		return pageValue[string](ctx, t, "the selected tab", `const s = document.querySelector('[role="tab"][aria-selected="true"]'); const f = document.activeElement;
			const p = s && document.getElementById(s.getAttribute("aria-controls"));
			if (!s || !p || p.hidden || p.dataset.empty || f !== s) return {ok: false}; return {ok: true, v: s.dataset.tab};`)
	}
	do(ctx, t, chromedp.Navigate(baseURL+batch), shown(`[data-testid="batch"]`), focusOn(`[data-testid="tab-batch"]`))
	tabs := pageValue[[]string](ctx, t, "the tabs", `return {ok: true, v: [...document.querySelectorAll('[role="tab"]')].map((a) => a.dataset.tab)};`)
	for _, c := range []struct {
		key  string
		want string
	}{
		{kb.ArrowRight, tabs[slices.Index(tabs, "batch")+1]},
		{kb.ArrowLeft, "batch"},
		{kb.Home, tabs[0]},
		{kb.ArrowLeft, tabs[len(tabs)-1]}, // around the start
		{kb.ArrowRight, tabs[0]},          // around the end
		{kb.End, tabs[len(tabs)-1]},
		{kb.ArrowLeft, tabs[len(tabs)-2]},
	} {
		do(ctx, t, chromedp.KeyEvent(c.key))
		if got := selected(); got != c.want {
			t.Fatalf("after %q: the tab %q is selected and focused, want %q", c.key, got, c.want)
		}
	}
}
