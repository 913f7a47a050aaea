//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	engineinput "github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
	"github.com/sidecarlab/sidecarlab/permalink"
)

// TestRoomFollowsTheTrainer: a trainer starts a room from presenter mode; two learners, each in
// a browser context of their own, open its address and follow three steps as the trainer's
// arrow keys move; one tries it on their own and comes back; the trainer's counts say where
// everyone is, all along.
func TestRoomFollowsTheTrainer(t *testing.T) {
	t.Parallel()
	sh := newShots(t)
	trainer := roomScenario(t, sh, baseURL, baseURL, baseURL)
	everyScreen(trainer, t, sh, "the trainer's room", "room-trainer", nil)
	hideRoomQR(trainer, t, sh)
}

// hideRoomQR: the trainer hides the QR code from the keyboard once the learners have joined, and
// the bar gives the slide its height back; the code stays hidden at the next step (the bar is
// swapped) and after a reload, and comes back when asked. On the smaller projector, where a
// slide's height is dearest.
func hideRoomQR(trainer context.Context, t *testing.T, sh *shots) {
	t.Helper()
	const qr = `getComputedStyle(document.querySelector('[data-testid="room-qr"]')).display !== "none"`
	const toggle = `[data-testid="room-qr-toggle"]`
	barHeight := func() float64 {
		t.Helper()
		return pageValue[float64](trainer, t, "the room bar's height", `return {ok: true, v: document.querySelector('[data-testid="room-bar"]').getBoundingClientRect().height};`)
	}
	qrVisible := func(what string) bool {
		t.Helper()
		return pageValue[bool](trainer, t, what, `return {ok: true, v: `+qr+`};`)
	}
	do(trainer, t, chromedp.EmulateViewport(int64(projectors[0].w), int64(projectors[0].h)), void(until(qr)), shown(toggle))
	shownHeight := barHeight()
	if got := text(trainer, t, toggle); got != "Hide the QR code" {
		t.Fatalf("the toggle reads %q", got)
	}
	do(trainer, t, chromedp.Focus(toggle), chromedp.KeyEvent(kb.Enter), void(until(`!(`+qr+`)`)))
	if h := barHeight(); h > shownHeight*2/3 {
		t.Errorf("without its QR code the bar is %.0f px high, %.0f with it: not a third of its height given back", h, shownHeight)
	}
	if got, want := attr(trainer, t, toggle, "aria-expanded"), "false"; got != want {
		t.Errorf("aria-expanded %q, want %q", got, want)
	}
	// axe, light and dark, at the projector's size; the bar with its QR code is checked at every
	// screen by the caller (everyScreen).
	checkA11y(trainer, t, "the trainer's room, its QR code hidden")
	sh.take(trainer, "room-qr-hidden")
	toSlide(trainer, t, "step 3 of 3")
	waitJS(trainer, t, "the room moved to step 3", `document.querySelector('[data-testid="room-status"]')?.textContent.includes("step 3")`)
	if qrVisible("the QR code at the next step") {
		t.Fatal("the next step showed the QR code again")
	}
	do(trainer, t, chromedp.Reload(), shown(toggle))
	if qrVisible("the QR code after a reload") {
		t.Fatal("a reload showed the QR code again")
	}
	do(trainer, t, clickOn(toggle), void(until(qr)))
	if got := text(trainer, t, toggle); got != "Hide the QR code" {
		t.Errorf("shown again, the toggle reads %q", got)
	}
}

// TestRoomAcrossServers: the same with two servers on one PostgreSQL, as replicas behind a load
// balancer are: the trainer on one, a learner on each.
func TestRoomAcrossServers(t *testing.T) {
	t.Parallel()
	dsn := testkit.PostgresDSN(t)
	var urls []string
	for _, name := range []string{"a", "b"} {
		stop, u, _, err := serve(serverBin, filepath.Join(t.TempDir(), name+".db"), "--postgres", dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(stop)
		urls = append(urls, u)
	}
	roomScenario(t, newShots(t), urls[0], urls[1], urls[0])
}

// roomScenario is the workshop: the trainer on the server at trainerBase starts a room from
// presenter mode; learner a opens it on the server at aBase, learner b on bBase; they follow three
// steps; b goes their own way and comes back. It returns the trainer's browser.
func roomScenario(t *testing.T, sh *shots, trainerBase, aBase, bBase string) context.Context {
	t.Helper()
	st := api.State{Version: permalink.Version, Istio: engine.Version().Istio, Manifest: testkit.Deployment, Steps: []engineinput.Step{
		{Key: "sidecar.istio.io/proxyCPU", Value: "200m"},
		{Key: "sidecar.istio.io/proxyMemory", Value: "256Mi"},
		{Key: "proxy.istio.io/config", Value: "holdApplicationUntilProxyStarts: true"},
	}}
	trainer := browser(t)
	do(trainer, t,
		chromedp.Navigate(trainerBase+"/?present=1&s="+url.QueryEscape(permalink.Encode(st))),
		shown(`[data-testid="room-start"]`),
	)
	checkA11y(trainer, t, "presenter mode, a room to start")
	do(trainer, t,
		clickOn(`[data-testid="room-start"]`),
		shown(`[data-testid="room-qr"]`),
	)
	learnersURL := attr(trainer, t, `[data-testid="room-url"]`, "href")
	if !regexp.MustCompile(`^` + regexp.QuoteMeta(trainerBase) + `/r/[0-9a-hjkmnp-tv-z]{8}$`).MatchString(learnersURL) {
		t.Fatalf("the learners' address %q", learnersURL)
	}
	roomPath := strings.TrimPrefix(learnersURL, trainerBase)
	counts := func(following, own int) {
		t.Helper()
		js := fmt.Sprintf(`document.querySelector('[data-testid="room-following"]')?.textContent === "%d" && document.querySelector('[data-testid="room-own"]')?.textContent === "%d"`, following, own)
		if _, err := chromedp.Run(trainer, until(js)); err != nil {
			t.Fatalf("the trainer's counts never read %d following, %d on their own: %q, %q", following, own,
				text(trainer, t, `[data-testid="room-following"]`), text(trainer, t, `[data-testid="room-own"]`))
		}
	}
	a, b := browser(t), browser(t)
	do(a, t, chromedp.Navigate(aBase+roomPath), shown(`[data-testid="room-fork"]`))
	do(b, t, chromedp.Navigate(bBase+roomPath), shown(`[data-testid="room-fork"]`))
	counts(2, 0)
	sh.take(trainer, "room-trainer")
	for _, step := range []int{2, 3} {
		toSlide(trainer, t, fmt.Sprintf("step %d of 3", step))
		want := fmt.Sprintf(`document.querySelector('[data-testid="room-bar"]')?.dataset.step === "%d" && !!document.querySelector('[data-testid="diff-step-%d"]') && location.pathname.startsWith("/r/")`, step, step)
		if _, err := chromedp.Run(a, until(want)); err != nil {
			t.Fatalf("learner a did not follow to step %d", step)
		}
		if _, err := chromedp.Run(b, until(want)); err != nil {
			t.Fatalf("learner b did not follow to step %d", step)
		}
	}
	checkA11y(a, t, "a learner following a room")
	sh.take(a, "room-following")

	// b tries it on their own: the room counts them apart, and tells them where it is.
	do(b, t, clickOn(`[data-testid="room-fork"]`), shown(`[data-testid="room-back"]`))
	counts(1, 1)
	do(trainer, t, chromedp.KeyEvent(kb.ArrowLeft))
	if _, err := chromedp.Run(a, until(`document.querySelector('[data-testid="room-bar"]')?.dataset.step === "2" && !!document.querySelector('[data-testid="diff-step-2"]')`)); err != nil {
		t.Fatal("learner a did not follow back to step 2")
	}
	if _, err := chromedp.Run(b, until(`document.querySelector('[data-testid="room-at"]')?.textContent.includes("step 2") && !!document.querySelector('[data-testid="diff-step-3"]')`)); err != nil {
		t.Fatalf("learner b, on their own, was moved or not told: %q", text(b, t, `[data-testid="room-at"]`))
	}
	checkA11y(b, t, "a learner on their own")
	sh.take(b, "room-own")

	// And comes back: following again, at the room's step.
	do(b, t, clickOn(`[data-testid="room-back"]`), shown(`[data-testid="room-fork"]`))
	counts(2, 0)
	if _, err := chromedp.Run(b, until(`document.querySelector('[data-testid="room-bar"]')?.dataset.step === "2"`)); err != nil {
		t.Fatal("back in the room, learner b is not at its step")
	}
	if alone, err := chromedp.Run(trainer, chromedp.Evaluate[bool](`!!document.querySelector('[data-testid="room-alone"]')`)); err != nil || alone {
		t.Fatalf("the trainer is told the room is not shared (%v)", err)
	}
	return trainer
}
