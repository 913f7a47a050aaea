package handlers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/go-chi/chi/v5"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/store"
	"github.com/sidecarlab/sidecarlab/web"
)

// LinkStore keeps shared states (store.SQL on SQLite or PostgreSQL).
type LinkStore interface {
	Put(ctx context.Context, l store.Link) error
	Get(ctx context.Context, id string) (store.Link, error)
}

func outputHash(tl *engine.Timeline) string {
	sum := sha256.Sum256([]byte(tl.Steps[len(tl.Steps)-1].Output()))
	return hex.EncodeToString(sum[:])
}

// handleShare stores the form's state and redirects to its short link, /s/<id>.
func (s *server) handleShare() http.Handler {
	return s.pageHandler(func(w http.ResponseWriter, r *http.Request) error {
		if s.cfg.Links == nil {
			return httpError{status: http.StatusNotFound, msg: "Sharing is off on this server (no link store)."}
		}
		v, err := s.formView(w, r)
		if err != nil {
			return err
		}
		tl, err := s.timeline(r.Context(), v.state)
		hash := ""
		var ie *engine.InputError
		switch {
		case err == nil:
			hash = outputHash(tl)
		case errors.As(err, &ie):
			// A state Istio rejects can be shared too: it shows the same error.
		default:
			return err
		}
		js := StateJSON(v.state)
		id := store.ID(js)
		if err := s.cfg.Links.Put(r.Context(), store.Link{ID: id, State: js, Istio: v.state.Istio, OutputHash: hash}); err != nil {
			s.metrics.storeErrors.Inc()
			return err
		}
		target := "/s/" + id
		q := url.Values{}
		if v.tab != "" && v.tab != web.Tabs[0].ID {
			q.Set("tab", v.tab)
		}
		if len(q) > 0 {
			target += "?" + q.Encode()
		}
		http.Redirect(w, r, target, http.StatusSeeOther)
		return nil
	})
}

// handleShortLink renders a stored state. Opened under another Istio, it says so, and whether
// the output differs from the one the link showed when it was made.
func (s *server) handleShortLink() http.Handler {
	return s.pageHandler(func(w http.ResponseWriter, r *http.Request) error {
		if s.cfg.Links == nil {
			return httpError{status: http.StatusNotFound, msg: "Sharing is off on this server (no link store)."}
		}
		id := chi.URLParam(r, "id")
		if !store.ValidID(id) {
			return httpError{status: http.StatusNotFound, msg: "There is no shared link with this id."}
		}
		l, err := s.cfg.Links.Get(r.Context(), id)
		if errors.Is(err, store.ErrNotFound) {
			return httpError{status: http.StatusNotFound, msg: "There is no shared link with this id."}
		}
		if err != nil {
			s.metrics.storeErrors.Inc()
			return err
		}
		st, err := decodeStateJSON(l.State)
		if err != nil {
			return err
		}
		v, err := readView(r)
		if err != nil {
			return err
		}
		v.state = st
		return s.renderViewWith(w, r, v, func(p *pageExtras, tl *engine.Timeline) {
			p.shortLink = "/s/" + id
			cur := engine.Version().Istio
			if l.Istio != "" && l.Istio != cur && tl != nil {
				same := "the output differs from what it showed then"
				if l.OutputHash != "" && outputHash(tl) == l.OutputHash {
					same = "the output is the same as it was then"
				}
				p.banner = fmt.Sprintf("This link was made with Istio %s and is shown with Istio %s: %s.", l.Istio, cur, same)
			}
		})
	})
}
