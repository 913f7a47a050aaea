//go:build e2e

// Package e2e drives the real playground in Chromium (Debian's chromium-headless-shell): it builds
// the sidecarlab binary, serves it on a free port, and acts as a person would — with JavaScript on
// and off. With E2E_SCREENSHOTS=1 (make screenshots), screenshots go to e2e/screenshots/<test>/.
package e2e

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	cdplog "github.com/chromedp/cdproto/log"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// The browser tests' server answers however long its work takes on a busy machine: they are
// about what the page shows, not how fast (the handlers' own tests hold the deadlines). It runs
// up to 8 heavy requests at once (a render of install options: a mesh of the user's own, the
// upgrade preview, the ambient profile), more than tests run at once (E2E_PARALLEL, 4), so that
// no test's heavy request waits for another's past the server's queue wait (5 s) and gets 503:
// the tests that make them ran one after another before the others, a core idle meanwhile. The
// light lane likewise: 16 requests at once, not 2 per core (4 here), as 4 tests' pages each ask
// for their partial answers and tabs beside each other, and with both cores busy with the
// browser a request could wait past the 5 s (the handlers' tests hold that limit). It was added
// for a failure of TestLabStepKeys that turned out to have another cause (a key pressed before
// the page's script set up: docs/testing.md, thirteenth round); the reason above still holds.
func init() {
	serveArgs = append(serveArgs, "--request-timeout", "1h", "--heavy-slots", "8", "--max-concurrent", "16")
	atExit = append(atExit, stopBrowser)
}

// The browser tests share one headless Chromium per run (started by the first test that asks,
// stopped by TestMain): starting one costs about a second of both cores, once per test. Each
// test gets a browser context of its own in it — its own cookies, storage and cache, as a fresh
// profile has — so tests that run in parallel share nothing but the server.
var chromium struct {
	once   sync.Once
	root   context.Context // the browser's first tab: children of it are tabs of the one browser
	cancel context.CancelFunc
	ua     string // the browser's own User-Agent, which a language override keeps
	err    error
}

// browserFlags are the shared browser's launch flags, extra ones appended (a test that needs a
// flag no DevTools command can set, like scrollbars shown, starts a browser of its own with it).
func browserFlags(t *testing.T, extra ...chromedp.ExecAllocatorOption) []chromedp.ExecAllocatorOption {
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.WindowSize(1440, 1000),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		// V8 up to Maglev, its middle compiler, without Turbofan, its top one: a page's JavaScript
		// runs the same in every tier. Turbofan's code is not kept from one document to the next,
		// so in every page axe-core's hot functions were compiled again on Chromium's worker
		// threads, costing more than they saved in a page that lives a few seconds: 13 % less of
		// Chromium's CPU on a loop of axe runs, ~5 % less CPU for the whole e2e step
		// (docs/testing.md, thirteenth round).
		chromedp.Flag("js-flags", "--max-opt=2"),
	)
	return append(opts, extra...)
}

// startBrowser starts a Chromium with opts (and a profile directory of its own, deleted by
// stop) and opens its first tab.
func startBrowser(opts []chromedp.ExecAllocatorOption) (root context.Context, stop func(), err error) {
	dir, err := os.MkdirTemp("", "sidecarlab-e2e-chromium")
	if err != nil {
		return nil, nil, err
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(opts, chromedp.UserDataDir(dir))...)
	root, cancelRoot := chromedp.NewContext(actx)
	stop = func() {
		cancelRoot()
		cancelAlloc()
		os.RemoveAll(dir)
	}
	if err := chromedp.Do(root); err != nil {
		stop()
		return nil, nil, fmt.Errorf("start chromium: %w", err)
	}
	return root, stop, nil
}

// stopBrowser stops the shared browser, if a test started it (TestMain, after the tests).
func stopBrowser() {
	if chromium.cancel != nil {
		chromium.cancel()
	}
}

// browser is a fresh browser for one test: a new window in a browser context of its own, in the
// shared Chromium (or, with launch flags, in a Chromium of the test's own).
func browser(t *testing.T, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	var root context.Context
	if len(extra) == 0 {
		root = sharedBrowser(t)
	} else {
		own, stop, err := startBrowser(browserFlags(t, extra...))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(stop)
		root = own
	}
	ctx, cancel := chromedp.NewContext(root, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	ctx, cancel2 := context.WithTimeout(ctx, testCap)
	t.Cleanup(cancel2)
	ctx = watchConsole(ctx, t)
	focused(ctx, t)
	return ctx
}

func sharedBrowser(t *testing.T) context.Context {
	t.Helper()
	chromium.once.Do(func() {
		chromium.root, chromium.cancel, chromium.err = startBrowser(browserFlags(t))
		if chromium.err == nil {
			var v cdpbrowser.GetVersionResult
			v, chromium.err = chromedp.CallBrowser(chromium.root, cdpbrowser.GetVersion, cdp.Empty{})
			chromium.ua = v.UserAgent
		}
	})
	if chromium.err != nil {
		t.Fatal(chromium.err)
	}
	return chromium.root
}

// focused makes the tab of ctx behave as the focused window, as a browser of its own did: the
// windows of one browser take turns at the focus, and :focus-visible, :focus-within and
// document.hasFocus() hold only in the one that has it. A tab a test opens from ctx
// (chromedp.NewContext(ctx)) needs it too when the test reads focus styles there.
func focused(ctx context.Context, t *testing.T) {
	t.Helper()
	if _, err := chromedp.Call(ctx, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true}); err != nil {
		t.Fatal(err)
	}
}

// watchConsole fails the test, when it ends, for every error the pages it visited wrote to the
// console (takeConsole drains them first): an exception, console.error, and what the browser
// itself reports as an error (a stylesheet or script the Content-Security-Policy blocked, an
// asset that did not load). A request the test made fail on purpose (an action answered 4xx or
// 5xx) is the page's business, not an error of it: of the network's reports, only those of
// /static/ assets count.
func watchConsole(ctx context.Context, t *testing.T) context.Context {
	t.Helper()
	c := &console{seen: make(chan struct{}, 1)}
	if err := chromedp.Listen(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *cdplog.EventEntryAdded:
			e := ev.Entry
			if e.Level != cdplog.EntryLevelError || (e.Source == cdplog.EntrySourceNetwork && !strings.Contains(e.URL, "/static/")) {
				return
			}
			c.add(fmt.Sprintf("%s: %s (%s)", e.Source, e.Text, e.URL))
		case *cdpruntime.EventExceptionThrown:
			d := ev.ExceptionDetails
			msg := d.Text
			if d.Exception != nil && d.Exception.Description != "" {
				msg = d.Exception.Description
			}
			c.add(fmt.Sprintf("exception: %s (%s:%d)", msg, d.URL, d.LineNumber))
		case *cdpruntime.EventConsoleAPICalled:
			if ev.Type != cdpruntime.ConsoleAPICalledTypeError {
				return
			}
			var parts []string
			for _, a := range ev.Args {
				parts = append(parts, string(a.Value)+a.Description)
			}
			c.add("console.error: " + strings.Join(parts, " "))
		}
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, e := range c.take() {
			t.Errorf("the browser's console: %s", e)
		}
	})
	return context.WithValue(ctx, consoleKey{}, c)
}

// console holds the errors watchConsole saw (the first 20).
type console struct {
	mu   sync.Mutex
	errs []string
	seen chan struct{} // signalled when an error is added
}

type consoleKey struct{}

func (c *console) add(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.errs) < 20 {
		c.errs = append(c.errs, s)
	}
	select {
	case c.seen <- struct{}{}:
	default:
	}
}

func (c *console) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.errs
	c.errs = nil
	select { // the signal goes with the errors it announced
	case <-c.seen:
	default:
	}
	return out
}

// awaitConsole waits until the browser of ctx has written an error to its console (or patience
// runs out) and takes what it wrote (takeConsole).
func awaitConsole(ctx context.Context) []string {
	c := ctx.Value(consoleKey{}).(*console)
	if errs := c.take(); len(errs) > 0 {
		return errs
	}
	for deadline := time.After(patience); ; {
		select {
		case <-c.seen:
		case <-ctx.Done():
			return nil
		case <-deadline:
			return nil
		}
		if errs := c.take(); len(errs) > 0 {
			return errs
		}
	}
}

// takeConsole is what the browser of ctx wrote to its console as errors so far, which then no
// longer fail the test: for a test that makes one on purpose.
func takeConsole(ctx context.Context) []string {
	return ctx.Value(consoleKey{}).(*console).take()
}

// chromiumPath is Chromium's headless shell ("old headless"): the same Chromium as Debian's
// chromium package, at about two thirds of its CPU for this suite (docs/testing.md, fourth
// round), and every check passes in it as in the full browser.
func chromiumPath(t *testing.T) string {
	const shell = "/usr/bin/chromium-headless-shell"
	if _, err := os.Stat(shell); err != nil {
		t.Fatalf("Chromium's headless shell is not installed (%v): install Debian's chromium-headless-shell, as make test does (scripts/testenv.sh)", err)
	}
	return shell
}

// screenshotsOn is whether the browser tests save screenshots (E2E_SCREENSHOTS=1, as make
// screenshots sets it): they are for a person to look at — no check reads them — and a run of
// them costs the suite about a third of its CPU (~180 full-page PNGs), so make test leaves them
// out.
var screenshotsOn = os.Getenv("E2E_SCREENSHOTS") != ""

// shots saves numbered screenshots into e2e/screenshots/<test name>/ when screenshotsOn.
type shots struct {
	t   *testing.T
	dir string
	n   int
}

func newShots(t *testing.T) *shots {
	dir := filepath.Join("screenshots", strings.ReplaceAll(t.Name(), "/", "_"))
	if screenshotsOn {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return &shots{t: t, dir: dir}
}

// take saves the whole page.
func (s *shots) take(ctx context.Context, name string) {
	s.t.Helper()
	s.save(ctx, name, chromedp.FullScreenshot(100))
}

// window saves what the window shows from the top of the page (the full-page shots are too tall
// to read a phone's header in).
func (s *shots) window(ctx context.Context, name string) {
	s.t.Helper()
	if !screenshotsOn {
		return
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.scrollTo(0, 0); true`)); err != nil {
		s.t.Fatal(err)
	}
	s.save(ctx, name, chromedp.CaptureScreenshot())
}

// element saves the element that sel selects.
func (s *shots) element(ctx context.Context, sel, name string) {
	s.t.Helper()
	s.save(ctx, name, chromedp.Screenshot(chromedp.CSS(sel)))
}

func (s *shots) save(ctx context.Context, name string, shot chromedp.Action[[]byte]) {
	s.t.Helper()
	if !screenshotsOn {
		return
	}
	buf, err := chromedp.Run(ctx, shot)
	if err != nil {
		s.t.Fatalf("screenshot %s: %v", name, err)
	}
	s.n++
	path := filepath.Join(s.dir, fmt.Sprintf("%02d-%s.png", s.n, name))
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		s.t.Fatal(err)
	}
	s.t.Logf("screenshot %s", path)
}

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: checkout
  namespace: shop
spec:
  replicas: 2
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
        image: registry.example.com/checkout:2.1
        ports:
        - containerPort: 8080
`

const (
	cpuRow   = `[data-testid="diff-step-1"] [data-testid="change"][data-path="spec.template.spec.containers[istio-proxy].resources.requests.cpu"]`
	moveRow  = `[data-testid="diff-step-2"] [data-testid="change"][data-kind="moved"][data-path="spec.template.spec.containers[istio-proxy]"]`
	startRow = `[data-testid="diff-step-2"] [data-testid="change"][data-kind="added"][data-path="spec.template.spec.containers[istio-proxy].lifecycle"]`
)

func addButton(key string) string { return `button[data-testid="add-` + key + `"]` }

// resultsText is the text of the field diff, to compare two views of the same link.
func resultsText(ctx context.Context, t *testing.T) string {
	t.Helper()
	return text(ctx, t, `[data-testid="panel-diff"]`)
}

func do(ctx context.Context, t *testing.T, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatal(err)
	}
}

// noJS turns JavaScript off in a tab.
func noJS(ctx context.Context, t *testing.T) {
	t.Helper()
	if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatal(err)
	}
}

func checkRows(ctx context.Context, t *testing.T) {
	t.Helper()
	waitShown(ctx, t, moveRow)
	cpu := text(ctx, t, cpuRow+" td.val")
	postStart := text(ctx, t, startRow+" td.val")
	if !strings.Contains(cpu, "100m") || !strings.Contains(cpu, "200m") {
		t.Fatalf("cpu row shows %q, want 100m → 200m", cpu)
	}
	if !strings.Contains(postStart, "- pilot-agent\n") || !strings.Contains(postStart, "- wait") {
		t.Fatalf("postStart row shows %q", postStart)
	}
}

// TestPlaygroundWithJavaScript: paste a Deployment, turn on proxyCPU then hold, read the field
// diff, copy the link, open it in a fresh tab and see the same result.
func TestPlaygroundWithJavaScript(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	sh := newShots(t)
	do(ctx, t,
		chromedp.Navigate(baseURL+"/"),
		shown(`.cm-content`),
	)
	// The editor's stylesheet got through the Content-Security-Policy (by its nonce): CodeMirror's
	// base theme lays the editor out as a flex box.
	if d, err := chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.querySelector(".cm-editor")).display`)); err != nil || d != "flex" {
		t.Fatalf("the editor is unstyled (display %q, %v): its stylesheet was blocked", d, err)
	}
	// Select all in the editor with the keyboard, then paste the Deployment over it.
	do(ctx, t,
		clickOn(`.cm-content`),
		chromedp.KeyEvent("a", chromedp.KeyModifiers(chromedp.ModifierCtrl)),
	)
	paste := fmt.Sprintf(`(() => {
		const el = document.querySelector(".cm-content");
		const dt = new DataTransfer();
		dt.setData("text/plain", %q);
		el.dispatchEvent(new ClipboardEvent("paste", {clipboardData: dt, bubbles: true, cancelable: true}));
		return true;
	})()`, deployment)
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](paste)); err != nil {
		t.Fatal(err)
	}
	if manifest := value(ctx, t, `#manifest`); manifest != deployment {
		t.Fatalf("after the paste the form holds:\n%s", manifest)
	}
	// The results on the page are the default manifest's: marked out of date until applied.
	do(ctx, t, shown(`[data-testid="stale"]`))
	if got := text(ctx, t, `[data-testid="stale"]`); !strings.Contains(got, "Ctrl/⌘+Enter") {
		t.Errorf("the out-of-date note says %q", got)
	}
	waitJS(ctx, t, "the results marked out of date", `document.getElementById("results-body").classList.contains("stale")`)
	sh.take(ctx, "pasted")
	do(ctx, t,
		clickOn(addButton("sidecar.istio.io/proxyCPU")),
		shown(cpuRow),
		gone(`[data-testid="stale"]`),
		clickOn(addButton("proxy.istio.io/config")),
		shown(moveRow),
	)
	if stale := pageValue[bool](ctx, t, "the results' mark", `return {ok: true, v: document.getElementById("results-body").classList.contains("stale")};`); stale {
		t.Error("the results of the pasted manifest are still marked out of date")
	}
	checkRows(ctx, t)
	sh.take(ctx, "proxycpu-then-hold")

	do(ctx, t, clickOn(`[data-testid="copy-link"]`))
	if _, err := chromedp.Run(ctx, until(`document.getElementById("status").textContent === "Link copied."`)); err != nil {
		t.Fatal(err)
	}
	permalink := attr(ctx, t, `#playground`, "data-permalink")
	url, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(permalink, "/?s=") || !strings.HasSuffix(url, permalink) {
		t.Fatalf("address bar %q, copied link %q", url, permalink)
	}
	before := resultsText(ctx, t)

	// A fresh tab opens the link and shows the same thing.
	tab, cancel := chromedp.NewContext(ctx)
	defer cancel()
	focused(tab, t)
	do(tab, t, chromedp.Navigate(baseURL+permalink))
	checkRows(tab, t)
	if after := resultsText(tab, t); after != before {
		t.Fatal("the link shows a different field diff in a fresh tab")
	}
	sh.take(tab, "fresh-tab")

	// Tabs switch in place; the injected YAML has the hold's postStart.
	do(tab, t,
		clickOn(`[data-testid="tab-yaml"]`),
		shown(`[data-testid="injected-yaml"]`),
	)
	if !strings.Contains(text(tab, t, `[data-testid="injected-yaml"]`), "- wait") {
		t.Fatal("injected YAML lacks the postStart wait")
	}
	sh.take(tab, "injected-yaml")
}

// TestPlaygroundWithoutJavaScript does the same with JavaScript disabled: plain forms, 303s, links.
func TestPlaygroundWithoutJavaScript(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	sh := newShots(t)
	do(ctx, t, chromedp.Navigate("about:blank"))
	noJS(ctx, t)
	do(ctx, t,
		chromedp.Navigate(baseURL+"/"),
		shown(`#manifest`),
		setTo(`#manifest`, deployment),
		clickOn(addButton("sidecar.istio.io/proxyCPU")),
		shown(cpuRow),
		clickOn(addButton("proxy.istio.io/config")),
		shown(moveRow),
	)
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(".cm-content").length`)); err != nil || n != 0 {
		t.Fatalf("the editor was built (%d, %v): JavaScript is not off", n, err)
	}
	checkRows(ctx, t)
	sh.take(ctx, "proxycpu-then-hold")
	permalink := attr(ctx, t, `[data-testid="permalink"]`, "href")
	before := resultsText(ctx, t)

	tab, cancel := chromedp.NewContext(ctx)
	defer cancel()
	focused(tab, t)
	do(tab, t, chromedp.Navigate("about:blank"))
	noJS(tab, t)
	do(tab, t, chromedp.Navigate(baseURL+permalink))
	checkRows(tab, t)
	if after := resultsText(tab, t); after != before {
		t.Fatal("the link shows a different field diff in a fresh tab")
	}
	// Without JavaScript, tabs are links.
	do(tab, t,
		clickOn(`[data-testid="tab-yaml"]`),
		shown(`[data-testid="injected-yaml"]`),
	)
	if !strings.Contains(text(tab, t, `[data-testid="injected-yaml"]`), "- wait") {
		t.Fatal("injected YAML lacks the postStart wait")
	}
	sh.take(tab, "fresh-tab-yaml")
}

// TestJobClassicVersusNative: open the Job preset, click "compare classic vs native", see the
// proxy move to initContainers and the Job-completion verdict flip; the lifecycle SVG is drawn.
func TestJobClassicVersusNative(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	sh := newShots(t)
	do(ctx, t,
		chromedp.Navigate(baseURL+"/"),
		shown(`.cm-content`),
		// Choosing a preset (its change event, which setTo fires once) submits the form (the
		// page's script); wait for the Job's editor text and the answer to have landed. A second
		// change event here once sent a second request, whose answer replaced the page under
		// the next steps ("No node with given id found").
		setTo(`#preset`, "job"),
		void(until(settledJS+` && document.querySelector(".cm-content").textContent.includes("kind: Job")`)),
	)
	do(ctx, t,
		clickOn(`[data-testid="tab-lifecycle"]`),
		shown(`[data-testid="lifecycle-svg"]`),
	)
	if got := attr(ctx, t, `[data-testid="verdict-job-completes"]`, "data-answer"); got != "no" {
		t.Fatalf("classic Job completes: %q", got)
	}
	// The SVG is really drawn: its boxes have a size on screen.
	w, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`document.querySelector('[data-testid="lifecycle-svg"] rect').getBoundingClientRect().width`))
	if err != nil || w < 20 {
		t.Fatalf("lifecycle SVG box width %v (%v)", w, err)
	}
	sh.take(ctx, "job-lifecycle")
	do(ctx, t,
		clickOn(`[data-testid="compare-link"]`),
		shown(`[data-testid="compare"]`),
	)
	a := attr(ctx, t, `[data-testid="side-a"] [data-testid="verdict-job-completes"]`, "data-answer")
	b := attr(ctx, t, `[data-testid="side-b"] [data-testid="verdict-job-completes"]`, "data-answer")
	if a != "no" || b != "yes" {
		t.Fatalf("Job completes: classic %q, native %q", a, b)
	}
	moved := `[data-testid="compare-changes"] [data-kind="moved"][data-path="spec.template.spec.initContainers[istio-proxy]"]`
	if !strings.Contains(text(ctx, t, moved), "moved from spec.template.spec.containers[istio-proxy]") {
		t.Fatal("the compare view does not show istio-proxy moving to initContainers")
	}
	if !strings.Contains(text(ctx, t, `[data-testid="output-b"]`), "restartPolicy: Always") {
		t.Fatal("the native output lacks restartPolicy: Always")
	}
	sh.take(ctx, "compare")
}

// TestShareLinkPresenterAndDeepLink: share → open /s/<id> in a new browser context → the same
// result; presenter mode steps with the arrow keys; a deep link highlights its row.
func TestShareLinkPresenterAndDeepLink(t *testing.T) {
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
	before := resultsText(ctx, t)
	do(ctx, t,
		clickOn(`[data-testid="share"]`),
		shown(`[data-testid="short-link"]`),
	)
	short := attr(ctx, t, `[data-testid="short-link"]`, "href")
	if !regexp.MustCompile(`^/s/[0-9a-hjkmnp-tv-z]{16}$`).MatchString(short) {
		t.Fatalf("short link %q", short)
	}
	// Written out whole, and the status says it is made and how to copy it.
	if shown := text(ctx, t, `[data-testid="short-link"]`); shown != baseURL+short {
		t.Errorf("the short link reads %q, want %q", shown, baseURL+short)
	}
	if _, err := chromedp.Run(ctx, until(`document.getElementById("status").textContent.startsWith("Shared:")`)); err != nil {
		t.Errorf("no word that the link was made: %v", err)
	}
	sh.take(ctx, "shared")

	// A new browser context (no cookies, no history) opens the short link.
	other := browser(t)
	do(other, t, chromedp.Navigate(baseURL+short))
	checkRows(other, t)
	if after := resultsText(other, t); after != before {
		t.Fatal("the short link shows a different field diff")
	}

	// Presenter mode: the arrow keys step through the timeline.
	do(other, t,
		clickOn(`[data-testid="present"]`),
		shown(`[data-testid="slide-n"]`),
	)
	if got := text(other, t, `[data-testid="slide-n"]`); got != "step 1 of 2" {
		t.Fatalf("first slide %q", got)
	}
	toSlide(other, t, "step 2 of 2") // through step 1's own next slides, if it has any
	if _, err := chromedp.Run(other, until(`!!document.querySelector('[data-testid="diff-step-2"]')`)); err != nil {
		t.Fatal("→ did not move to step 2")
	}
	sh.take(other, "presenter-step-2")
	toSlide(other, t, "lifecycle after step 2")
	if _, err := chromedp.Run(other, until(`!!document.querySelector('[data-testid="panel-lifecycle"]:not([hidden]) [data-testid="lifecycle-svg"]')`)); err != nil {
		t.Fatal("→ did not move to the lifecycle slide")
	}
	sh.take(other, "presenter-lifecycle")
	do(other, t, chromedp.KeyEvent(kb.ArrowLeft))
	if _, err := chromedp.Run(other, until(`document.querySelector('[data-testid="slide-n"]').textContent === "step 2 of 2"`)); err != nil {
		t.Fatal("← did not move back to step 2")
	}

	// A deep link highlights its row.
	path := "spec.template.spec.containers[istio-proxy].lifecycle"
	deep := baseURL + short + "#path=" + url.PathEscape(path)
	third := browser(t)
	do(third, t, chromedp.Navigate(deep))
	ok, err := chromedp.Run(third, until(`(() => { const r = document.querySelector('tr.highlight'); return !!r && r.dataset.path === `+fmt.Sprintf("%q", path)+`; })()`))
	if err != nil || !ok {
		t.Fatalf("the deep link did not highlight its row: %v", err)
	}
	sh.take(third, "deep-link")
}

// TestConsoleWatched: the console watch every browser test has sees what it must — a style the
// page's Content-Security-Policy blocks, an exception, console.error — and nothing on the
// playground as it loads.
func TestConsoleWatched(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	do(ctx, t, chromedp.Navigate(baseURL+"/"), shown(`.cm-content`))
	if errs := takeConsole(ctx); len(errs) != 0 {
		t.Fatalf("the playground wrote errors as it loaded: %q", errs)
	}
	// Apply, answered in place: the new regions bring no inline style the policy blocks.
	before := pageValue[string](ctx, t, "the address", `return {ok: true, v: location.href};`)
	do(ctx, t, clickOn(addButton("sidecar.istio.io/proxyCPU")), shown(cpuRow), clickOn(`[data-testid="apply"]`))
	waitJS(ctx, t, "the answer to Apply", settledJS+` && location.href !== `+jsString(before))
	do(ctx, t, clickOn(`[data-testid="tab-lifecycle"]`), shown(`[data-testid="lifecycle-svg"]`))
	if errs := takeConsole(ctx); len(errs) != 0 {
		t.Fatalf("the playground wrote errors after Apply: %q", errs)
	}
	for what, js := range map[string]string{
		"a blocked inline style": `document.head.insertAdjacentHTML("beforeend", "<style>body { color: red }</style>"); true`,
		"an exception":           `setTimeout(() => { throw new Error("on purpose") }, 0); true`,
		"console.error":          `console.error("on purpose"); true`,
	} {
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js)); err != nil {
			t.Fatal(err)
		}
		if errs := awaitConsole(ctx); len(errs) == 0 {
			t.Errorf("%s: the console watch saw nothing", what)
		}
	}
}
