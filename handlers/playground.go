package handlers

import (
	"errors"
	"fmt"
	"html"
	"net/http"
	"strings"

	"github.com/a-h/templ"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/web"
	"github.com/sidecarlab/sidecarlab/wording"
)

// partialHeader marks the page script's requests: they get only the regions that change.
const partialHeader = "X-Sidecarlab-Partial"

// heldHeader carries the keys of the kept regions the page's script already shows (the diff
// tab's steps, the lab strip and the settings, each one's data-key): a fragment sends those
// regions as placeholders (web.Page.Held, web.Kept).
const heldHeader = "X-Sidecarlab-Held"

// maxHeld is how many keys of heldHeader are read (a page shows at most one step per annotation
// change, the lab strip and the settings); a key longer than web.MaxKey is no key.
const (
	maxHeld      = 64
	maxHeldBytes = maxHeld * (web.MaxKey + 1)
)

// readHeld reads heldHeader: at most maxHeld keys, nothing from a header longer than that many
// keys can take.
func readHeld(r *http.Request) map[string]bool {
	v := r.Header.Get(heldHeader)
	if v == "" || len(v) > maxHeldBytes {
		return nil
	}
	held := map[string]bool{}
	for _, k := range strings.Fields(v) {
		if len(k) <= web.MaxKey && len(held) < maxHeld {
			held[k] = true
		}
	}
	return held
}

// handlePlayground renders the page for a permalink. A manifest Istio rejects is shown with its
// errors and a 422; the link still reproduces exactly that view.
func (s *server) handlePlayground() http.Handler {
	return s.handler(func(w http.ResponseWriter, r *http.Request) error {
		v, err := readView(r)
		if err != nil {
			return err
		}
		if err := s.renderView(w, r, v); err != nil {
			return withForm{err: err, form: formOf(v)}
		}
		return nil
	})
}

// renderView injects the view's state and renders the page, or only the regions that change
// when the page's script asks (partialHeader). Its address carries the state, so it warns when
// that gives away values that look secret (linkSecretsBanner).
func (s *server) renderView(w http.ResponseWriter, r *http.Request, v view) error {
	return s.renderViewWith(w, r, v, s.linkSecretsBanner(wording.For(r.Context()), v))
}

// pageExtras are what a caller may add to a rendered view: a short link, a banner, a room's
// bar (else the view's own, roomBarFor) and a reload for pages without JavaScript.
type pageExtras struct {
	shortLink, banner string
	room              *web.Room
	refresh           string
}

func (s *server) renderViewWith(w http.ResponseWriter, r *http.Request, v view, extra func(*pageExtras, *engine.Timeline)) error {
	tl, err := s.timeline(r.Context(), v.state)
	var ie *input.Error
	if err != nil && !errors.As(err, &ie) {
		return err
	}
	partial := r.Header.Get(partialHeader) != ""
	p, err := buildPage(r.Context(), i18n.FromContext(r.Context()), v, s.statics, tl, ie, !partial)
	if err != nil {
		return err
	}
	p.Cluster = s.clusterChoices(r.Context(), i18n.FromContext(r.Context()))
	title, _ := p.Head.In(i18n.FromContext(r.Context()))
	p.EmbedSnippet = embedSnippet(s.origin(r), p.EmbedHref, title)
	p.Sharing = s.cfg.Links != nil
	var x pageExtras
	if extra != nil {
		extra(&x, tl)
	}
	p.ShortLink = x.shortLink
	if x.banner != "" {
		p.Banner = x.banner
	}
	p.Room, p.Head.Refresh = x.room, x.refresh
	if p.Room == nil {
		p.Room = s.roomBarFor(r, v)
	}
	if ie == nil && tl != nil {
		if err := s.addAdmission(r.Context(), v, p); err != nil {
			return err
		}
	}
	status := http.StatusOK
	if p.Outcome = outcome(v, tl, ie); p.Outcome != "" {
		status = http.StatusUnprocessableEntity
	}
	w.Header().Add("Vary", partialHeader+", "+heldHeader)
	if partial {
		p.Held = readHeld(r)
		return render(w, r, status, web.Fragment(p))
	}
	return render(w, r, status, web.PlaygroundPage(p))
}

// outcome is what a view that is not OK says in the page script's status line (web.Page.Outcome),
// "" for one that is: a namespace that could not be read, a manifest with nothing in it (the
// engine's manifest-empty: only blanks), a request refused as a whole, documents Istio rejected.
func outcome(v view, tl *engine.Timeline, ie *input.Error) string {
	switch {
	case v.nsForm != nil:
		return web.OutcomeNamespace
	case ie != nil && ie.ID == "manifest-empty":
		return web.OutcomeEmpty
	case ie != nil:
		return web.OutcomeRefused
	case tl != nil && len(tl.Steps[len(tl.Steps)-1].Errors()) > 0:
		return rejectedOutcome(tl.Steps[len(tl.Steps)-1].Errors())
	}
	return ""
}

// rejectedOutcome is the outcome of documents that failed, by the kind of their errors: not YAML,
// YAML that Kubernetes cannot read, or (any error of Istio's among them) rejected by Istio.
func rejectedOutcome(errs []*input.Error) string {
	yamlOnly, schema := true, true
	for _, e := range errs {
		k := wording.ErrorKind(e)
		yamlOnly = yamlOnly && k == wording.KindYAML
		schema = schema && k != wording.KindIstio
	}
	switch {
	case yamlOnly:
		return web.OutcomeRejectedYAML
	case schema:
		return web.OutcomeRejectedSchema
	}
	return web.OutcomeRejected
}

// handleDownload serves one step's injected YAML as a file.
func (s *server) handleDownload() http.Handler {
	return s.handler(func(w http.ResponseWriter, r *http.Request) error {
		v, tl, err := s.viewTimeline(r)
		if err != nil {
			return err
		}
		if err := rejected(tl, v.step); err != nil {
			return err
		}
		step := selectedStep(v.step, len(tl.Steps))
		w.Header().Set("Content-Type", "application/yaml; charset=utf-8")
		w.Header().Set("Content-Disposition", `attachment; filename="injected.yaml"`)
		_, err = w.Write([]byte(tl.Steps[step].Output()))
		return err
	})
}

// viewTimeline reads the view of a GET and runs its timeline; a rejected state is an error.
func (s *server) viewTimeline(r *http.Request) (view, *engine.Timeline, error) {
	v, err := readView(r)
	if err != nil {
		return v, nil, err
	}
	tl, err := s.timeline(r.Context(), v.state)
	return v, tl, err
}

// firstSlide is where a presentation starts: the first annotation's step, or the manifest as
// injected (step 0) when there are no annotations. Step 0 stays one ← away.
func firstSlide(st api.State) int {
	if len(st.Steps) > 0 {
		return 1
	}
	return 0
}

func selectedStep(step, n int) int {
	if step < 0 || step >= n {
		return n - 1
	}
	return step
}

// handleEmbed is the compact, read-only view for iframes; the only route that may be framed.
func (s *server) handleEmbed() http.Handler {
	return s.handler(func(w http.ResponseWriter, r *http.Request) error {
		v, err := readView(r)
		if err != nil {
			return err
		}
		tl, err := s.timeline(r.Context(), v.state)
		var ie *input.Error
		if err != nil && !errors.As(err, &ie) {
			return err
		}
		v.tab = "lifecycle" // the embed shows the diff and the lifecycle verdicts
		p, err := buildPage(r.Context(), i18n.FromContext(r.Context()), v, s.statics, tl, ie, false, "diff")
		if err != nil {
			return err
		}
		// Read-only: no form, so no why buttons to send (they are hidden; app.css).
		p.Results.WhyState = ""
		// Named like the view it embeds, not like its lifecycle tab.
		p.Head = web.PlaygroundHead(tl, v.state.Steps, v.step, "", v.present)
		w.Header().Del("X-Frame-Options")
		// Any site may frame it, and so may slides opened as local files: "*" alone does not match
		// a file: page (Chromium refuses the frame: "refused to connect"), so file: is named too.
		w.Header().Set("Content-Security-Policy", csp(templ.GetNonce(r.Context()), "* file:"))
		status := http.StatusOK
		if ie != nil {
			status = http.StatusUnprocessableEntity
		}
		return render(w, r, status, web.EmbedPage(p))
	})
}

// origin is this server's address: --public-url when it is set, else as the browser reached it:
// https when the connection is TLS, or when a trusted proxy (one of --trusted-proxies) says it
// terminated TLS (X-Forwarded-Proto); the Host the request named. Without trusted proxies the
// header is ignored: anyone can send it.
func (s *server) origin(r *http.Request) string {
	if s.cfg.PublicURL != "" {
		// The operator said where the server is (--public-url): that, not what the client sent.
		return strings.TrimSuffix(s.cfg.PublicURL, "/")
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	} else if p := parseHop(r.RemoteAddr); p.IsValid() && inPrefixes(p, s.cfg.TrustedProxies) &&
		strings.EqualFold(strings.TrimSpace(strings.Split(r.Header.Get("X-Forwarded-Proto"), ",")[0]), "https") {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// embedSnippet is the <iframe> a page author pastes to embed this view (the read-only /embed).
func embedSnippet(origin, embedHref, title string) string {
	return fmt.Sprintf(`<iframe src="%s" title="%s" width="100%%" height="520" loading="lazy" style="border: 1px solid #ccc; border-radius: 6px"></iframe>`,
		html.EscapeString(origin+embedHref), html.EscapeString(title))
}
