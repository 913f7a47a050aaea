package handlers

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/PuerkitoBio/goquery"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
	"github.com/sidecarlab/sidecarlab/web"
)

// heldKeys are the keys of the kept regions in a page (the lab strip, the settings, the diff
// tab's steps), in order, as the page's script sends them back.
func heldKeys(body string) []string {
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	if err != nil {
		return nil
	}
	var keys []string
	doc.Find("[data-key]").Each(func(_ int, s *goquery.Selection) { keys = append(keys, s.AttrOr("data-key", "")) })
	return keys
}

// postHeld is the page script's POST of form, holding the regions of the keys held; it must
// answer 200.
func postHeld(t *testing.T, h http.Handler, form url.Values, held string) response {
	t.Helper()
	req := formRequest(form)
	req.Header.Set(partialHeader, "1")
	req.Header.Set(heldHeader, held)
	r := do(t, h, req)
	if r.status != http.StatusOK {
		t.Fatalf("status %d", r.status)
	}
	return r
}

// TestHeldSteps: a fragment sends the kept regions the page holds (by the keys the page's script
// sends) as empty placeholders, and every other region whole; a key names a region's content,
// the same in a whole page and in a fragment, so a placeholder stands for exactly what would
// have been sent.
func TestHeldSteps(t *testing.T) {
	h := newServer(t)
	base := []input.Step{{Key: "sidecar.istio.io/proxyMemory", Value: "256Mi"}}
	page := get(t, h, view{state: api.State{Manifest: testkit.Deployment, Steps: base}, step: -1}.permalink())
	keys := heldKeys(page.body)
	if len(keys) != 4 || testid(page, "lab").AttrOr("data-key", "") != keys[0] || page.doc.Find("#settings-fields").AttrOr("data-key", "") != keys[1] ||
		keys[2] == keys[3] || page.doc.Find("[data-keep]").Length() != 0 {
		t.Fatalf("the page's kept regions: keys %q, %d placeholders; want the lab strip's, the settings' and two distinct steps', and none", keys, page.doc.Find("[data-keep]").Length())
	}
	steps, _ := json.Marshal(base)
	toggle := func(held string, partial bool, header http.Header) response {
		form := url.Values{"manifest": {testkit.Deployment}, "steps": {string(steps)}, "add": {"sidecar.istio.io/proxyCPU"},
			"v:sidecar.istio.io/proxyCPU": {"150m"}}
		req := formRequest(form)
		req.Header.Set(partialHeader, "1")
		if !partial { // a whole page: the link the form redirects to
			next := append(append([]input.Step{}, base...), input.Step{Key: "sidecar.istio.io/proxyCPU", Value: "150m"})
			req = httptest.NewRequest(http.MethodGet, view{state: api.State{Manifest: testkit.Deployment, Steps: next}, step: -1}.permalink(), nil)
		}
		for k, v := range header {
			req.Header[k] = v
		}
		if held != "" {
			req.Header.Set(heldHeader, held)
		}
		r := do(t, h, req)
		if r.status != http.StatusOK {
			t.Fatalf("status %d", r.status)
		}
		return r
	}
	kept := func(r response) (out []string) {
		r.doc.Find("[data-keep]").Each(func(_ int, s *goquery.Selection) {
			if s.Children().Length() != 0 {
				t.Errorf("placeholder %s has content", s.AttrOr("data-testid", ""))
			}
			out = append(out, s.AttrOr("data-testid", s.AttrOr("id", "")))
		})
		return out
	}

	whole := toggle("", true, nil)
	all := heldKeys(whole.body)
	if len(all) != 5 || all[0] != keys[0] || all[1] != keys[1] || all[2] != keys[2] || all[3] != keys[3] || len(kept(whole)) != 0 {
		t.Fatalf("the fragment without held regions: keys %q (the page's %q), kept %q", all, keys, kept(whole))
	}
	if v := strings.Join(whole.header.Values("Vary"), ", "); !strings.Contains(v, heldHeader) {
		t.Errorf("Vary %q does not name %s", v, heldHeader)
	}

	r := toggle(strings.Join(keys, " "), true, nil)
	if got := kept(r); strings.Join(got, " ") != "lab settings-fields diff-step-0 diff-step-1" {
		t.Fatalf("kept %q, want the lab strip, the settings and the two steps the page holds", got)
	}
	if k := heldKeys(r.body); len(k) != 5 || k[4] != all[4] || testid(r, "diff-step-2").Find("[data-testid=change]").Length() == 0 {
		t.Fatalf("the new step is not sent whole: keys %q", k)
	}
	if testid(r, "diff-step-0").AttrOr("open", "x") != "x" || testid(r, "diff-step-1").AttrOr("open", "x") == "x" {
		t.Error("a placeholder does not say whether its step is open (row 0 closed, row 1 open)")
	}
	if len(r.body) >= len(whole.body) {
		t.Errorf("the answer with placeholders is %d bytes, without %d", len(r.body), len(whole.body))
	}

	// Keys the page does not hold, too many bytes of keys, a whole page, another language: every
	// step whole.
	for name, c := range map[string]struct {
		held    string
		partial bool
		header  http.Header
	}{
		"unknown keys":     {"abc def " + strings.Repeat("z", web.MaxKey+1), true, nil},
		"too long":         {strings.Repeat(keys[2]+" ", maxHeld+1) + keys[0], true, nil},
		"a whole page":     {strings.Join(keys, " "), false, nil},
		"another language": {strings.Join(keys, " "), true, http.Header{"Accept-Language": {"ja"}}},
	} {
		if got := kept(toggle(c.held, c.partial, c.header)); len(got) != 0 {
			t.Errorf("%s: kept %q", name, got)
		}
	}
}

// TestHeldLabStripMoves: the lab strip the page holds is sent again when the state moves along the
// lab's path (its current step changes), and kept while it does not.
func TestHeldLabStripMoves(t *testing.T) {
	h := newServer(t)
	deploy, _ := web.FindPreset("deployment")
	first := get(t, h, view{state: api.State{Manifest: deploy.Manifest}, step: -1}.permalink())
	lab := testid(first, "lab").AttrOr("data-key", "")
	if lab == "" || testid(first, "lab-1").AttrOr("aria-current", "") != "step" {
		t.Fatalf("the lab's first step: lab strip key %q, chip 1 current %q", lab, testid(first, "lab-1").AttrOr("aria-current", ""))
	}
	post := func(key, value string) response {
		form := url.Values{"manifest": {deploy.Manifest}, "steps": {"[]"}, "add": {key}, "v:" + key: {value}}
		return postHeld(t, h, form, strings.Join(heldKeys(first.body), " "))
	}
	// The lab's second step: the current chip moves, so the strip is sent whole.
	next := post("sidecar.istio.io/proxyCPU", "200m")
	if l := testid(next, "lab"); l.Is("[data-keep]") || l.AttrOr("data-key", "") == lab || testid(next, "lab-2").AttrOr("aria-current", "") != "step" {
		t.Errorf("a step along the path: the strip is kept %t, key %q (was %q)", l.Is("[data-keep]"), l.AttrOr("data-key", ""), lab)
	}
	// A value off the path: no chip is current there, and the strip (no longer the first step's)
	// is sent whole too; the same strip twice is kept.
	off := post("sidecar.istio.io/proxyCPU", "201m")
	if testid(off, "lab").Is("[data-keep]") || testid(off, "lab").AttrOr("data-key", "") == lab {
		t.Error("a state off the path is sent the first step's strip as a placeholder")
	}
	first = off
	if again := post("sidecar.istio.io/proxyCPU", "202m"); !testid(again, "lab").Is("[data-keep]") || testid(again, "lab").Children().Length() != 0 {
		t.Error("the same strip off the path is sent again")
	}
}

// TestHeldSettingsChange: the settings the page holds are sent whole when the action changes them
// (here the Kubernetes version it posts), with what was posted, and kept when it does not.
func TestHeldSettingsChange(t *testing.T) {
	h := newServer(t)
	page := get(t, h, view{state: api.State{Manifest: testkit.Deployment}, step: -1}.permalink())
	held := strings.Join(heldKeys(page.body), " ")
	post := func(version string) response {
		form := url.Values{"manifest": {testkit.Deployment}, "steps": {"[]"}, "kubernetesVersion": {version},
			"add": {"sidecar.istio.io/proxyCPU"}, "v:sidecar.istio.io/proxyCPU": {"150m"}}
		return postHeld(t, h, form, held)
	}
	same := post(page.doc.Find(`[data-testid="kubernetes-version"]`).AttrOr("value", ""))
	if f := same.doc.Find("#settings-fields"); !f.Is("[data-keep]") || f.Children().Length() != 0 {
		t.Error("settings the action left as they were are sent again")
	}
	other := post("1.30")
	f := other.doc.Find("#settings-fields")
	if f.Is("[data-keep]") || f.Find(`[data-testid="kubernetes-version"]`).AttrOr("value", "") != "1.30" || !testid(other, "lab").Is("[data-keep]") {
		t.Errorf("changed settings: kept %t, version %q; the lab strip kept %t", f.Is("[data-keep]"), f.Find(`[data-testid="kubernetes-version"]`).AttrOr("value", ""), testid(other, "lab").Is("[data-keep]"))
	}
}
