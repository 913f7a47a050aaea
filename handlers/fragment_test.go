package handlers

import (
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

// failingSecond is two Deployments, the second of which Istio rejects at every step (a
// userVolume annotation that is not JSON on its pod template): the first one's rows count
// changes, the second's note says it failed.
var failingSecond = testkit.Deployment + "---\n" + strings.Replace(strings.Replace(testkit.Deployment, "name: web\n", "name: broken\n", 1),
	"    metadata:\n      labels:", "    metadata:\n      annotations:\n        sidecar.istio.io/userVolume: '{\"v\":'\n      labels:", 1)

// headings are the step headings of a panel, their words joined by single spaces.
func headings(panel *goquery.Selection) []string {
	var out []string
	panel.Find(".step-h").Each(func(_ int, s *goquery.Selection) { out = append(out, strings.Join(strings.Fields(s.Text()), " ")) })
	return out
}

// TestFragmentTabIsThePagesTab: the tab a fragment carries (the script's answer, which carries
// only the selected tab) is the same HTML as that tab in the whole page of the same view: a
// fragment must not leave out what the other tabs would have computed (the unified tab's
// headings once said "0 changes" there, and lost the rows' notes).
func TestFragmentTabIsThePagesTab(t *testing.T) {
	h := newServer(t)
	st := api.State{Manifest: failingSecond, Steps: []input.Step{{Key: "sidecar.istio.io/proxyCPU", Value: "200m"}}}
	for _, tab := range web.Tabs() {
		t.Run(tab.ID, func(t *testing.T) {
			link := view{state: st, tab: tab.ID, step: -1}.permalink()
			whole := get(t, h, link)
			req := httptest.NewRequest(http.MethodGet, link, nil)
			req.Header.Set(partialHeader, "1")
			frag := do(t, h, req)
			want, _ := testid(whole, "panel-"+tab.ID).Html()
			got, _ := testid(frag, "panel-"+tab.ID).Html()
			if want == "" || frag.doc.Find("#fragment").Length() != 1 {
				t.Fatalf("status %d/%d: the page's panel is empty, or the answer is no fragment", whole.status, frag.status)
			}
			if got != want {
				t.Errorf("the fragment's panel differs from the page's: headings %q, want %q; %d bytes, want %d",
					headings(testid(frag, "panel-"+tab.ID)), headings(testid(whole, "panel-"+tab.ID)), len(got), len(want))
			}
		})
	}
}

// TestApplyOnUnifiedTab: Apply while the unified tab is shown answers with that tab only, and its
// headings count the changes the field diff counts, with the serializer's and the notes of the
// documents that failed (they once said "0 changes", and nothing of the failure, there).
func TestApplyOnUnifiedTab(t *testing.T) {
	h := newServer(t)
	page := get(t, h, view{state: api.State{Manifest: failingSecond}, tab: "unified", step: -1}.permalink())
	diff := headings(testid(page, "panel-diff"))
	if len(diff) != 1 || !strings.Contains(diff[0], " changes + 3 by the serializer") || strings.Contains(diff[0], " 0 changes") {
		t.Fatalf("the field diff's heading %q, want row 0's changes and the serializer's", diff)
	}
	if got := headings(testid(page, "panel-unified")); strings.Join(got, "|") != strings.Join(diff, "|") {
		t.Fatalf("the page's unified headings %q, want the field diff's %q", got, diff)
	}
	form := url.Values{"manifest": {failingSecond}, "steps": {"[]"}, "tab": {"unified"}, "action": {"apply"}}
	req := formRequest(form)
	req.Header.Set(partialHeader, "1")
	req.Header.Set(heldHeader, strings.Join(heldKeys(page.body), " "))
	r := do(t, h, req)
	panel := testid(r, "panel-unified")
	if r.status != http.StatusUnprocessableEntity || r.doc.Find("#fragment").Length() != 1 || !panel.Is(":not([hidden])") || testid(r, "panel-diff").AttrOr("data-empty", "") != "1" {
		t.Fatalf("status %d: want a fragment of the unified tab alone", r.status)
	}
	if got := headings(panel); strings.Join(got, "|") != strings.Join(diff, "|") {
		t.Errorf("after Apply the unified headings say %q, want the field diff's %q", got, diff)
	}
	if note := panel.Find(`[data-testid="doc-note"][data-status="error"][data-doc="2"]`); note.Length() != 1 || !strings.Contains(note.Text(), "userVolume") {
		t.Errorf("after Apply the unified tab does not say document 2 failed: notes %q", panel.Find(`[data-testid="doc-note"]`).Text())
	}
}
