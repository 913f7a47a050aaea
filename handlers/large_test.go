package handlers

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/PuerkitoBio/goquery"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
	"github.com/sidecarlab/sidecarlab/permalink"
)

// slowEngine is the real engine, except that a manifest holding "# slow" takes until the
// request's deadline, as a very large one does. Whatever the deadline and the machine's speed, the
// answer is the deadline's: nothing races it.
type slowEngine struct{ Engine }

func (e slowEngine) Timeline(ctx context.Context, manifest []byte, steps []input.Step, s engine.Settings) (*engine.Timeline, error) {
	if strings.Contains(string(manifest), "# slow") {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return e.Engine.Timeline(ctx, manifest, steps, s)
}

// newSlowServer is the real router over slowEngine. Its own deadlines are far away
// (testConfig), so that the requests that do real work are not raced against one; a request
// for a slow state carries a short deadline of its own (slowDeadline), which only slowEngine
// waits for.
func newSlowServer(t *testing.T, cfg Config) http.Handler {
	t.Helper()
	newServer(t) // the shared engine
	return New(slog.New(slog.NewTextHandler(io.Discard, nil)), func() Engine { return slowEngine{eng} }, testConfig(cfg))
}

// slowDeadline is the request timeout of a slow state's request (withDeadline).
const slowDeadline = 100 * time.Millisecond

// postPartial posts form, as the page's script (partial) or a plain form; a form whose manifest
// is slow carries slowDeadline.
func postPartial(t *testing.T, h http.Handler, form url.Values, partial bool) response {
	t.Helper()
	req := formRequest(form)
	if partial {
		req.Header.Set(partialHeader, "1")
	}
	if strings.Contains(form.Get("manifest"), "# slow") {
		req = withDeadline(t, req, slowDeadline)
	}
	return do(t, h, req)
}

// TestFailedActionIsInline: the page script's request (partialHeader) that fails — too large
// (413), not text (422), too slow (503) — is answered with only an inline error the script places
// beside the editor, never a whole page that would replace it (and its text). A request that
// works gets its fragment and no such error.
func TestFailedActionIsInline(t *testing.T) {
	h := newSlowServer(t, Config{MaxBodyBytes: 64 << 10})
	for _, c := range []struct {
		name     string
		manifest string
		status   int
		words    string
	}{
		{"over the limit", testkit.Deployment + "# " + strings.Repeat("x", 100<<10) + "\n", http.StatusRequestEntityTooLarge, "at most 64 KiB"},
		{"not UTF-8", testkit.Deployment + "# \xff\n", http.StatusUnprocessableEntity, "not UTF-8"},
		{"too slow", testkit.Deployment + "# slow\n", http.StatusServiceUnavailable, "took too long"},
		{"fine", testkit.Deployment, http.StatusOK, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := postPartial(t, h, url.Values{"manifest": {c.manifest}, "action": {"apply"}}, true)
			if r.status != c.status {
				t.Fatalf("status %d, want %d: %.300s", r.status, c.status, r.body)
			}
			box := testid(r, "action-error")
			if c.words == "" {
				if box.Length() != 0 || r.doc.Find("#fragment").Length() != 1 {
					t.Fatalf("a working action: want the fragment and no error, got %.300s", r.body)
				}
				return
			}
			if box.Length() != 1 || !strings.Contains(box.Find(`[data-testid="error-message"]`).Text(), c.words) {
				t.Fatalf("want one inline error saying %q, got %.500s", c.words, r.body)
			}
			if strings.Contains(r.body, "<html") || r.doc.Find("#fragment, #playground, #manifest").Length() != 0 {
				t.Fatalf("the error would replace the page or the editor: %.500s", r.body)
			}
		})
	}
}

// TestFailedPostKeepsTheText: without the script, a POST whose state cannot be shown is answered
// with the error and an editor holding the text (no redirect to a link that would fail again);
// one over the body limit, whose text was never read, says the Back button still has it. A state
// that works is redirected to its link as before.
func TestFailedPostKeepsTheText(t *testing.T) {
	h := newSlowServer(t, Config{MaxBodyBytes: 64 << 10})
	slow := testkit.Deployment + "# slow\n"
	steps := `[{"key":"sidecar.istio.io/proxyCPU","value":"200m"}]`
	r := postPartial(t, h, url.Values{"manifest": {slow}, "steps": {steps}, "action": {"apply"}}, false)
	if r.status != http.StatusServiceUnavailable || r.header.Get("Location") != "" {
		t.Fatalf("status %d, Location %q: want 503 and no link", r.status, r.header.Get("Location"))
	}
	form := testid(r, "error-form")
	if got := form.Find(`[data-testid="manifest"]`).Text(); got != slow {
		t.Fatalf("the error page's editor holds %q, want the posted manifest", got)
	}
	if got, _ := form.Find(`input[name="steps"]`).Attr("value"); got != steps {
		t.Fatalf("the error page's form carries steps %q, want %q", got, steps)
	}
	// The same state reached by a link: the error page keeps it too.
	r = do(t, h, withDeadline(t, httptest.NewRequest(http.MethodGet, stateLink(t, api.State{Manifest: slow}), nil), slowDeadline))
	if r.status != http.StatusServiceUnavailable || testid(r, "error-form").Find(`[data-testid="manifest"]`).Text() != slow {
		t.Fatalf("a link to a slow state: status %d, want 503 with the manifest in an editor: %.300s", r.status, r.body)
	}

	// Issue 40: a slow state too large to give back whole (a 3.5 KB link of 529 KB once made a
	// 529 KB busy page) gets its beginning and the note that says where it still is.
	long := slow + "# " + strings.Repeat("y", 70<<10) + "\n"
	hl := newSlowServer(t, Config{})
	for _, c := range []struct {
		name, note string
		r          response
	}{
		{"posted", "Back button", postPartial(t, hl, url.Values{"manifest": {long}, "steps": {steps}, "action": {"apply"}}, false)},
		{"a link", "address bar still holds", do(t, hl, withDeadline(t, httptest.NewRequest(http.MethodGet, stateLink(t, api.State{Manifest: long}), nil), slowDeadline))},
	} {
		ex := testid(c.r, "error-excerpt")
		if c.r.status != http.StatusServiceUnavailable || testid(c.r, "error-form").Length() != 0 || ex.Length() != 1 ||
			!strings.HasPrefix(long, ex.Find("pre").Text()) || len(ex.Find("pre").Text()) > excerptBytes || len(ex.Find("pre").Text()) < 100 ||
			!strings.Contains(testid(c.r, "error-back").Text(), c.note) || len(c.r.body) > 40<<10 {
			t.Fatalf("%s, %d bytes: status %d, %d bytes of page, excerpt %q, note %q", c.name, len(long), c.r.status, len(c.r.body), ex.Text(), testid(c.r, "error-back").Text())
		}
	}

	r = postPartial(t, h, url.Values{"manifest": {testkit.Deployment + "# " + strings.Repeat("x", 100<<10) + "\n"}}, false)
	if r.status != http.StatusRequestEntityTooLarge || testid(r, "error-back").Length() != 1 || r.header.Get("Location") != "" {
		t.Fatalf("over the limit: status %d, want 413 saying Back keeps the text: %.300s", r.status, r.body)
	}

	r = postPartial(t, h, url.Values{"manifest": {testkit.Deployment}, "action": {"apply"}}, false)
	if r.status != http.StatusSeeOther || !strings.HasPrefix(r.header.Get("Location"), "/?s=") {
		t.Fatalf("a working state: status %d, Location %q, want 303 to its link", r.status, r.header.Get("Location"))
	}
	if r := get(t, h, r.header.Get("Location")); r.status != http.StatusOK || testid(r, "error-form").Length() != 0 {
		t.Fatalf("its link: %d", r.status)
	}
}

// manyDeployments is n Deployments, web-0 … web-(n-1), in one manifest.
func manyDeployments(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString("---\n")
		}
		b.WriteString(strings.Replace(testkit.Deployment, "name: web\n", fmt.Sprintf("name: web-%d\n", i), 1))
	}
	return b.String()
}

// maxLargePage bounds the page of 500 Deployments (it was 22 MB: every document's changes, diff
// lines, output and lifecycle): the first 50 documents' are about 1 MB, half of it the injected
// YAML; the editor holds the 120 KB manifest.
const maxLargePage = 1500 << 10

// TestLargeManifestPageIsBounded: 500 documents make a page under maxLargePage, which says it
// shows part and links to the rest; asking for all 500 (limit=500) trips the same bound.
func TestLargeManifestPageIsBounded(t *testing.T) {
	t.Parallel()
	h := newServer(t)
	link := stateLink(t, api.State{Manifest: manyDeployments(500)})
	r := get(t, h, link)
	if r.status != http.StatusOK {
		t.Fatalf("status %d", r.status)
	}
	if n := len(r.body); n > maxLargePage {
		t.Errorf("the page of 500 documents is %d bytes, want at most %d", n, maxLargePage)
	}
	if testid(r, "more-note").Length() == 0 {
		t.Errorf("the page does not say it shows part of the result")
	}
	if r := get(t, h, link+"&limit=500"); r.status != http.StatusOK || len(r.body) <= maxLargePage {
		t.Errorf("all 500 documents: status %d, %d bytes; want more than %d (the bound would catch it)", r.status, len(r.body), maxLargePage)
	}
}

// changedDocs is the set of documents ("doc 7 Deployment/web-6") the field diff shows changes of.
func changedDocs(r response) map[string]bool {
	out := map[string]bool{}
	r.doc.Find(`[data-testid="change"] .doc`).Each(func(_ int, s *goquery.Selection) { out[s.Text()] = true })
	return out
}

// TestShowMore: a large result shows its first 50 documents (the documents table, notes,
// output, lifecycles, batch rows) and at most 200 changes a step, in document order; "show more"
// (a link, so it works without the script) shows 50 more documents and 400 changes. The raw
// outputs it names have everything. A small manifest shows all and no note.
func TestShowMore(t *testing.T) {
	t.Parallel()
	h := newServer(t)
	link := stateLink(t, api.State{Manifest: manyDeployments(120)})
	r := get(t, h, link+"&tab=warnings")
	if n := testid(r, "document").Length(); n != 50 {
		t.Fatalf("first page: %d rows in the documents table, want 50", n)
	}
	if n := len(changes(r)); n != 200 {
		t.Fatalf("first page: %d changes, want 200 (of about 18 × 120)", n)
	}
	first := changedDocs(r)
	if !first["doc 1 Deployment/web-0"] || first["doc 51 Deployment/web-50"] {
		t.Fatalf("first page: changes of %v, want the first documents'", first)
	}
	if testid(r, "hidden-changes").Length() == 0 || testid(r, "more-note").Length() == 0 {
		t.Fatalf("the page does not say some changes are not shown")
	}
	more, _ := testid(r, "show-more").First().Attr("href")
	if !strings.Contains(more, "limit=100") || !strings.Contains(more, "tab=warnings") {
		t.Fatalf("show more links to %q, want this view with limit=100", more)
	}
	r = get(t, h, more)
	if n := testid(r, "document").Length(); n != 100 {
		t.Fatalf("after show more: %d rows in the documents table, want 100", n)
	}
	if n := len(changes(r)); n != 400 {
		t.Fatalf("after show more: %d changes, want 400", n)
	}
	if docs := changedDocs(r); len(docs) <= len(first) || docs["doc 101 Deployment/web-100"] {
		t.Fatalf("after show more: changes of %d documents, want more than %d, none past 100", len(docs), len(first))
	}
	if got := testid(r, "tab-yaml").AttrOr("href", ""); !strings.Contains(got, "limit=100") {
		t.Fatalf("the tabs forget the limit: %q", got)
	}
	for _, id := range []string{"more-injected", "more-diff"} {
		href, _ := testid(r, id).First().Attr("href")
		if raw := get(t, h, href); raw.status != http.StatusOK || !strings.Contains(raw.body, "web-119") {
			t.Fatalf("%s (%s): status %d, want everything (web-119)", id, href, raw.status)
		}
	}
	if r := get(t, h, link+"&limit=0"); r.status != http.StatusBadRequest {
		t.Fatalf("limit=0: status %d, want 400", r.status)
	}

	small := get(t, h, stateLink(t, api.State{Manifest: manyDeployments(3)}))
	if testid(small, "more-note").Length() != 0 || testid(small, "hidden-changes").Length() != 0 || len(changedDocs(small)) != 3 {
		t.Fatalf("3 documents: want all shown and no note")
	}
}

// TestListYAMLShare: a List is one document however many objects it holds, so the YAML tab shows
// of it what its documents may show (16 KiB each: 80 KiB for limit=5), cut at a line's end, with
// a note that says so and links to the raw output; five documents of the same Pods are shown
// whole. The same on compare's sides.
func TestListYAMLShare(t *testing.T) {
	h := newServer(t)
	list := get(t, h, stateLink(t, api.State{Manifest: testkit.PodList(20)})+"&tab=yaml&limit=5")
	yaml := testid(list, "injected-yaml").Text()
	if list.status != http.StatusOK || len(yaml) > 5*yamlPerDoc || len(yaml) < 4*yamlPerDoc || !strings.HasSuffix(yaml, "\n") ||
		!strings.Contains(testid(list, "more-note").Text(), "The YAML tab shows its first") || testid(list, "more-injected").Length() == 0 {
		t.Fatalf("a List of 20 Pods at limit=5: %d, %d bytes of YAML, note %q", list.status, len(yaml), testid(list, "more-note").Text())
	}
	docs := get(t, h, stateLink(t, api.State{Manifest: testkit.Pods(20, 0)})+"&tab=yaml&limit=5")
	if y := testid(docs, "injected-yaml").Text(); strings.Count(y, "name: istio-proxy") != 5 || strings.Contains(testid(docs, "more-note").Text(), "The YAML tab shows its first") {
		t.Fatalf("20 Pods at limit=5: %d proxies in the YAML, note %q", strings.Count(y, "name: istio-proxy"), testid(docs, "more-note").Text())
	}
	// Compare shows each side's share of 50 documents: 150 Pods in a List are more.
	e := permalink.Encode(api.State{Manifest: testkit.PodList(150)})
	cmp := get(t, h, "/compare?a="+e+"&b="+e)
	if a := testid(cmp, "output-a").Text(); cmp.status != http.StatusOK || len(a) > defaultLimit*yamlPerDoc || len(a) < (defaultLimit-1)*yamlPerDoc ||
		!strings.Contains(testid(cmp, "output-a-cut").Text(), "Its first") {
		t.Fatalf("compare of a List of 150 Pods: %d, %d bytes of side A, note %q", cmp.status, len(a), testid(cmp, "output-a-cut").Text())
	}
}
