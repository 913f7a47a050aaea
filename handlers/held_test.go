package handlers

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/web"
)

// heldKeys are the keys of the diff tab's steps in a page, in order, as the page's script sends
// them back.
func heldKeys(body string) []string {
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	if err != nil {
		return nil
	}
	var keys []string
	doc.Find("details.step[data-key]").Each(func(_ int, s *goquery.Selection) { keys = append(keys, s.AttrOr("data-key", "")) })
	return keys
}

// TestHeldSteps: a fragment sends the diff tab's steps the page holds (by the keys the page's
// script sends) as empty placeholders, and every other step whole; a key names a step's content,
// the same in a whole page and in a fragment, so a placeholder stands for exactly what would
// have been sent.
func TestHeldSteps(t *testing.T) {
	h := newServer(t)
	base := []engine.Step{{Key: "sidecar.istio.io/proxyMemory", Value: "256Mi"}}
	page := get(t, h, view{state: State{Manifest: deploymentYAML, Steps: base}, step: -1}.permalink())
	keys := heldKeys(page.body)
	if len(keys) != 2 || keys[0] == keys[1] || page.doc.Find("[data-keep]").Length() != 0 {
		t.Fatalf("the page's steps: keys %q, %d placeholders; want two distinct keys and none", keys, page.doc.Find("[data-keep]").Length())
	}
	steps, _ := json.Marshal(base)
	toggle := func(held string, partial bool, header http.Header) response {
		form := url.Values{"manifest": {deploymentYAML}, "steps": {string(steps)}, "add": {"sidecar.istio.io/proxyCPU"},
			"v:sidecar.istio.io/proxyCPU": {"150m"}}
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if partial {
			req.Header.Set(partialHeader, "1")
		}
		if !partial { // a whole page: the link the form redirects to
			next := append(append([]engine.Step{}, base...), engine.Step{Key: "sidecar.istio.io/proxyCPU", Value: "150m"})
			req = httptest.NewRequest(http.MethodGet, view{state: State{Manifest: deploymentYAML, Steps: next}, step: -1}.permalink(), nil)
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
		r.doc.Find("details.step[data-keep]").Each(func(_ int, s *goquery.Selection) {
			if s.Children().Length() != 0 {
				t.Errorf("placeholder %s has content", s.AttrOr("data-testid", ""))
			}
			out = append(out, s.AttrOr("data-testid", ""))
		})
		return out
	}

	whole := toggle("", true, nil)
	all := heldKeys(whole.body)
	if len(all) != 3 || all[0] != keys[0] || all[1] != keys[1] || len(kept(whole)) != 0 {
		t.Fatalf("the fragment without held steps: keys %q (the page's %q), kept %q", all, keys, kept(whole))
	}
	if v := strings.Join(whole.header.Values("Vary"), ", "); !strings.Contains(v, heldHeader) {
		t.Errorf("Vary %q does not name %s", v, heldHeader)
	}

	r := toggle(strings.Join(keys, " "), true, nil)
	if got := kept(r); len(got) != 2 || got[0] != "diff-step-0" || got[1] != "diff-step-1" {
		t.Fatalf("kept %q, want the two steps the page holds", got)
	}
	if k := heldKeys(r.body); len(k) != 3 || k[2] != all[2] || testid(r, "diff-step-2").Find("[data-testid=change]").Length() == 0 {
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
		"unknown keys":     {"abc def " + strings.Repeat("z", web.MaxStepKey+1), true, nil},
		"too long":         {strings.Repeat(keys[0]+" ", maxHeld+1) + keys[1], true, nil},
		"a whole page":     {strings.Join(keys, " "), false, nil},
		"another language": {strings.Join(keys, " "), true, http.Header{"Accept-Language": {"ja"}}},
	} {
		if got := kept(toggle(c.held, c.partial, c.header)); len(got) != 0 {
			t.Errorf("%s: kept %q", name, got)
		}
	}
}
