package handlers

import (
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/web"

	"github.com/PuerkitoBio/goquery"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

func meta(r response, attr, name string) string {
	return r.doc.Find(`meta[`+attr+`="`+name+`"]`).AttrOr("content", "")
}

// TestTitlesAndOpenGraph: every state has its own <title> and og:title/og:description naming the
// workload and the annotation steps, bounded and escaped, so pasted links can be told apart.
func TestTitlesAndOpenGraph(t *testing.T) {
	h := newServer(t)
	steps := []input.Step{{Key: "sidecar.istio.io/proxyCPU", Value: "200m"}, {Key: "proxy.istio.io/config", Value: "holdApplicationUntilProxyStarts: true"}}
	page := get(t, h, stateLink(t, api.State{Manifest: testkit.Deployment, Steps: steps}))
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
		"no steps":       stateLink(t, api.State{Manifest: testkit.Deployment}),
		"one step":       stateLink(t, api.State{Manifest: testkit.Deployment, Steps: steps[:1]}),
		"lifecycle tab":  testid(page, "tab-lifecycle").AttrOr("href", ""),
		"presenter mode": testid(page, "present").AttrOr("href", ""),
		"a removal":      stateLink(t, api.State{Manifest: testkit.Deployment, Steps: append(steps[:1:1], input.Step{Key: "sidecar.istio.io/proxyCPU", Remove: true})}),
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
	r := get(t, h, stateLink(t, api.State{Manifest: testkit.Deployment, Steps: []input.Step{{Key: "sidecar.istio.io/statsInclusionPrefixes", Value: hostile}}}))
	got, desc := r.doc.Find("title").Text(), meta(r, "property", "og:description")
	if n := utf8.RuneCountInString(got); n > web.MaxTitle+len(" — sidecarlab") {
		t.Errorf("title of %d runes", n)
	}
	if n := utf8.RuneCountInString(desc); n > web.MaxDescription {
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

// TestEmbedSnippet: the Embed button offers the <iframe> for this view to copy, as text in a
// read-only textarea (no JavaScript needed), pointing at this server's /embed.
func TestEmbedSnippet(t *testing.T) {
	h := newServer(t)
	page := get(t, h, stateLink(t, api.State{Manifest: testkit.Deployment, Steps: []input.Step{{Key: "sidecar.istio.io/proxyCPU", Value: "200m"}}}))
	ta := testid(page, "embed-snippet")
	if !ta.Is("textarea[readonly]") || page.doc.Find(`label[for="embed-snippet"]`).Length() != 1 {
		t.Fatal("no labelled read-only textarea with the embed snippet")
	}
	snippet := ta.Text()
	embedHref := testid(page, "embed").AttrOr("href", "")
	want := `<iframe src="http://example.com` + strings.ReplaceAll(embedHref, "&", "&amp;") + `" title="Deployment/web · proxyCPU=200m — sidecarlab"`
	if !strings.HasPrefix(embedHref, "/embed?s=") || !strings.HasPrefix(snippet, want) || !strings.HasSuffix(snippet, "></iframe>") {
		t.Fatalf("embed snippet\n%s\nwant it to start with\n%s", snippet, want)
	}
	if strings.Contains(page.body, "<iframe") {
		t.Fatal("the snippet is markup in the page, not text")
	}
	// What the snippet points at answers, may be framed, and shows the step's changes.
	e := get(t, h, embedHref)
	if e.status != 200 || !strings.HasSuffix(e.header.Get("Content-Security-Policy"), "frame-ancestors * file:") {
		t.Fatalf("the embed answers %d, CSP %q", e.status, e.header.Get("Content-Security-Policy"))
	}
	if testid(e, "change").FilterFunction(func(_ int, s *goquery.Selection) bool {
		return strings.Contains(s.AttrOr("data-path", ""), "istio-proxy].resources")
	}).Length() == 0 {
		t.Fatal("the embed shows no change of istio-proxy's resources")
	}
	// An X-Forwarded-Proto from anyone (no trusted proxy) does not make it https.
	req := httptest.NewRequest("GET", stateLink(t, api.State{Manifest: testkit.Deployment}), nil)
	req.Header.Set("X-Forwarded-Proto", "https")
	if r := do(t, h, req); !strings.HasPrefix(testid(r, "embed-snippet").Text(), `<iframe src="http://example.com/embed?s=`) {
		t.Fatalf("untrusted X-Forwarded-Proto was believed: %s", testid(r, "embed-snippet").Text())
	}
}
