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
	"github.com/sidecarlab/sidecarlab/web"
)

// LinkStore keeps shared links (cmd/sidecarlab puts package store's SQLite or PostgreSQL behind
// it). The store makes a link's id from its state, so the same state always gets the same short
// link and a stored link is never overwritten.
type LinkStore interface {
	// Put stores l, unless a link with the same state is stored, and returns its id.
	Put(ctx context.Context, l Link) (id string, err error)
	// Get returns the link stored under id, or ErrLinkNotFound when there is none, including
	// for an id the store could never have made (it is not looked up).
	Get(ctx context.Context, id string) (Link, error)
}

// Link is one shared state.
type Link struct {
	// State is the state's JSON (StateJSON), exactly as it was shared.
	State []byte
	// Istio is the Istio release the link was made with, and OutputHash (outputHash) the hash of
	// the output it showed then, so that a later Istio can say whether its output differs.
	Istio      string
	OutputHash string
}

// ErrLinkNotFound is a LinkStore's answer for an id it does not have.
var ErrLinkNotFound = errors.New("no such shared link")

var errNoSharing = httpError{status: http.StatusNotFound, msg: "Sharing is off on this server (no link store)."}

// sharedLink loads the link with the id and its state: 404 when there is none, a counted store
// error when the store fails.
func (s *server) sharedLink(ctx context.Context, id string) (Link, State, error) {
	if s.cfg.Links == nil {
		return Link{}, State{}, errNoSharing
	}
	l, err := s.cfg.Links.Get(ctx, id)
	if errors.Is(err, ErrLinkNotFound) {
		return Link{}, State{}, httpError{status: http.StatusNotFound, msg: "There is no shared link with this id."}
	}
	if err != nil {
		s.metrics.storeErrors.Inc()
		return Link{}, State{}, err
	}
	st, err := decodeStateJSON(l.State)
	return l, st, err
}

func outputHash(tl *engine.Timeline) string {
	sum := sha256.Sum256([]byte(tl.Steps[len(tl.Steps)-1].Output()))
	return hex.EncodeToString(sum[:])
}

// handleShare stores the form's state and redirects to its short link, /s/<id>.
func (s *server) handleShare() http.Handler {
	return s.pageHandler(func(w http.ResponseWriter, r *http.Request) error {
		if s.cfg.Links == nil {
			return errNoSharing
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
		id, err := s.cfg.Links.Put(r.Context(), Link{State: StateJSON(v.state), Istio: v.state.Istio, OutputHash: hash})
		if err != nil {
			s.metrics.storeErrors.Inc()
			return err
		}
		target := "/s/" + id
		q := url.Values{}
		if v.tab != "" && v.tab != web.DefaultTab {
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
		id := chi.URLParam(r, "id")
		l, st, err := s.sharedLink(r.Context(), id)
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
