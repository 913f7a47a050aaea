//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The browser tests wait for what they expect to see, never a fixed time, and read and act on the
// page by selector each time: the page's script replaces regions (swapFrom) and a navigation
// replaces the document, and DevTools' node ids die with the nodes ("No node with given id
// found"). So reads are one script evaluation in the page (no node id at all), and an action
// that needs a node (a mouse click, keys) finds it when the page has settled and finds it again
// if it was replaced in between.

const (
	// patience bounds one wait: far above what any machine, however busy, takes for what is
	// waited for, so that it only turns a hang into a failure that says what was awaited.
	patience = 2 * time.Minute
	// testCap bounds one test's browser the same way.
	testCap = 15 * time.Minute
)

// settledJS holds when the document has loaded and no answer of the page's script is on its way
// (load() marks the body busy while it fetches and swaps).
const settledJS = `(document.readyState === "complete" && !(document.body && document.body.classList.contains("busy")))`

// until is an action that waits until the expression js, evaluated in the page, is true, and
// answers true. It evaluates again when the page it asked went away (a navigation) or js threw
// (an element not there yet); after patience it fails, saying what it waited for.
func until(js string) chromedp.Action[bool] {
	return func(ctx context.Context, tg *chromedp.Target) (bool, error) {
		var err error
		for deadline := time.Now().Add(patience); time.Now().Before(deadline) && ctx.Err() == nil; time.Sleep(25 * time.Millisecond) {
			var ok bool
			if ok, err = chromedp.Evaluate[bool](js)(ctx, tg); err == nil && ok {
				return true, nil
			}
		}
		return false, fmt.Errorf("waited %v for %s (%v)", patience, js, err)
	}
}

// waitJS waits until js is true in the page (until); the test fails, saying what, if it is not.
func waitJS(ctx context.Context, t *testing.T, what, js string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, until(js)); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// pageValue evaluates js, which answers {ok, v}, until ok, once the page has settled, and returns
// v. One evaluation reads the page as it is at one moment, by selector: no node id is held.
func pageValue[T any](ctx context.Context, t *testing.T, what, js string) T {
	t.Helper()
	var err error
	for deadline := time.Now().Add(patience); time.Now().Before(deadline) && ctx.Err() == nil; time.Sleep(25 * time.Millisecond) {
		var a pageAnswer[T]
		if a, err = chromedp.Run(ctx, chromedp.Evaluate[pageAnswer[T]](`(() => { if (!`+settledJS+`) return {ok: false}; `+js+` })()`)); err == nil && a.OK {
			return a.V
		}
	}
	var zero T
	t.Fatalf("%s: not after %v (%v)", what, patience, err)
	return zero
}

// pageAnswer is what pageValue's script answers.
type pageAnswer[T any] struct {
	OK bool `json:"ok"`
	V  T    `json:"v"`
}

// jsString is s as a JavaScript string literal.
func jsString(s string) string { b, _ := json.Marshal(s); return string(b) }

// query is the JavaScript that finds sel.
func query(sel string) string { return `document.querySelector(` + jsString(sel) + `)` }

// visibleJS holds when sel is in the page and laid out (chromedp's test of visible).
func visibleJS(sel string) string {
	return `(() => { const el = ` + query(sel) + `; return !!el && !!(el.offsetWidth || el.offsetHeight || el.getClientRects().length); })()`
}

// shown waits until sel is shown and the page has settled: the state an action led to.
func shown(sel string) chromedp.Action[chromedp.Void] {
	return void(until(settledJS + " && " + visibleJS(sel)))
}

// gone waits until nothing matches sel and the page has settled.
func gone(sel string) chromedp.Action[chromedp.Void] {
	return void(until(settledJS + " && !" + query(sel)))
}

// hidden waits until sel is in the page but not shown, and the page has settled.
func hidden(sel string) chromedp.Action[chromedp.Void] {
	return void(until(settledJS + " && !!" + query(sel) + " && !" + visibleJS(sel)))
}

func void[T any](a chromedp.Action[T]) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		_, err := a(ctx, tg)
		return chromedp.Void{}, err
	}
}

// waitShown waits until sel is shown in the settled page (shown).
func waitShown(ctx context.Context, t *testing.T, sel string) {
	t.Helper()
	do(ctx, t, shown(sel))
}

// text is sel's visible text (innerText; "" when it is not shown), once it is in the settled page.
func text(ctx context.Context, t *testing.T, sel string) string {
	t.Helper()
	return pageValue[string](ctx, t, "the text of "+sel, `const el = `+query(sel)+`; if (!el) return {ok: false};
		return {ok: true, v: (el.offsetWidth || el.offsetHeight || el.getClientRects().length) ? el.innerText : ""};`)
}

// attr is sel's attribute name ("" when it has none), once sel is in the settled page.
func attr(ctx context.Context, t *testing.T, sel, name string) string {
	t.Helper()
	return pageValue[string](ctx, t, name+" of "+sel, `const el = `+query(sel)+`; if (!el) return {ok: false};
		return {ok: true, v: el.getAttribute(`+jsString(name)+`) ?? ""};`)
}

// value is the value of the form field sel, once it is in the settled page.
func value(ctx context.Context, t *testing.T, sel string) string {
	t.Helper()
	return pageValue[string](ctx, t, "the value of "+sel, `const el = `+query(sel)+`; if (!el) return {ok: false};
		return {ok: true, v: String(el.value)};`)
}

// setTo sets the form field sel to v and fires input and change, as choosing or typing does (and
// as chromedp.SetValue does), once sel is in the settled page.
func setTo(sel, v string) chromedp.Action[chromedp.Void] {
	return void(until(`(() => { if (!` + settledJS + `) return false; const el = ` + query(sel) + `; if (!el) return false;
		el.value = ` + jsString(v) + `;
		el.dispatchEvent(new Event("input", {bubbles: true}));
		el.dispatchEvent(new Event("change", {bubbles: true}));
		return true; })()`))
}

// staleNode says err is DevTools' answer for a node the page replaced after it was found.
func staleNode(err error) bool {
	for _, s := range []string{"No node with given id found", "Could not find node with given id", "Node is detached from document", "Cannot find context with specified id"} {
		if strings.Contains(err.Error(), s) {
			return true
		}
	}
	return false
}

// onNode runs a, an action on sel, once sel is shown and the page has settled. If the page
// replaced sel between finding it and acting on it, it waits and acts again: the actions used
// here (a click, keys, focus) fail that way before they have any effect.
func onNode(sel string, a chromedp.Action[chromedp.Void]) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		for deadline := time.Now().Add(patience); ; {
			if _, err := shown(sel)(ctx, tg); err != nil {
				return chromedp.Void{}, err
			}
			_, err := a(ctx, tg)
			if err == nil || !staleNode(err) || time.Now().After(deadline) {
				return chromedp.Void{}, err
			}
		}
	}
}

// clickOn clicks sel with the mouse, as a person does.
func clickOn(sel string) chromedp.Action[chromedp.Void] {
	return onNode(sel, chromedp.Click(chromedp.CSS(sel)))
}

// keysTo types keys into sel.
func keysTo(sel, keys string) chromedp.Action[chromedp.Void] {
	return onNode(sel, chromedp.SendKeys(chromedp.CSS(sel), keys))
}

// focusOn gives sel the keyboard focus.
func focusOn(sel string) chromedp.Action[chromedp.Void] {
	return onNode(sel, chromedp.Focus(chromedp.CSS(sel)))
}
