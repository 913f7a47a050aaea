package web

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/go-cmp/cmp"

	"github.com/sidecarlab/sidecarlab/i18n"
)

// renderDoc is a field's doc as the editor shows it, in English.
func renderDoc(t *testing.T, doc string) *goquery.Selection {
	t.Helper()
	var b bytes.Buffer
	ctx := i18n.NewContext(context.Background(), i18n.For(i18n.Default))
	if err := configDoc("field", ParseDoc(doc)).Render(ctx, &b); err != nil {
		t.Fatal(err)
	}
	d, err := goquery.NewDocumentFromReader(&b)
	if err != nil {
		t.Fatal(err)
	}
	return d.Find(`[data-testid="pc-doc-field"]`)
}

// TestDocLinks: a Markdown link to an http(s) address is a link that opens in a new tab, its text
// the link's words and no Markdown left; any other address (javascript:, data:, a relative path, a
// reference to a proto name) leaves the words as text and makes no link.
func TestDocLinks(t *testing.T) {
	d := renderDoc(t, "See [Access Log Service](https://www.envoyproxy.io/docs/als.proto) for details.")
	a := d.Find("a")
	if a.Length() != 1 {
		t.Fatalf("%d links in %q", a.Length(), d.Text())
	}
	if href := a.AttrOr("href", ""); href != "https://www.envoyproxy.io/docs/als.proto" {
		t.Errorf("href %q", href)
	}
	if a.Text() != "Access Log Service" || a.AttrOr("target", "") != "_blank" || a.AttrOr("rel", "") != "noopener" {
		t.Errorf("link %q target %q rel %q", a.Text(), a.AttrOr("target", ""), a.AttrOr("rel", ""))
	}
	if got := d.Text(); got != "See Access Log Service for details." {
		t.Errorf("text %q", got)
	}

	for _, doc := range []string{
		"Use [tracing](javascript:alert(document.cookie)) instead.",
		"Use [tracing](JavaScript:alert(1)) instead.",
		"Use [tracing](data:text/html,<script>alert(1)</script>) instead.",
		"Use [tracing](/docs/tracing) instead.",
		"Use [tracing](https:///nohost) instead.",
		"Use [tracing][istio.mesh.v1alpha1.ProxyConfig.tracing] instead.",
	} {
		d := renderDoc(t, doc)
		if n := d.Find("a").Length(); n != 0 {
			t.Errorf("%q: %d links, want none", doc, n)
		}
		if got := d.Text(); got != "Use tracing instead." {
			t.Errorf("%q: text %q", doc, got)
		}
	}
	// What is not a link as written stays as written.
	for _, doc := range []string{"An array [0] of them.", "A [half link]( never closed.", "[]()"} {
		if got := renderDoc(t, doc).Text(); got != doc {
			t.Errorf("%q shown as %q", doc, got)
		}
	}
}

// TestDocMarkup: `code` is <code>, [`code`](url) a link of code, _words_ emphasis; a snake_case
// name is no emphasis; the doc's own HTML is text, escaped, never markup.
func TestDocMarkup(t *testing.T) {
	d := renderDoc(t, "Default is `45s` (e.g. _1s/1m/1h_), see [`drain`](https://istio.io/d) and service_cluster_name.")
	if got := d.Find("p > code").Text(); got != "45s" {
		t.Errorf("code %q", got)
	}
	if got := d.Find("em").Text(); got != "1s/1m/1h" {
		t.Errorf("emphasis %q", got)
	}
	if got := d.Find("a > code").Text(); got != "drain" {
		t.Errorf("link of code %q", got)
	}
	if got := d.Text(); got != "Default is 45s (e.g. 1s/1m/1h), see drain and service_cluster_name." {
		t.Errorf("text %q", got)
	}

	hostile := "A <script>alert(1)</script> and <b>bold</b> `<img src=x onerror=alert(1)>`."
	d = renderDoc(t, hostile)
	if n := d.Find("script, b, img").Length(); n != 0 {
		t.Errorf("the doc's HTML became %d elements", n)
	}
	if got := d.Text(); got != "A <script>alert(1)</script> and <b>bold</b> <img src=x onerror=alert(1)>." {
		t.Errorf("text %q", got)
	}
}

// TestDocFence: a fenced block is <pre><code> with its lines, between the paragraphs around it.
func TestDocFence(t *testing.T) {
	d := renderDoc(t, "As follows:\n```yaml\nmatcher:\n  inclusionRegexps:\n    - .*outlier.*\n```\nNote this.")
	if got := d.Find("pre > code").Text(); got != "matcher:\n  inclusionRegexps:\n    - .*outlier.*" {
		t.Errorf("code block %q", got)
	}
	if got := d.Find("p").Length(); got != 2 || strings.Contains(d.Text(), "```") {
		t.Errorf("%d paragraphs, text %q", got, d.Text())
	}
}

// TestDocCut: a short doc is shown whole; a long one shows its first sentences up to docLeadMax
// characters and the rest behind "more", cut only where a sentence ends; a first sentence longer
// than that is shown whole. Nothing is lost between the two.
func TestDocCut(t *testing.T) {
	sentence := "Envoy drains the listeners for this long. "
	long := "This first sentence is long, " + strings.Repeat("and it goes on, ", 20) + "until it ends. Then another."
	cases := []struct {
		name, doc, lead, more string
	}{
		{"short", "The number of worker threads to run. If unset, it is derived.", "The number of worker threads to run. If unset, it is derived.", ""},
		{"sentences", strings.Repeat(sentence, 8), strings.TrimSpace(strings.Repeat(sentence, 4)), strings.TrimSpace(strings.Repeat(sentence, 4))},
		{"one long sentence", long, strings.TrimSuffix(long, " Then another."), "Then another."},
		// "e.g. `x`", "i.e. Envoy" and "0.5" end no sentence; the cut is at the next that does.
		{"no false ends", strings.Repeat("x", 150) + " (e.g. `accesslog:15000`) is 0.5 of it. Then " + strings.Repeat("y ", 60) + "end.",
			strings.Repeat("x", 150) + " (e.g. accesslog:15000) is 0.5 of it.", "Then " + strings.Repeat("y ", 60) + "end."},
		// Nor do "i.e. Envoy" and a dot before a small letter.
		{"i.e. is no end", strings.Repeat("x", 150) + " (i.e. Envoy) of v1. api " + strings.Repeat("z ", 30) + "ends. Then more.",
			strings.Repeat("x", 150) + " (i.e. Envoy) of v1. api " + strings.Repeat("z ", 30) + "ends.", "Then more."},
		{"no sentence end at all", strings.Repeat("word ", 60), strings.TrimSpace(strings.Repeat("word ", 60)), ""},
		{"fence after the lead", strings.Repeat(sentence, 3) + "So:\n```\n" + strings.Repeat("code\n", 40) + "```", strings.TrimSpace(strings.Repeat(sentence, 3)) + " So:", strings.TrimSpace(strings.Repeat("code\n", 40))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := renderDoc(t, c.doc)
			more := d.Find(`[data-testid="pc-more-field"]`)
			lead := d.Children().Not("details")
			if d := cmp.Diff(c.lead, strings.TrimSpace(lead.Text())); d != "" {
				t.Errorf("lead (-want +got):\n%s", d)
			}
			got := strings.TrimSpace(more.Children().Not("summary").Text())
			if d := cmp.Diff(c.more, got); d != "" {
				t.Errorf("more (-want +got):\n%s", d)
			}
			if (c.more == "") != (more.Length() == 0) {
				t.Errorf("%d <details>, want one only when there is more", more.Length())
			}
			if more.Length() > 0 && more.Find("summary").Text() != "more" {
				t.Errorf("the summary says %q", more.Find("summary").Text())
			}
		})
	}
}

// TestDocMoreWorded: "more" and its label are worded in every language.
func TestDocMoreWorded(t *testing.T) {
	for _, code := range i18n.Codes {
		l := i18n.For(code)
		for _, id := range []string{"page.panel.configDocMore", "page.panel.configDocMoreLabel"} {
			if w := l.T(id, "Name", "concurrency"); w == "" || w == id {
				t.Errorf("%s in %s: %q", id, code, w)
			}
		}
	}
}
