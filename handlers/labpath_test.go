package handlers

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/diff"
	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/engine/provenance"
	"github.com/sidecarlab/sidecarlab/i18n"

	"github.com/google/go-cmp/cmp"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
	"github.com/sidecarlab/sidecarlab/permalink"
)

// labChips are the hrefs of the strip's chips, 1 to 10, and which one carries aria-current.
func labChips(t *testing.T, r response) (hrefs []string, current int) {
	t.Helper()
	for n := 1; ; n++ {
		s := testid(r, "lab-"+strconv.Itoa(n))
		if s.Length() == 0 {
			break
		}
		hrefs = append(hrefs, s.AttrOr("href", ""))
		if v, ok := s.Attr("aria-current"); ok {
			if v != "step" || current != 0 {
				t.Fatalf("chip %d: aria-current=%q (current so far: %d)", n, v, current)
			}
			current = n
		}
	}
	return hrefs, current
}

// stepsOf is the steps a page's form carries.
func stepsOf(t *testing.T, r response) string {
	t.Helper()
	return testid(r, "steps").AttrOr("value", "")
}

// TestLabPath: the strip is the lab's path — the lab's workload with each annotation added to
// the previous ones, then the Job two ways (the compare page, which keeps the strip), then the
// batch, the Cluster steps and, last, the workload in ambient (the /ambient page) — and every view of a step marks its chip, says what to look for, and links the steps
// before and after it.
func TestLabPath(t *testing.T) {
	h := newServer(t)
	home := get(t, h, "/")
	hrefs, cur := labChips(t, home)
	if len(hrefs) != 11 {
		t.Fatalf("%d lab steps, want 11", len(hrefs))
	}
	if cur != 1 {
		t.Errorf("the home page (the lab's workload, no annotation) marks chip %d, want 1", cur)
	}
	for i, href := range hrefs {
		n := i + 1
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			r := get(t, h, href)
			if r.status != http.StatusOK {
				t.Fatalf("lab step %d: %d", n, r.status)
			}
			_, cur := labChips(t, r)
			if cur != n {
				t.Fatalf("step %d's page marks chip %d", n, cur)
			}
			if look := testid(r, "lab-look").Text(); !strings.Contains(look, "what to look for") || len(look) < 120 {
				t.Errorf("what to look for: %q", look)
			}
			prev, next := testid(r, "lab-prev").AttrOr("href", ""), testid(r, "lab-next").AttrOr("href", "")
			if wantPrev := at(hrefs, i-1); prev != wantPrev {
				t.Errorf("previous %q, want %q", prev, wantPrev)
			}
			if wantNext := at(hrefs, i+1); next != wantNext {
				t.Errorf("next %q, want %q", next, wantNext)
			}
			if n <= 6 {
				// Cumulative: chip n carries the lab's first n-1 annotations.
				want := "[]"
				if n > 1 {
					want = mustJSON(t, labAnnotations[:n-1])
				}
				if got := stepsOf(t, r); got != want {
					t.Errorf("steps %s, want %s", got, want)
				}
			}
			look := testid(r, "lab-look").Text()
			switch n {
			case 4:
				ch := changes(r)
				for _, want := range []string{"moved spec.template.spec.containers[istio-proxy]", "added spec.template.spec.containers[istio-proxy].lifecycle"} {
					if !contains(ch, want) {
						t.Errorf("the hold step does not show %q: %v", want, ch)
					}
				}
				if len(ch) > 4 {
					t.Errorf("the hold step shows %d changes, want only the hold's: %v", len(ch), ch)
				}
				if !strings.Contains(look, "pilot-agent wait") {
					t.Errorf("hold: %q", look)
				}
			case 7:
				if testid(r, "compare").Length() != 1 {
					t.Error("step 7 is not the compare page")
				}
				if !strings.Contains(look, "restartPolicy: Always") || !strings.Contains(look, "never completes") {
					t.Errorf("Job two ways: %q", look)
				}
			case 8:
				if n := testid(r, "batch-row").Length(); n != 8 {
					t.Errorf("the batch step shows %d rows", n)
				}
			case 9:
				if testid(r, "verdict-not-injected").Length() != 1 || testid(r, "settings-fix-"+fixLabelInjection).Length() != 1 {
					t.Error("the not-injected step does not show it, or offers no label fix")
				}
			case 10:
				if testid(r, "verdict-rejected").Length() != 1 || testid(r, "settings-fix-"+fixCNI).Length() != 1 {
					t.Error("the baseline step does not show the rejection, or offers no CNI fix")
				}
			case 11:
				if testid(r, "ambient-enrolment").AttrOr("data-joins", "") != "true" || testid(r, "lifecycle").Length() != 2 {
					t.Error("the ambient step is not the lab's workload beside itself in ambient")
				}
				if !strings.Contains(look, "istio.io/dataplane-mode=ambient") || !strings.Contains(look, "ztunnel") {
					t.Errorf("ambient: %q", look)
				}
			}
		})
	}

	// Step 8 is reachable from step 7's page through its "next".
	seven := get(t, h, hrefs[6])
	eight := get(t, h, testid(seven, "lab-next").AttrOr("href", ""))
	if _, cur := labChips(t, eight); cur != 8 {
		t.Errorf("next from step 7 lands on chip %d", cur)
	}

	// The page's script swaps the strip after each action: the fragment carries it, marked.
	req := httptest.NewRequest(http.MethodGet, hrefs[1], nil)
	req.Header.Set(partialHeader, "1")
	if _, cur := labChips(t, do(t, h, req)); cur != 2 {
		t.Errorf("the fragment of step 2 marks chip %d", cur)
	}

	// A view that went on from a step with an annotation of the learner's own marks no chip,
	// and keeps that step's context: what to look for there, the way back to it, the next step.
	mine := input.Step{Key: "sidecar.istio.io/proxyMemory", Value: "64Mi"}
	for _, c := range []struct {
		steps []input.Step
		from  int
	}{
		{[]input.Step{mine}, 1},
		{append(labAnnotations[:3:3], mine), 4},
		{append(labAnnotations[:5:5], mine, mine), 6},
	} {
		other := get(t, h, view{state: api.State{Manifest: labManifest(), Steps: c.steps}, step: -1}.permalink())
		if _, cur := labChips(t, other); cur != 0 {
			t.Errorf("a view off the path marks chip %d", cur)
		}
		from := get(t, h, hrefs[c.from-1])
		if got, want := testid(other, "lab-back").AttrOr("href", ""), hrefs[c.from-1]; got != want {
			t.Errorf("%d steps, went on from step %d: the way back is %q, want %q", len(c.steps), c.from, got, want)
		}
		if left := testid(other, "lab-left").Text(); !strings.Contains(left, "after step "+strconv.Itoa(c.from)) {
			t.Errorf("went on from step %d: %q", c.from, left)
		}
		if got, want := testid(other, "lab-look").Find("p").Last().Text(), testid(from, "lab-look").Find("p").Last().Text(); got != want || want == "" {
			t.Errorf("went on from step %d: looks for %q, want step %d's %q", c.from, got, c.from, want)
		}
		if got, want := testid(other, "lab-next").AttrOr("href", ""), hrefs[c.from]; got != want {
			t.Errorf("went on from step %d: next is %q, want step %d's", c.from, got, c.from+1)
		}
	}
	// A step itself has no "you left"; nor has a view of another manifest.
	for _, r := range []response{get(t, h, hrefs[3]), get(t, h, view{state: api.State{Manifest: testkit.Deployment, Steps: []input.Step{mine}}, step: -1}.permalink())} {
		if testid(r, "lab-left").Length() != 0 {
			t.Errorf("a step, or another manifest, says the view left the path: %q", testid(r, "lab-left").Text())
		}
	}
	// Another comparison keeps the strip but is no step of it.
	cmpOther := get(t, h, compareHref(api.State{Manifest: jobYAML}, api.State{Manifest: jobYAML, Settings: engine.Settings{Mode: engine.ModeNative}}, "a", "b"))
	if hrefs, cur := labChips(t, cmpOther); len(hrefs) != 11 || cur != 0 {
		t.Errorf("another comparison: %d chips, chip %d marked", len(hrefs), cur)
	}
	// So does the ambient comparison of the lab's workload with an annotation of its own.
	ambOther := get(t, h, ambientHref(api.State{Manifest: labManifest(), Steps: labAnnotations[:1]}, 0))
	if hrefs, cur := labChips(t, ambOther); len(hrefs) != 11 || cur != 0 {
		t.Errorf("another ambient comparison: %d chips, chip %d marked", len(hrefs), cur)
	}
	// The tab and the selected step do not change which step a view is; a link made under
	// another Istio is still that step.
	st := api.State{Version: permalink.Version, Istio: "1.0.0", Manifest: labManifest(), Steps: labAnnotations[:2]}
	if _, cur := labChips(t, get(t, h, view{state: st, tab: "yaml", step: 0}.permalink())); cur != 3 {
		t.Errorf("the third chip's state on another tab, step and Istio marks chip %d", cur)
	}
}

// TestLabApplyToMine: a learner with their own manifest gets "apply these steps to my manifest",
// which puts the lab's annotations, one step each, on that manifest.
func TestLabApplyToMine(t *testing.T) {
	h := newServer(t)
	mine := get(t, h, view{state: api.State{Manifest: jobYAML}, step: -1}.permalink())
	btn := testid(mine, "lab-apply")
	if btn.Length() != 1 || btn.AttrOr("form", "") != "playground" || btn.AttrOr("value", "") != "lab-steps" {
		t.Fatalf("apply-to-my-manifest button: %d, form %q", btn.Length(), btn.AttrOr("form", ""))
	}
	if mine.doc.Find("form#playground").Length() != 1 {
		t.Fatal("the button's form is not on the page")
	}
	p := postForm(t, h, url.Values{"manifest": {jobYAML}, "steps": {`[{"key":"a.example.com/x","value":"1"}]`}, "action": {"lab-steps"}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("apply the lab's steps: %d %s", p.status, p.body)
	}
	loc, _ := url.Parse(p.header.Get("Location"))
	st, err := decodeState(loc.Query().Get("s"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Manifest != jobYAML {
		t.Error("the learner's manifest was replaced")
	}
	if d := cmp.Diff(labAnnotations, st.Steps); d != "" {
		t.Errorf("steps (-want +got)\n%s", d)
	}
	r := get(t, h, loc.String())
	if n := testid(r, "timeline").Find("li").Length(); n != len(labAnnotations)+1 {
		t.Errorf("%d timeline rows, want %d", n, len(labAnnotations)+1)
	}
	// On the lab's own workload there is nothing to apply it to.
	if n := testid(get(t, h, "/"), "lab-apply").Length(); n != 0 {
		t.Error("the lab's own workload offers the lab's steps on itself")
	}
}

func at(s []string, i int) string {
	if i < 0 || i >= len(s) {
		return ""
	}
	return s[i]
}

func labManifest() string { return newLabPath().manifest }

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestLabJobWhy: the Job step says why the playground shows a classic sidecar by default, and
// its one click compares Istio's webhook on nodes just under and at the version its detection
// asks for: classic on Kubernetes 1.32 (the Job never completes), native on 1.33 (it does), each
// side labelled in the reader's language.
func TestLabJobWhy(t *testing.T) {
	h := newServer(t)
	hrefs, _ := labChips(t, get(t, h, "/"))
	job := get(t, h, hrefs[6])
	if why := testid(job, "lab-why").Text(); !strings.Contains(why, "kube-inject") || !strings.Contains(why, "1.33") {
		t.Errorf("the Job step's why: %q", why)
	}
	if testid(get(t, h, hrefs[3]), "lab-why").Length() != 0 {
		t.Error("the hold step has the Job step's why")
	}
	req := httptest.NewRequest(http.MethodGet, testid(job, "lab-switch").AttrOr("href", ""), nil)
	req.Header.Set("Accept-Language", "ja")
	c := do(t, h, req)
	if c.status != http.StatusOK {
		t.Fatalf("the switch answered %d", c.status)
	}
	for side, want := range map[string]struct{ label, completes string }{
		"side-a": {"Kubernetes 1.32のWebhook", "no"},
		"side-b": {"Kubernetes 1.33のWebhook", "yes"},
	} {
		if got := testid(c, side).Find("h2").First().Text(); got != want.label {
			t.Errorf("%s is labelled %q, want %q", side, got, want.label)
		}
		if got := c.doc.Find(`[data-testid="`+side+`"] [data-testid="verdict-job-completes"]`).AttrOr("data-answer", ""); got != want.completes {
			t.Errorf("%s: the Job completes: %q, want %q", side, got, want.completes)
		}
	}
}

// update rewrites labpath_lines.json from what learnLines finds.
var update = flag.Bool("update", false, "rewrite labpath_lines.json (the lab's template lines) from Istio's templates")

// TestLabStepsNameTheirTemplateLines: each of the lab's annotation steps names the lines of
// Istio's template it switches — the resources define's for proxyCPU, the lifecycle's for
// holdApplicationUntilProxyStarts, the istio-iptables arguments' for excludeOutboundPorts —
// and inject: false, which Istio's code decides, names none; the kept file is what Istio's
// templates, observed, say now; the lines are worded with the step.
func TestLabStepsNameTheirTemplateLines(t *testing.T) {
	lp := newLabPath()
	newServer(t) // the shared engine
	found, err := lp.learnLines(t.Context(), eng)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.MarshalIndent(found, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *update {
		if err := os.WriteFile("labpath_lines.json", got, 0o644); err != nil {
			t.Fatal(err)
		}
	} else if string(got) != string(labLinesFile) {
		t.Errorf("labpath_lines.json is not what Istio's templates say now (go test ./handlers -run TestLabStepsNameTheirTemplateLines -update):\n%s", got)
	}
	in, err := eng.Install(t.Context(), engine.InstallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	src := strings.Split(in.TemplateText("sidecar"), "\n")
	for _, c := range []struct {
		step, define, reads string
	}{
		{"resources", "resources", "sidecar.istio.io/proxyCPU"},
		{"hold", "", "pilot-agent"},
		{"exclude", "", "excludeOutboundPorts"},
	} {
		ok := false
		for _, l := range found[c.step] {
			for _, n := range l.Lines {
				ok = ok || (l.Template == "sidecar" && l.Define == c.define && strings.Contains(src[n-1], c.reads))
			}
		}
		if !ok {
			t.Errorf("%s: no line of %q reading %s in %+v", c.step, c.define, c.reads, found[c.step])
		}
	}
	if len(found["noinject"]) != 0 || len(found["default"]) != 0 {
		t.Errorf("inject: false or the default step switch lines: %+v %+v", found["noinject"], found["default"])
	}
	n := lp.nav(i18n.For("en"), lp.steps[1].key, 0, false)
	if len(n.Lines) == 0 || !strings.Contains(n.Lines[0], "template sidecar, in resources: this annotation switches lines ") {
		t.Errorf("the resources step says %q", n.Lines)
	}
	if got := lineRanges([]int{2, 3, 5, 6, 9}); got != "2–3, 5–6, 9" {
		t.Errorf("lineRanges: %q", got)
	}
}

// learnLines finds, with Istio's templates observed (Explain), the template lines each of the
// lab's annotation steps switches, by step id. A step whose changes only remove fields (inject:
// false: Istio's code decides, not a template) switches none.
func (lp *labPath) learnLines(ctx context.Context, eng Engine) (map[string][]labLines, error) {
	switches := map[string][]labLines{}
	for i := range lp.steps {
		s := &lp.steps[i]
		if s.state == nil || len(s.state.Steps) == 0 {
			continue
		}
		k := len(s.state.Steps)
		tl, err := eng.Timeline(ctx, []byte(s.state.Manifest), s.state.Steps, s.state.Settings)
		if err != nil {
			return nil, err
		}
		changes, err := tl.Steps[k].Changes(ctx)
		if err != nil {
			return nil, err
		}
		prs, err := eng.Explain(ctx, []byte(s.state.Manifest), s.state.Steps, s.state.Settings)
		if err != nil {
			return nil, err
		}
		for _, c := range changes {
			if c.Kind == diff.Removed || c.Kind == diff.Moved {
				continue
			}
			path := c.Field()
			under, _, _ := engine.FieldProvenance(prs, c.Doc, path)
			for _, p := range under {
				if p.Source != provenance.FromTemplate {
					continue
				}
				if c.Flag != "" && p.Value != c.Flag && p.Value != fmt.Sprint(c.New) {
					continue // an istio-iptables flag's change: the flag and its value, not every argument
				}
				lines := slices.Clone(p.Lines)
				for _, cond := range p.Conditions {
					lines = append(lines, cond.Line)
				}
				switches[s.text] = addLines(switches[s.text], p.Template, p.Define, lines)
			}
		}
	}
	return switches, nil
}

// addLines adds lines of a template (its define) to ls, each once, in order.
func addLines(ls []labLines, template, define string, lines []int) []labLines {
	i := slices.IndexFunc(ls, func(l labLines) bool { return l.Template == template && l.Define == define })
	if i < 0 {
		ls = append(ls, labLines{Template: template, Define: define})
		i = len(ls) - 1
	}
	for _, n := range lines {
		if !slices.Contains(ls[i].Lines, n) {
			ls[i].Lines = append(ls[i].Lines, n)
		}
	}
	slices.Sort(ls[i].Lines)
	return ls
}
