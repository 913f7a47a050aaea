package handlers

import (
	"net/url"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/go-cmp/cmp"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

// deepLinks are the deep links of a page's change rows: each row's "data-testid of its step,
// data-doc, data-path" and its link's href and label.
func deepLinks(r response) (rows, hrefs, labels []string) {
	testid(r, "change").Each(func(_ int, s *goquery.Selection) {
		a := s.Find(`[data-testid="deep-link"]`)
		rows = append(rows, s.ParentsFiltered("details.step").AttrOr("data-testid", "")+" "+s.AttrOr("data-doc", "")+" "+s.AttrOr("data-path", ""))
		hrefs = append(hrefs, a.AttrOr("href", ""))
		labels = append(labels, a.AttrOr("aria-label", ""))
	})
	return rows, hrefs, labels
}

// repeated are the entries of list that occur more than once.
func repeated(list []string) []string {
	seen := map[string]int{}
	var out []string
	for _, s := range list {
		if seen[s]++; seen[s] == 2 {
			out = append(out, s)
		}
	}
	return out
}

// TestDeepLinksNameTheirStep: a field changed in two steps has two deep links, each naming its
// step (and, on a page of several documents, its document), so that a link opens its own row; no
// two rows of a page share a link or a label.
func TestDeepLinksNameTheirStep(t *testing.T) {
	h := newServer(t)
	cpu := "spec.template.spec.containers[istio-proxy].resources.requests.cpu"
	proxy := "spec.template.spec.containers[istio-proxy]"
	twice := []input.Step{{Key: "sidecar.istio.io/proxyCPU", Value: "200m"}, {Key: "sidecar.istio.io/proxyCPU", Value: "300m"}}
	two := testkit.Deployment + "---\n" + strings.Replace(testkit.Deployment, "name: web\n", "name: api\n", 1)
	for _, c := range []struct {
		name     string
		st       api.State
		want     map[string]string // row ("diff-step-N doc path") → its link
		wantText map[string]string // row → its label
	}{
		{"one path in two steps", api.State{Manifest: testkit.Deployment, Steps: twice},
			map[string]string{
				"diff-step-1 1 " + cpu: "#step=1&path=" + url.PathEscape(cpu),
				"diff-step-2 1 " + cpu: "#step=2&path=" + url.PathEscape(cpu),
			},
			map[string]string{"diff-step-2 1 " + cpu: "Link to the change of " + cpu + " at step 2"}},
		{"one path in two documents", api.State{Manifest: two},
			map[string]string{
				"diff-step-0 1 " + proxy: "#step=0&doc=1&path=" + url.PathEscape(proxy),
				"diff-step-0 2 " + proxy: "#step=0&doc=2&path=" + url.PathEscape(proxy),
			},
			map[string]string{"diff-step-0 2 " + proxy: "Link to the change of " + proxy + " in document 2 at step 0"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := get(t, h, view{state: c.st, step: -1}.permalink())
			rows, hrefs, labels := deepLinks(r)
			if len(rows) == 0 {
				t.Fatalf("status %d: no change rows", r.status)
			}
			got, gotText := map[string]string{}, map[string]string{}
			for i, row := range rows {
				if _, ok := c.want[row]; ok {
					got[row] = hrefs[i]
				}
				if _, ok := c.wantText[row]; ok {
					gotText[row] = labels[i]
				}
			}
			if d := cmp.Diff(c.want, got); d != "" {
				t.Errorf("links (-want +got):\n%s", d)
			}
			if d := cmp.Diff(c.wantText, gotText); d != "" {
				t.Errorf("labels (-want +got):\n%s", d)
			}
			if d := repeated(hrefs); len(d) > 0 {
				t.Errorf("links on more than one row: %q", d)
			}
			if d := repeated(labels); len(d) > 0 {
				t.Errorf("labels on more than one row: %q", d)
			}
		})
	}
}

// TestRepeated: the check of TestDeepLinksNameTheirStep finds a link on two rows, and only that.
func TestRepeated(t *testing.T) {
	if d := repeated([]string{"#path=a", "#path=b", "#path=a", "#path=a"}); !cmp.Equal(d, []string{"#path=a"}) {
		t.Errorf("repeated %q, want the one link on three rows", d)
	}
	if d := repeated([]string{"#step=1&path=a", "#step=2&path=a"}); len(d) != 0 {
		t.Errorf("repeated %q, want none", d)
	}
}
