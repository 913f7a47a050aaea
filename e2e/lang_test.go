//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/sidecarlab/sidecarlab/i18n"
)

// The language tests assert structure (<html lang>, the switcher, its cookie, a shared state's
// identity, axe) and, of the words, only the switcher's label, read from the catalogs: the rest of
// the UI is being translated elsewhere and its words are not this file's to pin down.

// browserIn is a browser set to the languages acceptLanguage (a comma list, as Chromium's
// --accept-lang takes it, without q-values, which Chromium adds), sent as its Accept-Language:
// the shared browser's own User-Agent with the language overridden for this test's tab.
func browserIn(t *testing.T, acceptLanguage string) context.Context {
	t.Helper()
	ctx := browser(t)
	if _, err := chromedp.Call(ctx, emulation.SetUserAgentOverride, emulation.SetUserAgentOverrideParams{UserAgent: chromium.ua, AcceptLanguage: acceptLanguage}); err != nil {
		t.Fatal(err)
	}
	return ctx
}

// pageLang is the page's <html lang>.
func pageLang(ctx context.Context, t *testing.T) string {
	t.Helper()
	l, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.documentElement.lang`))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// waitLang waits until the page (after a navigation or the switcher's reload) is in lang,
// asking again when the page it asked went away mid-question (the reload).
func waitLang(ctx context.Context, t *testing.T, lang, why string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, until(`document.readyState === "complete" && document.documentElement.lang === `+jsString(lang))); err != nil {
		got, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.documentElement.lang`))
		t.Fatalf("%s: the page's lang is %q, want %q (%v)", why, got, lang, err)
	}
}

// checkSwitcher: the header's switcher is labelled in lang (the catalog's lang.label) and shows
// lang as chosen.
func checkSwitcher(ctx context.Context, t *testing.T, lang string) {
	t.Helper()
	want := i18n.For(lang).T("lang.label")
	if got := strings.TrimSpace(text(ctx, t, `label[for="lang-select"]`)); got != want {
		t.Errorf("the switcher's label is %q, want %q (lang.label in %s)", got, want, lang)
	}
	sel, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("lang-select").value`))
	if err != nil {
		t.Fatal(err)
	}
	if sel != lang {
		t.Errorf("the switcher shows %q chosen, want %q", sel, lang)
	}
}

// diffPaths are the data-path attributes of the field diff's rows, in order.
func diffPaths(ctx context.Context, t *testing.T) []string {
	t.Helper()
	p, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-testid="panel-diff"] [data-testid="change"]')].map((r) => r.dataset.path)`))
	if err != nil {
		t.Fatal(err)
	}
	if len(p) == 0 {
		t.Fatal("the field diff has no rows")
	}
	return p
}

// stateJSON is GET path (a state.json) as a reader of lang would fetch it, decoded.
func stateJSON(t *testing.T, path, lang string) map[string]any {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, baseURL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept-Language", lang)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s: %.300s", path, resp.Status, b)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return v
}

// midWordBreaks are the words of the page's text (Latin words of six letters or more, outside
// code and the editor, where breaking anywhere is meant) that the browser broke across lines.
const midWordBreaks = `(() => {
	const out = [];
	const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
	for (let n; (n = walk.nextNode()); ) {
		const s = n.textContent.trim();
		if (!/^[A-Za-z]{6,}$/.test(s) || n.parentElement.closest("code, pre, kbd, textarea, .cm-editor, [hidden]")) continue;
		const r = document.createRange();
		r.selectNodeContents(n);
		const lines = new Set([...r.getClientRects()].map((x) => Math.round(x.top))).size;
		if (lines > 1) out.push(s + " (" + n.parentElement.tagName.toLowerCase() + (n.parentElement.className ? "." + n.parentElement.className.split(" ")[0] : "") + ", " + lines + " lines)");
	}
	return out;
})()`

// checkWordsWhole fails on a word broken mid-word (Korean's line breaking once broke
// "sidecarlab" and "Manifest" in two).
func checkWordsWhole(ctx context.Context, t *testing.T, where string) {
	t.Helper()
	broken, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](midWordBreaks))
	if err != nil {
		t.Fatal(err)
	}
	if len(broken) > 0 {
		t.Errorf("%s: words broken mid-word: %s", where, strings.Join(broken, "; "))
	}
}

// addSteps turns on proxyCPU then hold (proxy.istio.io/config), as the other browser tests do.
func addSteps(ctx context.Context, t *testing.T) {
	t.Helper()
	do(ctx, t,
		clickOn(addButton("sidecar.istio.io/proxyCPU")),
		shown(cpuRow),
		clickOn(addButton("proxy.istio.io/config")),
		shown(moveRow),
	)
}

// TestLangFromBrowser: a browser set to Japanese or Korean gets the playground in that language
// (<html lang>, the switcher), with no serious axe violation, empty and with two steps; one set to
// a language sidecarlab does not speak gets English. Screenshots of ja and ko at 1440×900 and
// 390×844 go to e2e/screenshots/.
func TestLangFromBrowser(t *testing.T) {
	t.Parallel()
	cases := []struct{ accept, want string }{
		{"ja", "ja"},
		{"ko-KR,ko", "ko"},
		{"de-DE,de", "en"}, // not spoken: English, the default
	}
	for _, c := range cases {
		t.Run(c.want+"_from_"+strings.SplitN(c.accept, ",", 2)[0], func(t *testing.T) {
			ctx := browserIn(t, c.accept)
			do(ctx, t, chromedp.EmulateViewport(1440, 900), chromedp.Navigate(baseURL+"/"), shown(`.cm-content`))
			if got := pageLang(ctx, t); got != c.want {
				t.Fatalf("Accept-Language %q: <html lang=%q>, want %q", c.accept, got, c.want)
			}
			checkSwitcher(ctx, t, c.want)
			checkWordsWhole(ctx, t, "the playground at 1440×900")
			if c.want == "en" {
				return
			}
			checkA11y(ctx, t, "the playground (empty) in "+c.want)
			addSteps(ctx, t)
			checkA11y(ctx, t, "the playground with two steps in "+c.want)
			sh := newShots(t)
			sh.take(ctx, c.want+"-1440x900")
			sh.window(ctx, c.want+"-1440x900-first-screen")
			permalink := attr(ctx, t, `#playground`, "data-permalink")
			do(ctx, t,
				chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(3), chromedp.EmulateMobile),
				chromedp.Navigate(baseURL+permalink),
				shown(moveRow),
			)
			waitLang(ctx, t, c.want, "the permalink at 390 px")
			checkWordsWhole(ctx, t, "the playground with two steps at 390×844")
			if over, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth - document.documentElement.clientWidth`)); err != nil || over > 0 {
				t.Errorf("at 390×844 the page scrolls sideways by %d px (%v)", over, err)
			}
			sh.take(ctx, c.want+"-390x844")
			sh.window(ctx, c.want+"-390x844-first-screen")
		})
	}
}

// TestLangSwitcher: in an English browser, choosing 한국어 in the header's switcher with the
// keyboard reloads the same page in Korean; the choice is remembered (a cookie) on the next visit,
// over the browser's English; ?lang=en shows one page in English and leaves the choice as it was.
func TestLangSwitcher(t *testing.T) {
	t.Parallel()
	ctx := browserIn(t, "en-US,en")
	do(ctx, t, chromedp.Navigate(baseURL+"/"), shown(`.cm-content`))
	addSteps(ctx, t)
	permalink := attr(ctx, t, `#playground`, "data-permalink")
	do(ctx, t, chromedp.Navigate(baseURL+permalink), shown(moveRow))
	if got := pageLang(ctx, t); got != "en" {
		t.Fatalf("an English browser got <html lang=%q>", got)
	}
	if c := langCookie(ctx, t); c != "" {
		t.Fatalf("a lang cookie %q before any choice", c)
	}

	// The keyboard: focus the switcher, End picks its last entry (한국어), which submits it.
	names, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#lang-select option")].map((o) => o.value + "=" + o.textContent.trim())`))
	if err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 || names[len(names)-1] != "ko="+i18n.Names["ko"] {
		t.Fatalf("the switcher's entries are %q; want 한국어 (ko) last", names)
	}
	do(ctx, t, focusOn(`#lang-select`), chromedp.KeyEvent(kb.End))
	waitLang(ctx, t, "ko", "after choosing 한국어")
	loc, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.pathname + location.search`))
	if err != nil {
		t.Fatal(err)
	}
	if loc != permalink {
		t.Errorf("the switcher returned to %q, want the page it was used on, %q", loc, permalink)
	}
	do(ctx, t, shown(moveRow))
	checkSwitcher(ctx, t, "ko")
	if c := langCookie(ctx, t); c != "ko" {
		t.Fatalf("the lang cookie is %q after choosing 한국어, want ko", c)
	}

	// The next visit (the browser still asks for English): Korean, from the cookie.
	do(ctx, t, chromedp.Navigate(baseURL+"/"), shown(`.cm-content`))
	waitLang(ctx, t, "ko", "the next visit")

	// ?lang=en: this page in English, the switcher shows English, and the choice stays Korean.
	do(ctx, t, chromedp.Navigate(baseURL+"/?lang=en"), shown(`.cm-content`))
	waitLang(ctx, t, "en", "?lang=en")
	checkSwitcher(ctx, t, "en")
	if c := langCookie(ctx, t); c != "ko" {
		t.Fatalf("?lang=en changed the remembered choice to %q", c)
	}
	do(ctx, t, chromedp.Navigate(baseURL+"/"), shown(`.cm-content`))
	waitLang(ctx, t, "ko", "the visit after ?lang=en")
}

// TestLangSwitcherWithoutJavaScript: with scripts off, choosing 한국어 does not submit by itself;
// Tab to the switcher's button and Enter does, and the page comes back in Korean.
func TestLangSwitcherWithoutJavaScript(t *testing.T) {
	t.Parallel()
	ctx := browserIn(t, "en-US,en")
	do(ctx, t, chromedp.Navigate("about:blank"))
	noJS(ctx, t)
	do(ctx, t, chromedp.Navigate(baseURL+"/"), shown(`#manifest`))
	if got := attr(ctx, t, "html", "lang"); got != "en" {
		t.Fatalf("an English browser got <html lang=%q>", got)
	}
	// Every navigation the page asks for (a form it submits), seen as DevTools reports it.
	var navigations atomic.Int32
	lctx, stop := context.WithCancel(ctx)
	defer stop()
	if err := chromedp.Listen(lctx, func(ev any) {
		if _, ok := ev.(*page.EventFrameRequestedNavigation); ok {
			navigations.Add(1)
		}
	}); err != nil {
		t.Fatal(err)
	}
	do(ctx, t, focusOn(`#lang-select`), chromedp.KeyEvent(kb.End))
	// Without the script nothing is submitted: no navigation was asked for while the page handled
	// the key (Listen sees an event that came before a command's answer), the page is still
	// English, no cookie. (A fixed wait here once gave a submission time to show.)
	if got := attr(ctx, t, "html", "lang"); got != "en" || langCookie(ctx, t) != "" || navigations.Load() != 0 {
		t.Fatalf("choosing alone changed the page (lang %q, %d navigations) or the cookie without the script", got, navigations.Load())
	}
	do(ctx, t, chromedp.KeyEvent(kb.Tab), chromedp.KeyEvent(kb.Enter))
	waitLang(ctx, t, "ko", "after Tab, Enter on the switcher's button")
	if navigations.Load() == 0 {
		t.Fatal("the switcher's button navigated without DevTools reporting it: the check of choosing alone proves nothing")
	}
	if c := langCookie(ctx, t); c != "ko" {
		t.Fatalf("the lang cookie is %q, want ko", c)
	}
}

// langCookie is the value of the site's lang cookie in the browser ("" if none).
func langCookie(ctx context.Context, t *testing.T) string {
	t.Helper()
	res, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{baseURL + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Cookies {
		if c.Name == "lang" {
			return c.Value
		}
	}
	return ""
}

// TestLangSharedLink: a short link and a ?s= permalink made in a Japanese page, opened in a Korean
// browser, show the same state — the same state.json (manifest, steps, settings) and the same
// field-diff rows — in Korean. The state is language-free: its JSON does not change with the
// reader's language either.
func TestLangSharedLink(t *testing.T) {
	t.Parallel()
	ja := browserIn(t, "ja")
	do(ja, t, chromedp.Navigate(baseURL+"/"), shown(`.cm-content`))
	waitLang(ja, t, "ja", "the Japanese browser")
	do(ja, t,
		clickOn(addButton("sidecar.istio.io/proxyCPU")),
		shown(cpuRow),
	)
	oneStep := attr(ja, t, `#playground`, "data-permalink")
	do(ja, t,
		clickOn(addButton("proxy.istio.io/config")),
		shown(moveRow),
	)
	permalink := attr(ja, t, `#playground`, "data-permalink")
	jaRows := diffPaths(ja, t)
	do(ja, t,
		clickOn(`[data-testid="share"]`),
		shown(`[data-testid="short-link"]`),
	)
	waitLang(ja, t, "ja", "the shared page")
	short := attr(ja, t, `[data-testid="short-link"]`, "href")
	if !strings.HasPrefix(short, "/s/") || !strings.HasPrefix(permalink, "/?") {
		t.Fatalf("short link %q, permalink %q", short, permalink)
	}
	query := strings.TrimPrefix(permalink, "/")
	jaState := stateJSON(t, "/state.json"+query, "ja")
	if len(jaState) == 0 {
		t.Fatal("the Japanese page's state.json is empty")
	}
	// The comparison can tell states apart: the page before its second step held another.
	if jsonEqual(stateJSON(t, "/state.json"+strings.TrimPrefix(oneStep, "/"), "ja"), jaState) {
		t.Fatal("the one-step state's JSON equals the two-step one's: the comparison proves nothing")
	}
	// The same state whatever the language it is fetched in, by its short link or its permalink.
	for _, got := range []struct{ name, path, lang string }{
		{"the permalink's, in Korean", "/state.json" + query, "ko"},
		{"the short link's, in Japanese", short + "/state.json", "ja"},
		{"the short link's, in Korean", short + "/state.json", "ko"},
	} {
		if s := stateJSON(t, got.path, got.lang); !jsonEqual(s, jaState) {
			t.Errorf("%s state.json differs from the Japanese page's", got.name)
		}
	}

	for _, link := range []string{short, permalink} {
		ko := browserIn(t, "ko")
		do(ko, t, chromedp.Navigate(baseURL+link), shown(moveRow))
		waitLang(ko, t, "ko", link+" in a Korean browser")
		checkSwitcher(ko, t, "ko")
		if rows := diffPaths(ko, t); !slices.Equal(rows, jaRows) {
			t.Errorf("%s in Korean shows the field diff's rows %q, the Japanese page %q", link, rows, jaRows)
		}
		// The state the Korean page holds (its own permalink) is the Japanese page's.
		koLink := attr(ko, t, `#playground`, "data-permalink")
		if s := stateJSON(t, "/state.json"+strings.TrimPrefix(koLink, "/"), "ko"); !jsonEqual(s, jaState) {
			t.Errorf("%s: the Korean page's state (%s) differs from the Japanese page's", link, koLink)
		}
	}
}

func jsonEqual(a, b map[string]any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// TestLangByAddress: a page opened with ?lang=ja in an English browser stays Japanese through a
// lab chip (a link), an annotation added with the script (an answer in place, whose address the
// script puts in the address bar) and a reload; the permalink it offers for sharing stays
// language-free, so it opens in its reader's language.
func TestLangByAddress(t *testing.T) {
	t.Parallel()
	ctx := browserIn(t, "en-US,en")
	ja := i18n.For("ja")
	do(ctx, t, chromedp.Navigate(baseURL+"/?lang=ja"), shown(`.cm-content`))
	waitLang(ctx, t, "ja", "?lang=ja")
	do(ctx, t, clickOn(chip(4)), shown(`[data-testid="lab-look"]`))
	waitLang(ctx, t, "ja", "the lab's step 4 chip")
	if got, want := text(ctx, t, chip(4)), ja.T("lab.step.hold.title"); !strings.Contains(got, want) {
		t.Fatalf("after the chip: chip 4 reads %q, want %q", got, want)
	}
	before := pageValue[string](ctx, t, "the address", `return {ok: true, v: location.href};`)
	do(ctx, t, clickOn(addButton("sidecar.istio.io/proxyMemory")))
	waitJS(ctx, t, "the address after adding an annotation", settledJS+` && location.href !== `+jsString(before))
	if got, want := text(ctx, t, `[data-testid="tab-diff"]`), ja.T("results.tab.diff"); !strings.Contains(got, want) {
		t.Errorf("the answer in place: the field diff's tab reads %q, want %q", got, want)
	}
	addr := pageValue[string](ctx, t, "the address", `return {ok: true, v: location.href};`)
	if !strings.Contains(addr, "lang=ja") {
		t.Errorf("the address bar lost the language: %s", addr)
	}
	if p := attr(ctx, t, `[data-testid="permalink"]`, "href"); strings.Contains(p, "lang=") || !strings.HasPrefix(p, "/?s=") {
		t.Errorf("the permalink %q: want a language-free link to the state", p)
	}
	checkA11y(ctx, t, "the playground by ?lang=ja, after an annotation")
	do(ctx, t, chromedp.Reload(), shown(`.cm-content`))
	waitLang(ctx, t, "ja", "the reload")
	if c := langCookie(ctx, t); c != "" {
		t.Errorf("?lang= set the remembered choice to %q", c)
	}
}
