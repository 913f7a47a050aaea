package handlers

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/go-cmp/cmp"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
	"github.com/sidecarlab/sidecarlab/web"
)

// The lab's typo case, pasted: holdApplicationUntilProxyStart (no s) inside proxy.istio.io/config.
var typoBlock = strings.Replace(testkit.Deployment, "      labels:\n        app: web\n    spec", `      annotations:
        proxy.istio.io/config: |
          concurrency: 2
          holdApplicationUntilProxyStart: true
      labels:
        app: web
    spec`, 1)

// lineOf is the 1-based line of the first line of text containing s.
func lineOf(t *testing.T, text, s string) int {
	t.Helper()
	for i, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			return i + 1
		}
	}
	t.Fatalf("%q is not in the text", s)
	return 0
}

// TestPitfallsWhereTheEyeIs: a pitfall about something pasted is marked on its line of the
// manifest (the editor reads data-findings; the same words are under the editor), and a banner
// above the results names the pitfalls and opens their tab. A pitfall from a step has no line:
// the banner alone. A manifest without a pitfall has neither.
func TestPitfallsWhereTheEyeIs(t *testing.T) {
	h := newServer(t)
	service := "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  ports:\n  - port: 80\n---\n"
	onDeployment := strings.Replace(testkit.Deployment, "  name: web\nspec", "  name: web\n  annotations:\n    sidecar.istio.io/proxyCPU: 300m\nspec", 1)
	typoInline := strings.Replace(testkit.Deployment, "      labels:\n        app: web\n    spec", "      annotations:\n        proxy.istio.io/config: '{holdApplicationUntilProxyStart: true}'\n      labels:\n        app: web\n    spec", 1)
	cases := []struct {
		name     string
		manifest string
		steps    []input.Step
		marks    []int  // the marked lines
		check    string // a finding the banner counts
		gist     string // in the banner
	}{
		{"typo in a literal block: the field's line", typoBlock, nil, []int{lineOf(t, typoBlock, "holdApplicationUntilProxyStart")}, "unknown-proxy-config-field", "holdApplicationUntilProxyStart"},
		{"typo in a one-line value: the key's line", typoInline, nil, []int{lineOf(t, typoInline, "proxy.istio.io/config")}, "unknown-proxy-config-field", "holdApplicationUntilProxyStart"},
		{"typo from a step: the banner alone", testkit.Deployment, []input.Step{{Key: "proxy.istio.io/config", Value: "holdApplicationUntilProxyStart: true"}}, nil, "unknown-proxy-config-field", "holdApplicationUntilProxyStart"},
		{"annotation on the Deployment's metadata", onDeployment, nil, []int{lineOf(t, onDeployment, "proxyCPU")}, "workload-metadata-annotation", "Deployment's own metadata"},
		{"the same after a Service: lines count in the whole manifest", service + onDeployment, nil, []int{lineOf(t, service+onDeployment, "proxyCPU")}, "workload-metadata-annotation", "Deployment's own metadata"},
		{"a pasted annotation a step replaced is the step's", typoBlock, []input.Step{{Key: "proxy.istio.io/config", Value: "holdApplicationUntilProxyStart: false"}}, nil, "unknown-proxy-config-field", "holdApplicationUntilProxyStart"},
		{"no pitfall", testkit.Deployment, nil, nil, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := get(t, h, view{state: api.State{Manifest: c.manifest, Steps: c.steps}, step: -1}.permalink())
			var marks []web.Mark
			if err := json.Unmarshal([]byte(testid(r, "manifest").AttrOr("data-findings", "")), &marks); err != nil {
				t.Fatalf("data-findings: %v", err)
			}
			var lines, shown []int
			for _, m := range marks {
				lines = append(lines, m.Line)
				if m.Message == "" || m.Severity == "" {
					t.Errorf("mark %+v without words", m)
				}
			}
			testid(r, "manifest-finding").Each(func(_ int, s *goquery.Selection) {
				n, _ := strconv.Atoi(s.AttrOr("data-line", ""))
				shown = append(shown, n)
			})
			if d := cmp.Diff(c.marks, lines); d != "" {
				t.Errorf("marked lines (-want +got)\n%s", d)
			}
			if d := cmp.Diff(c.marks, shown); d != "" {
				t.Errorf("lines named under the editor (-want +got)\n%s", d)
			}
			banner := testid(r, "pitfall-banner")
			n := testid(r, "findings").Find("li").Length()
			if c.check == "" {
				if n != 0 || banner.Length() != 0 {
					t.Fatalf("%d findings, banner %q", n, banner.Text())
				}
				return
			}
			if testid(r, "finding-"+c.check).Length() == 0 {
				t.Fatalf("no %s finding", c.check)
			}
			text := strings.Join(strings.Fields(banner.Text()), " ")
			if banner.Length() != 1 || banner.AttrOr("role", "") != "status" || !strings.HasPrefix(text, strconv.Itoa(n)+" pitfall") || !strings.Contains(text, c.gist) {
				t.Errorf("banner %q, want %d pitfall(s) naming %q", text, n, c.gist)
			}
			link, _ := url.Parse(banner.Find("a").AttrOr("href", ""))
			if link.Query().Get("tab") != "pitfalls" || link.Query().Get("s") == "" {
				t.Errorf("the banner links %q, not the Pitfalls tab of this view", link)
			}
			if got := get(t, h, link.String()); testid(got, "panel-pitfalls").AttrOr("hidden", "none") != "none" {
				t.Error("the banner's link does not open the Pitfalls tab")
			}
		})
	}
}

// TestVerdictGoodness: the page colours a verdict by whether its answer is good, not by yes/no:
// the lab's default injection lets the app send traffic before the proxy is ready (YES, bad);
// the hold step stops that (NO, good); a classic Job does not complete (NO, bad).
func TestVerdictGoodness(t *testing.T) {
	h := newServer(t)
	lp := newLabPath()
	cases := []struct {
		href, verdict, answer, goodness string
	}{
		{lp.steps[0].href, "app-before-proxy", "yes", "bad"},
		{lp.steps[3].href, "app-before-proxy", "no", "good"},
		{view{state: api.State{Manifest: jobYAML}, step: -1}.permalink(), "job-completes", "no", "bad"},
		{view{state: api.State{Manifest: jobYAML, Settings: engine.Settings{Mode: engine.ModeNative}}, step: -1}.permalink(), "job-completes", "yes", "good"},
	}
	for _, c := range cases {
		u, _ := url.Parse(c.href)
		q := u.Query()
		q.Set("tab", "lifecycle")
		r := get(t, h, "/?"+q.Encode())
		v := testid(r, "verdict-"+c.verdict).First()
		if v.AttrOr("data-answer", "") != c.answer || v.AttrOr("data-goodness", "") != c.goodness || !v.HasClass("g-"+c.goodness) {
			t.Errorf("%s: answer %q goodness %q, want %s and %s", c.verdict, v.AttrOr("data-answer", ""), v.AttrOr("data-goodness", ""), c.answer, c.goodness)
		}
	}
}

// TestDuplicateKeyMarked: an image written twice is marked on the line of the one the reader
// keeps (the last), and the words name both lines and the value kept.
func TestDuplicateKeyMarked(t *testing.T) {
	h := newServer(t)
	m := strings.Replace(testkit.Deployment, "        image: ", "        image: nginx:1.26\n        image: ", 1)
	if m == testkit.Deployment {
		t.Fatal("the test manifest has no image")
	}
	first := lineOf(t, m, "image: nginx:1.26")
	r := get(t, h, stateLink(t, api.State{Manifest: m}))
	var marks []web.Mark
	if err := json.Unmarshal([]byte(testid(r, "manifest").AttrOr("data-findings", "")), &marks); err != nil {
		t.Fatal(err)
	}
	var found *web.Mark
	for i := range marks {
		if strings.Contains(marks[i].Message, "written more than once") {
			found = &marks[i]
		}
	}
	if found == nil || found.Line != first+1 || !strings.Contains(found.Message, "lines "+strconv.Itoa(first)+", "+strconv.Itoa(first+1)) {
		t.Fatalf("marks %+v, want the duplicate on line %d", marks, first+1)
	}
	if r := get(t, h, stateLink(t, api.State{Manifest: testkit.Deployment})); strings.Contains(r.body, "written more than once") {
		t.Error("a manifest without a duplicate is marked")
	}
}
