package handlers

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/catalog"
	"github.com/sidecarlab/sidecarlab/web"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/PuerkitoBio/goquery"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

// panelNames are the annotation keys the panel shows, in order.
func panelNames(r response) []string {
	var out []string
	testid(r, "annotations").Find(`.annotation[data-testid^="annotation-"]`).Each(func(_ int, s *goquery.Selection) {
		out = append(out, strings.TrimPrefix(s.AttrOr("data-testid", ""), "annotation-"))
	})
	return out
}

// TestPanelLabFirst: the panel opens with the lab's annotations, each shown once.
func TestPanelLabFirst(t *testing.T) {
	h := newServer(t)
	r := get(t, h, "/")
	names := panelNames(r)
	var labPanel []string // the lab group's annotations, the model's first group
	for _, it := range web.PanelGroups(catalog.DefaultCatalog())[0].Items {
		labPanel = append(labPanel, it.Name)
	}
	if len(labPanel) < 5 || len(names) < len(labPanel) {
		t.Fatalf("panel has %d annotations, the lab's group %d", len(names), len(labPanel))
	}
	for i, want := range labPanel {
		if names[i] != want {
			t.Fatalf("panel position %d is %s, want %s (the lab's annotations first): %v", i, names[i], want, names[:len(labPanel)])
		}
	}
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			t.Errorf("%s is in the panel twice", n)
		}
		seen[n] = true
	}
	if first := testid(r, "annotations").Find("details.group summary").First().Text(); !strings.HasPrefix(first, "lab") {
		t.Errorf("first group is %q, want lab", first)
	}
}

// TestPanelSearch: the search works without JavaScript — the form's Filter redirects to a link
// whose panel holds only the annotations whose key or description matches, any case.
func TestPanelSearch(t *testing.T) {
	h := newServer(t)
	cases := []struct {
		q           string
		want, unwan []string
	}{
		{"OUTBOUNDPORTS", []string{"traffic.sidecar.istio.io/excludeOutboundPorts", "traffic.sidecar.istio.io/includeOutboundPorts"}, []string{"sidecar.istio.io/proxyCPU"}},
		// "drain" is in no key: it matches proxy.istio.io/config through its fields' names.
		{"drain", []string{"proxy.istio.io/config"}, []string{"sidecar.istio.io/inject"}},
		// a description word: proxyCPU's says "CPU".
		{"cpu request", []string{"sidecar.istio.io/proxyCPU"}, []string{"sidecar.istio.io/proxyMemory"}},
	}
	for _, c := range cases {
		t.Run(c.q, func(t *testing.T) {
			p := postForm(t, h, url.Values{"manifest": {testkit.Deployment}, "steps": {"[]"}, "action": {"filter"}, "q": {c.q}})
			if p.status != http.StatusSeeOther {
				t.Fatalf("POST answered %d", p.status)
			}
			loc := p.header.Get("Location")
			r := get(t, h, loc)
			names := panelNames(r)
			for _, w := range c.want {
				if !contains(names, w) {
					t.Errorf("%s missing from %v", w, names)
				}
			}
			for _, u := range c.unwan {
				if contains(names, u) {
					t.Errorf("%s shown for %q", u, c.q)
				}
			}
			if got := testid(r, "annotation-search").AttrOr("value", ""); got != c.q {
				t.Errorf("search box holds %q", got)
			}
			if _, hidden := testid(r, "annotation-no-match").Attr("hidden"); !hidden {
				t.Error("no-match note shown")
			}
		})
	}
	r := get(t, h, "/?q=nosuchthingatall")
	if n := len(panelNames(r)); n != 0 {
		t.Errorf("%d annotations for a query that matches none", n)
	}
	if _, hidden := testid(r, "annotation-no-match").Attr("hidden"); hidden {
		t.Error("no-match note hidden when nothing matches")
	}
	if n := len(panelNames(get(t, h, "/"))); n < 40 {
		t.Errorf("unfiltered panel has %d annotations", n)
	}
}

// clientFilter is what the page's script (filterPanel in static/src/main.js) keeps of an
// unfiltered panel for a query: the annotations whose data-search holds every word typed, lower
// case.
func clientFilter(r response, q string) []string {
	terms := strings.Fields(strings.ToLower(q))
	var out []string
	testid(r, "annotations").Find(`.annotation[data-search]`).Each(func(_ int, s *goquery.Selection) {
		search := s.AttrOr("data-search", "")
		for _, t := range terms {
			if !strings.Contains(search, t) {
				return
			}
		}
		out = append(out, strings.TrimPrefix(s.AttrOr("data-testid", ""), "annotation-"))
	})
	return out
}

// TestPanelSearchInLanguages: the search finds an annotation by our summaries and by each
// language's search words (startup, 起動 and 시작 find hold; ポート and 포트 the port lists;
// memory, メモリ and 메모리 the memory annotations), whatever the page's language, and a word of
// each language that leads nowhere finds nothing. Without JavaScript (?q=) the server keeps
// exactly what the script keeps of the full panel from the same data-search text.
func TestPanelSearchInLanguages(t *testing.T) {
	h := newServer(t)
	const (
		config  = "proxy.istio.io/config"
		native  = "sidecar.istio.io/nativeSidecar"
		cpu     = "sidecar.istio.io/proxyCPU"
		memory  = "sidecar.istio.io/proxyMemory"
		exclOut = "traffic.sidecar.istio.io/excludeOutboundPorts"
		inclIn  = "traffic.sidecar.istio.io/includeInboundPorts"
	)
	full := map[string]response{}
	for _, c := range []struct {
		q, accept    string
		want, unwant []string
	}{
		{"startup", "", []string{config, native}, []string{cpu, exclOut}},
		{"起動", "ja", []string{config, native}, []string{cpu, exclOut}},
		{"시작", "ko", []string{config, native}, []string{cpu, exclOut}},
		{"起動", "", []string{config, native}, []string{cpu}}, // any language's words, on any page
		{"hold", "", []string{config}, []string{cpu}},
		{"起動待ち", "ja", []string{config}, []string{native, cpu}}, // the lab's chip
		{"시작 대기", "ko", []string{config}, []string{native, cpu}},
		{"ports", "", []string{exclOut, inclIn}, []string{cpu, config}},
		{"ポート", "ja", []string{exclOut, inclIn}, []string{cpu, config}},
		{"포트", "ko", []string{exclOut, inclIn}, []string{cpu, config}},
		{"memory", "", []string{memory}, []string{cpu}},
		{"メモリ", "ja", []string{memory}, []string{cpu}},
		{"메모리", "ko", []string{memory}, []string{cpu}},
		{"resources", "", []string{cpu, memory}, []string{config}},
		{"nosuchthingatall", "", nil, []string{config, cpu}},
		{"存在しない語", "ja", nil, []string{config, cpu}},
		{"없는단어", "ko", nil, []string{config, cpu}},
	} {
		t.Run(c.q+"/"+c.accept, func(t *testing.T) {
			r := getIn(t, h, "/?q="+url.QueryEscape(c.q), c.accept)
			if r.status != http.StatusOK {
				t.Fatalf("status %d", r.status)
			}
			names := panelNames(r)
			for _, w := range c.want {
				if !contains(names, w) {
					t.Errorf("%s missing from %v", w, names)
				}
			}
			for _, u := range c.unwant {
				if contains(names, u) {
					t.Errorf("%s shown for %q", u, c.q)
				}
			}
			if _, hidden := testid(r, "annotation-no-match").Attr("hidden"); hidden != (len(c.want) > 0) {
				t.Errorf("no-match note hidden=%v with %d matches", hidden, len(names))
			}
			if _, ok := full[c.accept]; !ok {
				full[c.accept] = getIn(t, h, "/", c.accept)
			}
			if js := clientFilter(full[c.accept], c.q); !slices.Equal(js, names) {
				t.Errorf("the script keeps %v, the server %v", js, names)
			}
		})
	}
	noMissing(t)
}

// TestProxyConfigEditorFromSchema: the editor's fields and their inputs come from ProxyConfig's
// descriptor, with docs from proxy.proto.
func TestProxyConfigEditorFromSchema(t *testing.T) {
	h := newServer(t)
	r := get(t, h, "/")
	ed := testid(r, "pc-editor")
	if ed.Length() != 1 {
		t.Fatalf("%d editors", ed.Length())
	}
	if ed.Closest(`[data-testid="annotation-proxy.istio.io/config"]`).Length() != 1 {
		t.Fatal("the editor is not in proxy.istio.io/config's entry")
	}
	cases := []struct{ field, kind, input, doc string }{
		{"holdApplicationUntilProxyStarts", "bool", "select", "delay application startup"},
		{"terminationDrainDuration", "duration", "input[type=text]", "SIGTERM"},
		{"concurrency", "integer", "input[type=number]", "worker threads"},
		{"interceptionMode", "enum", "select", ""},
		{"proxyMetadata", "yaml", "textarea", ""},
	}
	for _, c := range cases {
		row := ed.Find(`[data-testid="pc-field-` + c.field + `"]`)
		if row.Length() != 1 {
			t.Errorf("%s: %d rows", c.field, row.Length())
			continue
		}
		if k := row.AttrOr("data-kind", ""); k != c.kind {
			t.Errorf("%s: kind %q, want %q", c.field, k, c.kind)
		}
		if row.Find(c.input+`[name="pc:`+c.field+`"]`).Length() != 1 {
			t.Errorf("%s: no %s input", c.field, c.input)
		}
		if doc := testid(r, "pc-doc-"+c.field).Text(); !strings.Contains(doc, c.doc) {
			t.Errorf("%s: doc %q lacks %q", c.field, doc, c.doc)
		}
	}
	if got := ed.Find(`select[name="pc:interceptionMode"] option`).Length(); got != 3 {
		t.Errorf("interceptionMode has %d options, want REDIRECT, TPROXY, NONE", got)
	}
}

// TestProxyConfigDocsRendered: the editor shows proxy.proto's docs as what their Markdown means:
// links to Istio's and Envoy's docs are links (to http(s) addresses, opening in a new tab), code
// is <code>, the stats matcher's example is a code block, and no "](" or backtick is left as text.
// A long doc is cut where a sentence ends, the rest behind "more"; nothing is lost.
func TestProxyConfigDocsRendered(t *testing.T) {
	h := newServer(t)
	r := get(t, h, "/")
	ed := testid(r, "pc-editor")
	links := map[string]string{}
	ed.Find(".pc-doc a").Each(func(_ int, a *goquery.Selection) {
		links[a.Text()] = a.AttrOr("href", "")
		if a.AttrOr("target", "") != "_blank" || a.AttrOr("rel", "") != "noopener" {
			t.Errorf("link %q: target %q rel %q", a.Text(), a.AttrOr("target", ""), a.AttrOr("rel", ""))
		}
	})
	for text, href := range map[string]string{
		"service mesh":          "https://istio.io/docs/reference/glossary/#service-mesh",
		"runtime configuration": "https://www.envoyproxy.io/docs/envoy/latest/intro/arch_overview/operations/runtime",
		"Access Log Service":    "https://www.envoyproxy.io/docs/envoy/latest/api-v2/config/accesslog/v2/als.proto",
	} {
		if links[text] != href {
			t.Errorf("link %q goes to %q, want %q (links: %v)", text, links[text], href, links)
		}
	}
	for text, href := range links {
		if !strings.HasPrefix(href, "https://") && !strings.HasPrefix(href, "http://") {
			t.Errorf("link %q goes to %q", text, href)
		}
	}
	if got := testid(r, "pc-doc-drainDuration").Find("code").Text(); got != "45s" {
		t.Errorf("drainDuration's code: %q", got)
	}
	if got := testid(r, "pc-doc-proxyStatsMatcher").Find("pre code").Text(); !strings.HasPrefix(got, "proxyStatsMatcher:\n  inclusionRegexps:\n") {
		t.Errorf("proxyStatsMatcher's example: %q", got)
	}
	cut := 0
	for _, f := range catalog.ProxyConfigFields() {
		d := testid(r, "pc-doc-"+f.Name)
		if f.Doc == "" {
			continue
		}
		if d.Length() != 1 {
			t.Errorf("%s: %d docs", f.Name, d.Length())
			continue
		}
		prose := d.Clone()
		prose.Find("code, summary").Remove()
		if text := prose.Text(); strings.Contains(text, "](") || strings.Contains(text, "`") {
			t.Errorf("%s: Markdown left as text: %q", f.Name, text)
		}
		if d.Find("p[lang=en], pre[lang=en]").Length() != d.Find("p, pre").Length() {
			t.Errorf("%s: a paragraph of Istio's English doc is not marked lang=en", f.Name)
		}
		more := testid(r, "pc-more-"+f.Name)
		if more.Length() == 0 {
			continue
		}
		cut++
		lead := strings.TrimSpace(d.Children().Not("details").Last().Text())
		rest := strings.TrimSpace(more.Children().Not("summary").First().Text())
		if !strings.HasSuffix(lead, ".") && !strings.HasSuffix(lead, ":") || rest == "" {
			t.Errorf("%s: cut between %q and %q, not where a sentence ends", f.Name, lead[max(0, len(lead)-30):], rest[:min(30, len(rest))])
		}
		var shown []string
		d.Find("p, pre").Each(func(_ int, b *goquery.Selection) { shown = append(shown, b.Text()) })
		if got, want := strings.Join(strings.Fields(strings.Join(shown, " ")), " "), strings.Join(strings.Fields(plainDoc(f.Doc)), " "); got != want {
			t.Errorf("%s: lead and more read\n%q\nwant\n%q", f.Name, got, want)
		}
	}
	if cut == 0 {
		t.Error("no doc is long enough to be cut: the cut is not tested on Istio's docs")
	}
}

// plainDoc is a doc's words without its Markdown, as the test expects them shown.
func plainDoc(doc string) string {
	doc = regexp.MustCompile("(?m)^```.*$").ReplaceAllString(doc, "")
	doc = regexp.MustCompile(`\[([^\]]+)\]\([^)]*\)|\[([^\]]+)\]\[[^\]]*\]`).ReplaceAllString(doc, "$1$2")
	doc = regexp.MustCompile("`([^`]*)`").ReplaceAllString(doc, "$1")
	return regexp.MustCompile(`(^|[^\w])_([^_ ][^_]*)_([^\w]|$)`).ReplaceAllString(doc, "$1$2$3")
}

// configField posts the editor's Add for one field and follows the redirect.
func configField(t *testing.T, h http.Handler, manifest string, steps []input.Step, field, value string) response {
	t.Helper()
	js, _ := json.Marshal(steps)
	p := postForm(t, h, url.Values{"manifest": {manifest}, "steps": {string(js)}, "pcset": {field}, "pc:" + field: {value}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("POST answered %d:\n%s", p.status, p.body)
	}
	return get(t, h, p.header.Get("Location"))
}

func formSteps(t *testing.T, r response) []input.Step {
	t.Helper()
	var steps []input.Step
	if err := json.Unmarshal([]byte(testid(r, "steps").AttrOr("value", "")), &steps); err != nil {
		t.Fatal(err)
	}
	return steps
}

// TestProxyConfigEditorMerges: concurrency, then hold through the editor — the second step
// carries both, and nothing is reported as replaced.
func TestProxyConfigEditorMerges(t *testing.T) {
	h := newServer(t)
	r := configField(t, h, testkit.Deployment, nil, "concurrency", "2")
	steps := formSteps(t, r)
	if len(steps) != 1 || steps[0].Value != "concurrency: 2" {
		t.Fatalf("first step %+v", steps)
	}
	r = configField(t, h, testkit.Deployment, steps, "holdApplicationUntilProxyStarts", "true")
	steps = formSteps(t, r)
	want := input.Step{Key: "proxy.istio.io/config", Value: "concurrency: 2\nholdApplicationUntilProxyStarts: true"}
	if len(steps) != 2 || steps[1] != want {
		t.Fatalf("steps %+v, want the second %+v", steps, want)
	}
	if !contains(changes(r), "added spec.template.spec.containers[istio-proxy].lifecycle") {
		t.Errorf("hold had no effect: %v", changes(r))
	}
	if n := testid(r, "replaces").Length(); n != 0 {
		t.Errorf("%d replacement notices for a merge", n)
	}
	// A bad value is refused with words, before any step is added.
	p := postForm(t, h, url.Values{"manifest": {testkit.Deployment}, "steps": {"[]"}, "pcset": {"terminationDrainDuration"}, "pc:terminationDrainDuration": {"soon"}})
	if p.status != http.StatusUnprocessableEntity && p.status != http.StatusBadRequest {
		t.Fatalf("bad duration answered %d", p.status)
	}
	if !strings.Contains(p.body, "30s") {
		t.Error("the refusal does not say how to write a duration")
	}
}

// TestProxyConfigEditorStartsFromManifest: with no step on the annotation, the editor merges into
// the pasted manifest's pod template value.
func TestProxyConfigEditorStartsFromManifest(t *testing.T) {
	h := newServer(t)
	m := strings.Replace(testkit.Deployment, "      labels:\n", "      annotations:\n        proxy.istio.io/config: 'concurrency: 3'\n      labels:\n", 1)
	r := configField(t, h, m, nil, "terminationDrainDuration", "20s")
	if steps := formSteps(t, r); len(steps) != 1 || steps[0].Value != "concurrency: 3\nterminationDrainDuration: 20s" {
		t.Fatalf("steps %+v", steps)
	}
}

// TestProxyConfigReplacementNotice: a plain second proxy.istio.io/config step replaces the first's
// value; the field diff says which fields are gone.
func TestProxyConfigReplacementNotice(t *testing.T) {
	h := newServer(t)
	first := []input.Step{{Key: "proxy.istio.io/config", Value: "concurrency: 2\nterminationDrainDuration: 20s"}}
	_, r := addStep(t, h, testkit.Deployment, first, "proxy.istio.io/config", "holdApplicationUntilProxyStarts: true")
	n := testid(r, "diff-step-2").Find(`[data-testid="replaces"]`)
	want := "This step replaces the whole proxy.istio.io/config: concurrency, terminationDrainDuration are no longer set."
	if n.Length() != 1 || strings.TrimSpace(n.Text()) != want {
		t.Fatalf("notice %q, want %q", n.Text(), want)
	}
	if testid(r, "diff-step-1").Find(`[data-testid="replaces"]`).Length() != 0 {
		t.Error("notice on the first step, which replaced nothing")
	}
	// Keeping every field (a changed value) is no replacement.
	_, r = addStep(t, h, testkit.Deployment, first, "proxy.istio.io/config", "concurrency: 4\nterminationDrainDuration: 20s")
	if testid(r, "replaces").Length() != 0 {
		t.Error("notice when nothing is dropped")
	}
}

// TestDefaultConfigNotice: the lab's hold step on a mesh whose defaultConfig already holds changes
// less than it sets, and the step says why, with the field; on the default installation, and on
// the steps that set nothing the mesh gives, it says nothing.
func TestDefaultConfigNotice(t *testing.T) {
	h := newServer(t)
	steps := labAnnotations[:3]
	const holdsSet = "meshConfig.defaultConfig.holdApplicationUntilProxyStarts=true"
	def, err := eng.Install(t.Context(), engine.InstallOptions{Set: []string{holdsSet}})
	if err != nil {
		t.Fatal(err)
	}
	want := "The mesh config's defaultConfig already sets holdApplicationUntilProxyStarts: true, and Istio merges this annotation over it: for the proxy that is no change, so this step changes less than it sets (meshConfig.defaultConfig)."
	for _, c := range []struct {
		name    string
		install engine.InstallOptions
		notice  bool
	}{
		{"default installation", engine.InstallOptions{}, false},
		{"install option", engine.InstallOptions{Set: []string{holdsSet}}, true},
		{"pasted mesh config", engine.InstallOptions{Mesh: engine.OwnMesh{MeshConfig: def.MeshConfigYAML}}, true},
	} {
		st := api.State{Istio: engine.Version().Istio, Manifest: testkit.Deployment, Steps: steps, Settings: engine.Settings{Install: c.install}}
		r := get(t, h, stateLink(t, st))
		if r.status != 200 {
			t.Fatalf("%s: %d", c.name, r.status)
		}
		n := testid(r, "diff-step-3").Find(`[data-testid="default-config-gives"]`)
		if got := strings.TrimSpace(n.Text()); (c.notice && got != want) || (!c.notice && n.Length() != 0) {
			t.Errorf("%s: notice %q", c.name, got)
		}
		if testid(r, "default-config-gives").Length() > 1 {
			t.Errorf("%s: the notice on another step than the hold's", c.name)
		}
		// Without the notice's reason, the hold's step adds the postStart hook.
		if hold := strings.Contains(testid(r, "diff-step-3").Text(), "postStart"); hold == c.notice {
			t.Errorf("%s: the hold step adds postStart: %v", c.name, hold)
		}
	}
}
