package handlers

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/lifecycle"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/PuerkitoBio/goquery"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/web"
	"github.com/sidecarlab/sidecarlab/wording"
)

// shown is a catalog message as a page shows it: its `code` as <code>, so without backticks.
func shown(s string) string { return strings.ReplaceAll(s, "`", "") }

// TestResultsInLanguages: a Job with a classic sidecar (a pitfall, and a lifecycle whose
// job-completes verdict is "no") shows the results in the reader's language — the tab names, the
// banner's count, the pitfall's message and the verdict's question (wording's words), the
// diagram's labels — and English when the browser asks for none of ours. The state, the ids and
// the data attributes the page's script and links use are the same in every language.
func TestResultsInLanguages(t *testing.T) {
	h := newServer(t)
	tl, err := eng.Timeline(context.Background(), []byte(jobYAML), nil, engine.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	var pitfall engine.Finding
	for _, f := range tl.Findings {
		if f.Check == "job-classic-sidecar" {
			pitfall = f
		}
	}
	if pitfall.Check == "" {
		t.Fatalf("no job-classic-sidecar finding in %+v", tl.Findings)
	}
	var completes lifecycle.Verdict
	for _, l := range engine.Lifecycles(tl.Steps[len(tl.Steps)-1].Documents) {
		for _, v := range l.Verdicts {
			if v.ID == "job-completes" {
				completes = v
			}
		}
	}
	if completes.ID == "" {
		t.Fatal("no job-completes verdict")
	}
	link := stateLink(t, api.State{Manifest: jobYAML})
	english := wording.English
	for _, c := range []struct {
		accept, lang string
	}{
		{"ja,en-US;q=0.8", "ja"},
		{"ko-KR,ko;q=0.9", "ko"},
		{"fr-FR", "en"}, // none of ours: English, as before
		{"", "en"},
	} {
		t.Run(c.lang+"/"+c.accept, func(t *testing.T) {
			l := i18n.For(c.lang)
			w := wording.In(l)
			r := getIn(t, h, link+"&tab=lifecycle", c.accept)
			if r.status != http.StatusOK {
				t.Fatalf("status %d", r.status)
			}
			// Tabs: worded, ids unchanged.
			tab := testid(r, "tab-pitfalls")
			if tab.AttrOr("data-tab", "") != "pitfalls" || tab.Find(".count").Text() != "1" {
				t.Fatalf("pitfalls tab %q", tab.Text())
			}
			title := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(tab.Text()), "1"))
			if want := l.T("results.tab.pitfalls"); title != want {
				t.Errorf("tab %q, want %q", title, want)
			}
			if want := l.T("results.tab.lifecycle"); !strings.Contains(testid(r, "tab-lifecycle").Text(), want) {
				t.Errorf("lifecycle tab %q, want %q", testid(r, "tab-lifecycle").Text(), want)
			}
			// The banner: the count by the language's plural rules, wording's gist.
			banner := testid(r, "pitfall-banner").Text()
			if !strings.Contains(banner, l.N("results.banner.pitfalls", 1)) || !strings.Contains(banner, shown(w.Gist(pitfall))) {
				t.Errorf("banner %q", banner)
			}
			// The pitfall: wording's message in the request's language.
			msg := strings.TrimSpace(testid(r, "finding-job-classic-sidecar").Find(".f-msg").Text())
			if msg != shown(w.Message(pitfall)) {
				t.Errorf("pitfall message %q, want %q", msg, shown(w.Message(pitfall)))
			}
			// The lifecycle: the verdict's question and answer, the answer's data unchanged.
			v := testid(r, "verdict-job-completes")
			if v.AttrOr("data-answer", "") != "no" {
				t.Errorf("data-answer %q", v.AttrOr("data-answer", ""))
			}
			if q := strings.TrimSpace(v.Find(".q").Text()); q != shown(w.Question(completes)) {
				t.Errorf("question %q, want %q", q, shown(w.Question(completes)))
			}
			if a := v.Find(".a").Text(); a != l.T("results.answer.no") {
				t.Errorf("answer %q", a)
			}
			if svg := testid(r, "lifecycle-svg"); !strings.Contains(svg.Find("text.phase").First().Text(), strings.TrimSuffix(l.T("results.diagram.start"), " ↓")) ||
				svg.AttrOr("aria-label", "") != l.T("results.diagram.label") {
				t.Errorf("diagram labels %q %q", svg.Find("text.phase").Text(), svg.AttrOr("aria-label", ""))
			}
			// Another language's words are not English's; English's are as before.
			if c.lang == "en" {
				if title != "Pitfalls" || !strings.Contains(banner, "1 pitfall:") || msg != shown(english.Message(pitfall)) {
					t.Errorf("English changed: tab %q, banner %q, message %q", title, banner, msg)
				}
				return
			}
			if title == "Pitfalls" || strings.Contains(banner, "pitfall") {
				t.Errorf("%s page in English: tab %q, banner %q", c.lang, title, banner)
			}
			if msg == shown(english.Message(pitfall)) || v.Find(".q").Text() == shown(english.Question(completes)) {
				t.Errorf("%s page: wording's words in English: %q / %q", c.lang, msg, v.Find(".q").Text())
			}
		})
	}
	if m := i18n.Missing(); len(m) != 0 {
		t.Errorf("messages missing: %q", m)
	}
}

// TestOtherIstioAndModesInLanguages: the banner of a link made with another Istio, and the
// settings' mode names, are in the reader's language; the modes' values are not.
func TestOtherIstioAndModesInLanguages(t *testing.T) {
	h := newServer(t)
	other := stateLink(t, api.State{Manifest: jobYAML, Istio: "1.29"})
	for _, lang := range i18n.Codes {
		l := i18n.For(lang)
		r := getIn(t, h, other, lang)
		want := l.T("results.other-istio", "Made", "1.29", "Inside", engine.Version().Istio)
		if got := testid(r, "banner").Text(); !strings.Contains(got, want) || !strings.Contains(got, "1.29") {
			t.Errorf("%s: banner %q, want %q", lang, got, want)
		}
		opt := r.doc.Find(`option[value="native"]`)
		if opt.Length() != 1 || opt.Text() != l.T("results.mode.native") {
			t.Errorf("%s: mode native %q", lang, opt.Text())
		}
		if lang != "en" && (strings.Contains(opt.Text(), " on ") || strings.Contains(testid(r, "banner").Text(), "This link")) {
			t.Errorf("%s: in English: %q / %q", lang, opt.Text(), testid(r, "banner").Text())
		}
	}
	if m := i18n.Missing(); len(m) != 0 {
		t.Errorf("messages missing: %q", m)
	}
}

// TestResultsTabsInLanguages: every tab's panel renders in each language with no message
// missing — the diff with its notes and table, the unified diff, the YAML, the timeline, the
// warnings, the batch table and the Cluster tab — and the field-diff rows keep their data (the
// path, the kind) whatever the language.
func TestResultsTabsInLanguages(t *testing.T) {
	h := newServer(t)
	manifest := jobYAML + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n"
	link := stateLink(t, api.State{Manifest: manifest, Steps: []input.Step{{Key: "sidecar.istio.io/proxyCPU", Value: "200m"}}})
	var enPaths []string
	for _, lang := range i18n.Codes {
		l := i18n.For(lang)
		var paths []string
		for _, tab := range []string{"diff", "unified", "yaml", "timeline", "warnings", "batch", "cluster", "pitfalls", "lifecycle"} {
			r := getIn(t, h, link+"&tab="+tab+"&step=0", lang)
			if r.status != http.StatusOK {
				t.Fatalf("%s %s: status %d", lang, tab, r.status)
			}
			if got := r.doc.Find("nav.tabs").AttrOr("aria-label", ""); got != l.T("results.tabs") {
				t.Errorf("%s: tabs labelled %q", lang, got)
			}
			switch tab {
			case "diff":
				testid(r, "change").Each(func(_ int, s *goquery.Selection) {
					paths = append(paths, s.AttrOr("data-kind", "")+" "+s.AttrOr("data-path", ""))
				})
				note := testid(r, "doc-note").Text()
				if !strings.Contains(note, l.T("results.note.passed-through", "Kind", "ConfigMap", "Doc", 2)) {
					t.Errorf("%s: doc note %q", lang, note)
				}
				if th := r.doc.Find("table.changes th").First().Text(); th != l.T("results.diff.col-change") {
					t.Errorf("%s: diff table heading %q", lang, th)
				}
				// A value's note (the lab's words) comes through the memoised rows in this language.
				if vn := testid(r, "value-note").First().Text(); vn != l.T("lab.value.json-strings") {
					t.Errorf("%s: value note %q", lang, vn)
				}
			case "warnings":
				if st := testid(r, "document").Last().Find("strong").Text(); st != l.T("results.status.passed-through") {
					t.Errorf("%s: document status %q", lang, st)
				}
			case "batch":
				if th := testid(r, "batch").Find(`th[data-col="result"]`).Text(); th != l.T("results.batch.col.result") {
					t.Errorf("%s: batch heading %q", lang, th)
				}
				// The ConfigMap's row: its result in words, the reason too (the engine's, not Istio's).
				cell := testid(r, "batch-row").Last().Find("td").First()
				if got := strings.TrimSpace(cell.Contents().First().Text()); got != l.T("results.status.passed-through") ||
					cell.Find(".b-note").Text() != l.T("results.status.passed-through-reason") {
					t.Errorf("%s: batch result %q (%q)", lang, got, cell.Find(".b-note").Text())
				}
			case "cluster":
				if h3 := testid(r, "cluster-doc").First().Find(`h3[id^="cluster-doc-"]`).Text(); h3 != l.T("results.cluster.doc", "Doc", 1, "Kind", "Job", "Name", "once") {
					t.Errorf("%s: cluster heading %q", lang, h3)
				}
			}
		}
		if lang == "en" {
			enPaths = paths
		} else if strings.Join(paths, "\n") != strings.Join(enPaths, "\n") || len(paths) == 0 {
			t.Errorf("%s: field diff rows %q, English %q", lang, paths, enPaths)
		}
	}
	if m := i18n.Missing(); len(m) != 0 {
		t.Errorf("messages missing: %q", m)
	}
}

// TestSkippedInLanguages: a workload Istio skipped says so in the reader's language, with Istio's
// own reason as Istio wrote it, marked English (lang="en") for screen readers and fonts.
func TestSkippedInLanguages(t *testing.T) {
	h := newServer(t)
	lab, _ := web.FindPreset("lab-batch")
	link := stateLink(t, api.State{Manifest: lab.Manifest})
	for _, lang := range i18n.Codes {
		l := i18n.For(lang)
		r := getIn(t, h, link+"&tab=batch", lang)
		cell := testid(r, "batch-row").Eq(5).Find("td").First()
		if got := strings.TrimSpace(cell.Contents().First().Text()); got != l.T("results.status.skipped") ||
			!strings.Contains(cell.Find(".b-note").Text(), "sidecar injection disabled") {
			t.Errorf("%s: skipped row %q (%q)", lang, got, cell.Find(".b-note").Text())
		}
		r = getIn(t, h, link+"&tab=diff", lang)
		var skipped *goquery.Selection
		testid(r, "doc-note").Each(func(_ int, s *goquery.Selection) {
			if s.AttrOr("data-status", "") == "skipped" {
				skipped = s
			}
		})
		if skipped == nil {
			t.Fatalf("%s: no note for the skipped workload", lang)
		}
		doc, _ := strconv.Atoi(skipped.AttrOr("data-doc", ""))
		if skipped.Find("strong").Text() != l.T("results.note.skipped", "Doc", doc, "Kind", "Pod", "Name", "no-mesh") {
			t.Errorf("%s: note %q", lang, skipped.Find("strong").Text())
		}
		if reason := skipped.Find(".reason"); reason.AttrOr("lang", "") != "en" || !strings.Contains(reason.Text(), "sidecar injection disabled") {
			t.Errorf("%s: Istio's reason %q lang=%q", lang, reason.Text(), reason.AttrOr("lang", ""))
		}
	}
	if m := i18n.Missing(); len(m) != 0 {
		t.Errorf("messages missing: %q", m)
	}
}
