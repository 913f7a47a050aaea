package handlers

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/permalink"
	"github.com/sidecarlab/sidecarlab/wording"
)

// shareURL is the address of a short link: under the configured public address, never one
// taken from the request (its Host header is the client's to choose).
func (s *server) shareURL(id string) string {
	return strings.TrimSuffix(s.cfg.PublicURL, "/") + "/s/" + id
}

// handleAPIShare is POST /api/v1/share: the same state as /api/v1/inject, stored as a short
// link the way the form's Share stores it (the same state gets the same id).
func (s *server) handleAPIShare() http.Handler {
	return s.handler(func(w http.ResponseWriter, r *http.Request) error {
		if s.cfg.Links == nil {
			return errNoSharing
		}
		var req api.ShareRequest
		if err := readJSONBody(w, r, s.cfg.MaxBodyBytes, &req); err != nil {
			return err
		}
		if err := s.ownMesh(r.Context(), &req.InjectRequest); err != nil {
			return err
		}
		if err := checkNamespace(req.Settings.Namespace); err != nil {
			return err // a link with it would not load: 422, naming the field
		}
		if req.Redact && req.AllowSecrets {
			return httpError{status: http.StatusBadRequest, id: "errors.api.redact-and-allow", args: []any{"Redact", `"redact"`, "Allow", `"allowSecrets"`}}
		}
		choice := secretsAsk
		switch {
		case req.Redact:
			choice = secretsRedact
		case req.AllowSecrets:
			choice = secretsAllow
		}
		st := canonical(api.State{Version: permalink.Version, Istio: engine.Version().Istio, Manifest: req.Manifest, Steps: req.Steps, Settings: req.Settings})
		st, findings, total, err := secretsGate(st, choice)
		if err != nil {
			return err
		}
		if total > 0 {
			words := wording.For(r.Context())
			return writeJSON(w, http.StatusUnprocessableEntity, api.SecretsResponse{
				Error:   api.ErrorBody{Status: http.StatusUnprocessableEntity, Message: words.SecretsFound(total) + " " + words.SecretsAPIChoice()},
				Secrets: words.SecretFindings(findings),
				Total:   total,
			})
		}
		l, err := s.linkFor(r.Context(), st)
		if err != nil {
			return err
		}
		id, err := s.putLink(r.Context(), l)
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusCreated, api.ShareResponse{ID: id, URL: s.shareURL(id)})
	})
}

// handleAPILink is GET /api/v1/links/{id}: the state stored under a short link, as JSON (the
// state.json of /s/{id}/state.json).
func (s *server) handleAPILink() http.Handler {
	return s.handler(func(w http.ResponseWriter, r *http.Request) error {
		_, st, err := s.sharedLink(r.Context(), chi.URLParam(r, "id"))
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, st)
	})
}

// readJSONBody reads an API request's body into v: application/json and nothing else (a
// browser sends no other page's fetch with it unless CORS allows it, which it does not, and a
// form cannot send it at all), at most limit bytes, UTF-8, one JSON object with no unknown
// fields.
func readJSONBody(w http.ResponseWriter, r *http.Request, limit int64, v any) error {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return httpError{status: http.StatusUnsupportedMediaType, id: "errors.api.content-type", args: []any{"Type", "application/json", "Header", "Content-Type: application/json"}}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return mbe
		}
		return httpError{status: http.StatusBadRequest, id: "errors.api.body"}
	}
	if !utf8.Valid(body) {
		return httpError{status: http.StatusBadRequest, id: "errors.api.utf8"}
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		// The decoder's message may quote the request (an unknown field's name): bounded.
		return httpError{status: http.StatusBadRequest, id: "errors.api.json", args: []any{"Reason", bound(err.Error(), 300)}}
	}
	if _, err := dec.Token(); err != io.EOF {
		return httpError{status: http.StatusBadRequest, id: "errors.api.trailing"}
	}
	return nil
}
