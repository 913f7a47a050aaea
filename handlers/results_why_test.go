package handlers

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
	"github.com/sidecarlab/sidecarlab/permalink"
)

// TestWhyPageWithoutJavaScript: each added or changed field of the field diff has a button that
// asks why it is there (its row, document and path; the state once on the page, so a kept row
// asks right from any state, and the page does not grow by the state on every row); the why
// page, served as HTML alone, marks the template lines that wrote the field and says which
// branches ran and what they read, with the back link at the row's step; in Japanese, in
// Japanese.
func TestWhyPageWithoutJavaScript(t *testing.T) {
	h := newServer(t)
	cpu := input.Step{Key: "sidecar.istio.io/proxyCPU", Value: "250m"}
	st := api.State{Manifest: testkit.Deployment, Steps: []input.Step{cpu, {Key: "sidecar.istio.io/proxyMemory", Value: "300Mi"}}}
	page := get(t, h, "/?s="+permalink.Encode(st))
	if page.status != http.StatusOK {
		t.Fatalf("%d", page.status)
	}
	field, ok := page.doc.Find(`[data-testid="diff-step-1"] tr[data-path="spec.template.spec.containers[istio-proxy].resources.requests.cpu"] [data-testid="why-link"]`).Attr("value")
	if !ok || field != "1:1:spec.template.spec.containers[istio-proxy].resources.requests.cpu" {
		t.Fatalf("the CPU request's change asks why with %q", field)
	}
	// The state is on the page once, for every button (form why-form).
	states := page.doc.Find(`input[form="why-form"][name="s"]`)
	enc, _ := states.Attr("value")
	if states.Length() != 1 || enc != permalink.Encode(st) || page.doc.Find(`form#why-form[action="/why"][method="get"]`).Length() != 1 {
		t.Fatalf("%d state fields, form %d", states.Length(), page.doc.Find(`form#why-form`).Length())
	}
	if page.doc.Find(`tr[data-kind="removed"] [data-testid="why-link"]`).Length() != 0 {
		t.Error("a removed field asks why it is there")
	}
	link := "/why?" + url.Values{"s": {enc}, "field": {field}}.Encode()
	why := get(t, h, link)
	if why.status != http.StatusOK {
		t.Fatalf("%d %s", why.status, why.body)
	}
	wrote := why.doc.Find(`[data-testid="why-lines"] tr.wrote`).Text()
	says := why.doc.Find(`[data-testid="why-says"]`).Text()
	if !strings.Contains(wrote, "sidecar.istio.io/proxyCPU") || !strings.Contains(says, "template sidecar, in resources") {
		t.Errorf("wrote %q, says %q", wrote, says)
	}
	if c := why.doc.Find(`[data-testid="why-conditions"]`).Text(); !strings.Contains(c, "isset .ObjectMeta.Annotations `sidecar.istio.io/proxyCPU`") || !strings.Contains(c, "which ran") {
		t.Errorf("conditions %q", c)
	}
	if in := why.doc.Find(`[data-testid="why-inputs"]`).Text(); !strings.Contains(in, "the annotation sidecar.istio.io/proxyCPU = 250m") {
		t.Errorf("inputs %q", in)
	}
	if back, _ := why.doc.Find(`[data-testid="why-back"]`).Attr("href"); !strings.Contains(back, "step=1") {
		t.Errorf("back to %s", back)
	}
	ja := get(t, h, link+"&lang=ja")
	if got := ja.doc.Find(`[data-testid="why-says"]`).Text(); !strings.Contains(got, "が書いた") {
		t.Errorf("ja: %q", got)
	}
}

// TestWhyPageRefusals: a step past the state's, a document that is not a number, a path of
// more than 1 KiB and a field the document lacks are refused, each with its status; a field
// there is not.
func TestWhyPageRefusals(t *testing.T) {
	h := newServer(t)
	s := "/why?s=" + permalink.Encode(api.State{Manifest: testkit.Deployment})
	for q, want := range map[string]int{
		"&step=2": http.StatusBadRequest, "&doc=x": http.StatusBadRequest, "&doc=0": http.StatusBadRequest,
		"&path=" + strings.Repeat("a", 1025): http.StatusBadRequest,
		"&path=spec.nothing":                 http.StatusNotFound,
		"&doc=2":                             http.StatusNotFound,
		"&path=spec.template.spec.containers[istio-proxy].image":      http.StatusOK,
		"&field=0:1:spec.template.spec.containers[istio-proxy].image": http.StatusOK,
		"&field=0:spec":   http.StatusBadRequest,
		"&field=9:1:spec": http.StatusBadRequest,
	} {
		if r := get(t, h, s+q); r.status != want {
			t.Errorf("%.60s: %d, want %d", q, r.status, want)
		}
	}
}

// TestWhyTryIt: a field written in the else of a branch that reads only annotations offers the
// step that takes it, once the server has seen that the step changes the field: the proxy's
// default CPU request offers sidecar.istio.io/proxyCPU with the catalog's example, and the link
// is the playground with that step added; a field no step changes offers none.
func TestWhyTryIt(t *testing.T) {
	h := newServer(t)
	s := "/why?s=" + permalink.Encode(api.State{Manifest: testkit.Deployment})
	r := get(t, h, s+"&path="+url.QueryEscape("spec.template.spec.containers[istio-proxy].resources.requests.cpu"))
	try := r.doc.Find(`[data-testid="why-try"]`)
	if try.Length() != 1 || !strings.Contains(try.Text(), "sidecar.istio.io/proxyCPU=") {
		t.Fatalf("try: %d %q", try.Length(), try.Text())
	}
	u, _ := url.Parse(try.AttrOr("href", ""))
	st, err := permalink.Decode(u.Query().Get("s"))
	if err != nil || len(st.Steps) != 1 || st.Steps[0].Key != "sidecar.istio.io/proxyCPU" || u.Query().Get("step") != "1" {
		t.Fatalf("the try link: %+v %v", st.Steps, err)
	}
	if r := get(t, h, s+"&path="+url.QueryEscape("spec.template.spec.containers[istio-proxy].image")); r.doc.Find(`[data-testid="why-try"]`).Length() != 0 {
		t.Error("the proxy's image offers a step")
	}
}

// TestSameProvenance: a leaf is written alike when it is there with the same value, lines and
// branches taken; another value, another branch taken or no leaf at all is a change.
func TestSameProvenance(t *testing.T) {
	p := engine.Provenance{Path: "a", Value: "1", Lines: []int{3}, Conditions: []engine.ProvenanceCondition{{Line: 2, Taken: false}}}
	same := p
	other := p
	other.Value = "2"
	flipped := p
	flipped.Conditions = []engine.ProvenanceCondition{{Line: 2, Taken: true}}
	elsewhere := p
	elsewhere.Path = "b"
	for name, c := range map[string]struct {
		now  []engine.Provenance
		want bool
	}{
		"alike": {[]engine.Provenance{elsewhere, same}, true}, "another value": {[]engine.Provenance{other}, false},
		"the branch taken": {[]engine.Provenance{flipped}, false}, "gone": {[]engine.Provenance{elsewhere}, false},
	} {
		if got := sameProvenance(p, c.now); got != c.want {
			t.Errorf("%s: %v, want %v", name, got, c.want)
		}
	}
}

// TestWhyFromYAMLAndTimeline: the YAML view asks why about a line (its number, at the shown
// step), and the why page explains the field on that line of the output as the view shows it;
// a line past the output or 0 is refused. The timeline asks why about a step: its page explains
// the fields that step added or changed in its first document, and only those.
func TestWhyFromYAMLAndTimeline(t *testing.T) {
	h := newServer(t)
	cpu := input.Step{Key: "sidecar.istio.io/proxyCPU", Value: "250m"}
	st := api.State{Manifest: testkit.Deployment + "---\n" + testkit.Deployment, Steps: []input.Step{cpu}}
	page := get(t, h, "/?tab=yaml&s="+permalink.Encode(st))
	if page.status != http.StatusOK {
		t.Fatalf("%d", page.status)
	}
	ask := page.doc.Find(`[data-testid="why-line-ask"][form="why-form"]`)
	if ask.Length() != 1 || ask.AttrOr("value", "") != "1" || page.doc.Find(`input[form="why-form"][name="line"]`).Length() != 1 {
		t.Fatalf("the YAML view's why form: %d buttons", ask.Length())
	}
	enc := page.doc.Find(`input[form="why-form"][name="s"]`).AttrOr("value", "")
	output := page.doc.Find(`[data-testid="injected-yaml"]`).Text()
	lines := strings.Split(output, "\n")
	// The CPU request of the second document's proxy: the output's line with it after the second "---".
	want, seps := 0, 0
	for i, l := range lines {
		if l == "---" {
			seps++
		}
		if seps == 1 && strings.TrimSpace(l) == "cpu: 250m" {
			want = i + 1
			break
		}
	}
	if want == 0 {
		t.Fatalf("no CPU request in the second document:\n%s", output)
	}
	why := get(t, h, "/why?"+url.Values{"s": {enc}, "step": {"1"}, "line": {strconv.Itoa(want)}}.Encode())
	if why.status != http.StatusOK {
		t.Fatalf("line %d: %d %s", want, why.status, why.body)
	}
	if p := testid(why, "why-path").Text(); p != "spec.template.spec.containers[istio-proxy].resources.requests.cpu" || !strings.Contains(why.doc.Find(".muted").First().Text(), "2") {
		t.Errorf("line %d asks about %q, %q", want, p, why.doc.Find(".muted").First().Text())
	}
	for _, bad := range []string{"0", strconv.Itoa(len(lines) + 5)} {
		if r := get(t, h, "/why?"+url.Values{"s": {enc}, "step": {"1"}, "line": {bad}}.Encode()); r.status != http.StatusBadRequest && r.status != http.StatusNotFound {
			t.Errorf("line %s: %d", bad, r.status)
		}
	}
	tl := get(t, h, "/?tab=timeline&s="+permalink.Encode(st))
	step, ok := tl.doc.Find(`[data-testid="why-step-1"][form="why-form"]`).Attr("value")
	if !ok || step != "1" {
		t.Fatalf("the timeline's step 1 asks why with %q", step)
	}
	whyStep := get(t, h, "/why?"+url.Values{"s": {enc}, "changes": {"1"}}.Encode())
	if whyStep.status != http.StatusOK {
		t.Fatalf("changes: %d %s", whyStep.status, whyStep.body)
	}
	var paths []string
	whyStep.doc.Find(`.why-paths code`).Each(func(_ int, s *goquery.Selection) { paths = append(paths, s.Text()) })
	if !slices.Equal(paths, []string{`spec.template.metadata.annotations["sidecar.istio.io/proxyCPU"]`, "spec.template.spec.containers[istio-proxy].resources.requests.cpu", "spec.template.spec.initContainers[istio-init].resources.requests.cpu"}) || !strings.Contains(testid(whyStep, "why-path").Text(), "sidecar.istio.io/proxyCPU=250m") {
		t.Errorf("step 1 changed %q (%q)", paths, testid(whyStep, "why-path").Text())
	}
}
