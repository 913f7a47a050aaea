package handlers

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/sidecarlab/sidecarlab/engine"
)

// slowEngine is the real engine, except that a manifest holding "# slow" takes until the
// request's deadline, as a very large one does.
type slowEngine struct{ Engine }

func (e slowEngine) Timeline(ctx context.Context, manifest []byte, steps []engine.Step, s engine.Settings) (*engine.Timeline, error) {
	if strings.Contains(string(manifest), "# slow") {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return e.Engine.Timeline(ctx, manifest, steps, s)
}

func newSlowServer(t *testing.T, cfg Config) http.Handler {
	t.Helper()
	newServer(t) // the shared engine
	cfg.RequestTimeout = 300 * time.Millisecond
	return New(slog.New(slog.NewTextHandler(io.Discard, nil)), func() Engine { return slowEngine{eng} }, cfg)
}

func postPartial(t *testing.T, h http.Handler, form url.Values, partial bool) response {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if partial {
		req.Header.Set(partialHeader, "1")
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
		{"over the limit", deploymentYAML + "# " + strings.Repeat("x", 100<<10) + "\n", http.StatusRequestEntityTooLarge, "at most 64 KiB"},
		{"not UTF-8", deploymentYAML + "# \xff\n", http.StatusUnprocessableEntity, "not UTF-8"},
		{"too slow", deploymentYAML + "# slow\n", http.StatusServiceUnavailable, "took too long"},
		{"fine", deploymentYAML, http.StatusOK, ""},
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
	slow := deploymentYAML + "# slow\n"
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
	r = get(t, h, stateLink(t, State{Manifest: slow}))
	if r.status != http.StatusServiceUnavailable || testid(r, "error-form").Find(`[data-testid="manifest"]`).Text() != slow {
		t.Fatalf("a link to a slow state: status %d, want 503 with the manifest in an editor: %.300s", r.status, r.body)
	}

	r = postPartial(t, h, url.Values{"manifest": {deploymentYAML + "# " + strings.Repeat("x", 100<<10) + "\n"}}, false)
	if r.status != http.StatusRequestEntityTooLarge || testid(r, "error-back").Length() != 1 || r.header.Get("Location") != "" {
		t.Fatalf("over the limit: status %d, want 413 saying Back keeps the text: %.300s", r.status, r.body)
	}

	r = postPartial(t, h, url.Values{"manifest": {deploymentYAML}, "action": {"apply"}}, false)
	if r.status != http.StatusSeeOther || !strings.HasPrefix(r.header.Get("Location"), "/?s=") {
		t.Fatalf("a working state: status %d, Location %q, want 303 to its link", r.status, r.header.Get("Location"))
	}
	if r := get(t, h, r.header.Get("Location")); r.status != http.StatusOK || testid(r, "error-form").Length() != 0 {
		t.Fatalf("its link: %d", r.status)
	}
}
