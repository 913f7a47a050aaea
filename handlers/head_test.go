package handlers

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sidecarlab/sidecarlab/engine"
)

func meta(r response, attr, name string) string {
	return r.doc.Find(`meta[`+attr+`="`+name+`"]`).AttrOr("content", "")
}

// TestTitlesAndOpenGraph: every state has its own <title> and og:title/og:description naming the
// workload and the annotation steps, bounded and escaped, so pasted links can be told apart.
func TestTitlesAndOpenGraph(t *testing.T) {
	h := newServer(t)
	steps := []engine.Step{{Key: "sidecar.istio.io/proxyCPU", Value: "200m"}, {Key: "proxy.istio.io/config", Value: "holdApplicationUntilProxyStarts: true"}}
	page := get(t, h, stateLink(t, State{Manifest: deploymentYAML, Steps: steps}))
	title := page.doc.Find("title").Text()
	if title != "Deployment/web · proxyCPU=200m, hold — sidecarlab" {
		t.Fatalf("title %q", title)
	}
	if og := meta(page, "property", "og:title"); og != title {
		t.Fatalf("og:title %q, title %q", og, title)
	}
	desc := meta(page, "property", "og:description")
	for _, want := range []string{"Deployment/web", "1. sidecar.istio.io/proxyCPU=200m", "2. proxy.istio.io/config=holdApplicationUntilProxyStarts: true"} {
		if !strings.Contains(desc, want) {
			t.Errorf("og:description %q lacks %q", desc, want)
		}
	}
	if page.doc.Find("h1").Length() != 1 {
		t.Errorf("the playground has %d <h1>", page.doc.Find("h1").Length())
	}

	// Other states of the same manifest have other titles.
	seen := map[string]string{title: "two steps"}
	for name, target := range map[string]string{
		"no steps":       stateLink(t, State{Manifest: deploymentYAML}),
		"one step":       stateLink(t, State{Manifest: deploymentYAML, Steps: steps[:1]}),
		"lifecycle tab":  testid(page, "tab-lifecycle").AttrOr("href", ""),
		"presenter mode": testid(page, "present").AttrOr("href", ""),
		"a removal":      stateLink(t, State{Manifest: deploymentYAML, Steps: append(steps[:1:1], engine.Step{Key: "sidecar.istio.io/proxyCPU", Remove: true})}),
	} {
		r := get(t, h, target)
		got := r.doc.Find("title").Text()
		if other, dup := seen[got]; dup {
			t.Errorf("%s and %s share the title %q", name, other, got)
		}
		seen[got] = name
		if !strings.HasSuffix(got, " — sidecarlab") || meta(r, "property", "og:title") != got || meta(r, "property", "og:description") == "" {
			t.Errorf("%s: title %q, og:title %q, og:description %q", name, got, meta(r, "property", "og:title"), meta(r, "property", "og:description"))
		}
	}

	// Long and hostile values are bounded and stay text.
	hostile := strings.Repeat("x", 5000) + `"><script>alert(1)</script>`
	r := get(t, h, stateLink(t, State{Manifest: deploymentYAML, Steps: []engine.Step{{Key: "sidecar.istio.io/statsInclusionPrefixes", Value: hostile}}}))
	got, desc := r.doc.Find("title").Text(), meta(r, "property", "og:description")
	if n := utf8.RuneCountInString(got); n > maxTitle+len(titleSuffix) {
		t.Errorf("title of %d runes", n)
	}
	if n := utf8.RuneCountInString(desc); n > maxDescription {
		t.Errorf("og:description of %d runes", n)
	}
	if r.doc.Find("head script").Length() != 2 || strings.Contains(r.body, "<script>alert") {
		t.Error("a step's value escaped into the page as markup")
	}

	// The embed and compare pages say what they show too.
	embed := get(t, h, testid(page, "embed").AttrOr("href", ""))
	if got := embed.doc.Find("title").Text(); got != title || meta(embed, "property", "og:description") != desc0(page) {
		t.Errorf("embed title %q", got)
	}
}

func desc0(r response) string { return meta(r, "property", "og:description") }
