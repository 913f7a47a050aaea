package handlers

import (
	"errors"
	"net/http"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/a-h/templ"

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
		hv := v
		hv.tab = "" // named like the view it embeds, not like its lifecycle tab
		p.Head = playgroundHead(hv, tl)
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
