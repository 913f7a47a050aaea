package handlers

import (
	"errors"
	"fmt"
	"html"
	"net/http"
	"strings"

	"github.com/a-h/templ"

	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/web"
)

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
