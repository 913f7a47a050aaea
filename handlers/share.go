package handlers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/engine/secrets"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/permalink"
	"github.com/sidecarlab/sidecarlab/web"
	"github.com/sidecarlab/sidecarlab/wording"
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

// ErrLinkStoreTimeout is the cause (context.Cause) a LinkStore call's context ends with when the
// store's own timeout (Config.StoreTimeout) cut the call off. A store that keeps its health
// (LinkStoreHealth) counts that against itself, and a context that ended with any other cause
// not: the request ended first (the client went away, the request's deadline passed), which
// says nothing about the store.
var ErrLinkStoreTimeout = errors.New("the link store did not answer within its timeout")

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

// The failures of a link store that the handlers tell apart (a LinkStore returns them, wrapped or
// not; cmd/sidecarlab's adapter maps the database's errors to them). Any other error of a store
// is taken as ErrLinkStoreUnavailable: the store did not answer.
var (
	// ErrLinkStoreFull: the store's quota is used up or its disk is full (507).
	ErrLinkStoreFull = errors.New("the link store is full")
	// ErrLinkStoreReadOnly: the store can be read but not written (503).
	ErrLinkStoreReadOnly = errors.New("the link store is read-only")
	// ErrLinkStoreUnavailable: the store does not answer, or was never reached (503).
	ErrLinkStoreUnavailable = errors.New("the link store is unavailable")
)

// LinkStoreHealth is what a LinkStore may also report, for /readyz and /metrics: nil while it
// answers, else one of the ErrLinkStore… errors. It must not wait on the database.
type LinkStoreHealth interface {
	Health() error
}

var errNoSharing = httpError{status: http.StatusNotFound, id: "errors.share.off"}

// keepsView is said with every store failure: the view itself never needed the store.
const keepsView = msgRef("errors.store.keeps-view")

// storeError turns a link store's failure into what the person is told: never the generic 500,
// always why and, where waiting helps, Retry-After. op is "share" or "open". The store's own
// error is logged and counted; a client that went away stays a client that went away.
func (s *server) storeError(reqCtx, storeCtx context.Context, op string, err error) error {
	if reqCtx.Err() != nil {
		return reqCtx.Err()
	}
	s.metrics.storeErrors.Inc()
	s.log.WarnContext(reqCtx, "link store", "op", op, "err", err, "request_id", middleware.GetReqID(reqCtx))
	what := msgRef("errors.store.share-unavailable")
	if op == "open" {
		what = msgRef("errors.store.open-unavailable")
	}
	switch {
	case errors.Is(err, ErrLinkStoreFull):
		if op == "open" {
			// A full store still reads; this is a store that failed for some other reason too.
			break
		}
		return httpError{status: http.StatusInsufficientStorage, id: "errors.share.full", args: []any{"KeepsView", keepsView}}
	case errors.Is(err, ErrLinkStoreReadOnly):
		return httpError{status: http.StatusServiceUnavailable, retryAfter: "60", id: "errors.store.read-only", args: []any{"What", what, "KeepsView", keepsView}}
	case storeCtx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
		return httpError{status: http.StatusServiceUnavailable, retryAfter: "30", id: "errors.store.timeout", args: []any{"What", what, "KeepsView", keepsView}}
	}
	return httpError{status: http.StatusServiceUnavailable, retryAfter: "30", id: "errors.store.down", args: []any{"What", what, "KeepsView", keepsView}}
}

// linkStoreState is the store's state for /readyz?verbose — off, ok, or what is wrong — and
// whether sharing works (or is off by choice, which is not a fault).
func (s *server) linkStoreState() (state string, ok bool) {
	if s.cfg.Links == nil {
		return "off", true
	}
	h, isHealth := s.cfg.Links.(LinkStoreHealth)
	if !isHealth {
		return "ok", true
	}
	switch err := h.Health(); {
	case err == nil:
		return "ok", true
	case errors.Is(err, ErrLinkStoreFull):
		return "full (sharing is unavailable; links open)", false
	case errors.Is(err, ErrLinkStoreReadOnly):
		return "read-only (sharing is unavailable; links open)", false
	default:
		return "unavailable (sharing and shared links answer 503; reconnecting)", false
	}
}

// storeContext is the context of one call to the link store: the request's, cut off after the
// store's own timeout with the cause ErrLinkStoreTimeout.
func (s *server) storeContext(reqCtx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(reqCtx, s.cfg.StoreTimeout, ErrLinkStoreTimeout)
}

// sharedLink loads the link with the id and its state: 404 when there is none, a counted store
// error when the store fails. reqCtx is the request's.
func (s *server) sharedLink(reqCtx context.Context, id string) (Link, api.State, error) {
	if s.cfg.Links == nil {
		return Link{}, api.State{}, errNoSharing
	}
	ctx, cancel := s.storeContext(reqCtx)
	defer cancel()
	l, err := s.cfg.Links.Get(ctx, id)
	if errors.Is(err, ErrLinkNotFound) {
		return Link{}, api.State{}, httpError{status: http.StatusNotFound, id: "errors.share.no-link"}
	}
	if err != nil {
		return Link{}, api.State{}, s.storeError(reqCtx, ctx, "open", err)
	}
	st, err := decodeStateJSON(l.State)
	return l, st, err
}

// kindRE finds a Kubernetes object's kind in a manifest, in YAML or JSON, even in a document
// that does not parse (a broken manifest is shared to ask for help with it).
var kindRE = regexp.MustCompile(`(?m)(^|[{,\s])["']?kind["']?\s*:\s*["']?[A-Za-z]`)

// shareable refuses what is not worth a stored link: a state whose JSON is larger than a POST
// may be (JSON escaping can make a state several times its form), and a manifest with no
// Kubernetes object in it at all. States Istio rejects are shareable: they show its error.
func (s *server) shareable(st api.State, js []byte) error {
	if int64(len(js)) > s.cfg.MaxBodyBytes {
		return httpError{status: http.StatusRequestEntityTooLarge, id: "errors.share.too-large", args: []any{"Limit", byteCount(s.cfg.MaxBodyBytes), "KeepsView", keepsView}}
	}
	if !kindRE.MatchString(st.Manifest) {
		return httpError{status: http.StatusUnprocessableEntity, id: "errors.share.no-object", args: []any{"Field", "kind:"}}
	}
	return nil
}

func outputHash(tl *engine.Timeline) string {
	sum := sha256.Sum256([]byte(tl.Steps[len(tl.Steps)-1].Output()))
	return hex.EncodeToString(sum[:])
}

// handleShare stores the form's state and redirects to its short link, /s/<id>. A manifest with
// values that look secret is not stored until the person chose (the form's "secrets" field):
// the page lists them and offers to redact them or to share as is.
func (s *server) handleShare() http.Handler {
	return s.handler(func(w http.ResponseWriter, r *http.Request) error {
		if s.cfg.Links == nil {
			return errNoSharing
		}
		v, err := s.formView(w, r)
		if err != nil {
			return err
		}
		choice, err := readSecretsChoice(r.PostForm.Get("secrets"))
		if err != nil {
			return withForm{err: err, form: formOf(v)}
		}
		st, findings, total, err := secretsGate(v.state, choice)
		if err != nil {
			return withForm{err: err, form: formOf(v)}
		}
		if total > 0 {
			return render(w, r, http.StatusOK, web.ShareSecretsPage(shareSecretsView(wording.For(r.Context()), v, findings, total), versionLine()))
		}
		l, err := s.linkFor(r.Context(), st)
		if err != nil {
			return withForm{err: err, form: formOf(v)}
		}
		id, err := s.putLink(r.Context(), l)
		if err != nil {
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
		http.Redirect(w, r, web.CarryLang(r.Context(), target), http.StatusSeeOther)
		return nil
	})
}

// linkFor is the link a state is stored as, after the checks every share passes (shareable):
// its JSON and the hash of its output. A state Istio rejects is stored too (it shows the same
// error); a state that cannot be shown at all (too slow, the server busy) is an error.
func (s *server) linkFor(ctx context.Context, st api.State) (Link, error) {
	js := permalink.JSON(st)
	if err := s.shareable(st, js); err != nil {
		return Link{}, err
	}
	tl, err := s.timeline(ctx, st)
	hash := ""
	var ie *input.Error
	switch {
	case err == nil:
		hash = outputHash(tl)
	case engine.RefusedByPolicy(err):
		// What this server will not run (templates of the user's own, on a locked-down server)
		// it does not keep either: the refusal, not a link.
		return Link{}, err
	case errors.As(err, &ie):
		// A state Istio rejects can be shared too: it shows the same error.
	default:
		return Link{}, err
	}
	return Link{State: js, Istio: st.Istio, OutputHash: hash}, nil
}

// putLink stores a link and returns its id: the one way a short link is made (the form's Share,
// the API, the CLI through the API). Store failures come back as storeError's answers.
func (s *server) putLink(reqCtx context.Context, l Link) (string, error) {
	ctx, cancel := s.storeContext(reqCtx)
	defer cancel()
	id, err := s.cfg.Links.Put(ctx, l)
	if err != nil {
		return "", s.storeError(reqCtx, ctx, "share", err)
	}
	return id, nil
}

// handleShortLink renders a stored state. Opened under another Istio, it says so, and whether
// the output differs from the one the link showed when it was made.
func (s *server) handleShortLink() http.Handler {
	return s.handler(func(w http.ResponseWriter, r *http.Request) error {
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
				id := "errors.link.istio-differs"
				if l.OutputHash != "" && outputHash(tl) == l.OutputHash {
					id = "errors.link.istio-same"
				}
				p.banner = i18n.FromContext(r.Context()).T(id, "Then", l.Istio, "Now", cur)
			}
		})
	})
}

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
		choice, err := s.apiShareChoice(r, &req)
		if err != nil {
			return err
		}
		st := canonical(api.State{Version: permalink.Version, Istio: engine.Version().Istio, Manifest: req.Manifest, Steps: req.Steps, Settings: req.Settings})
		st, findings, total, err := secretsGate(st, choice)
		if err != nil {
			return err
		}
		if total > 0 {
			return writeSecretsFound(w, r, findings, total)
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

// apiShareChoice reads what a share's (or a room's) API request says beside its state: its own
// mesh and namespace, read as the inject API reads them (a namespace a link could not load is a
// 422 naming the field), and what to do with values that look secret.
func (s *server) apiShareChoice(r *http.Request, req *api.ShareRequest) (secretsChoice, error) {
	if err := s.ownMesh(r.Context(), &req.InjectRequest); err != nil {
		return "", err
	}
	if err := checkNamespace(req.Settings.Namespace); err != nil {
		return "", err
	}
	switch {
	case req.Redact && req.AllowSecrets:
		return "", httpError{status: http.StatusBadRequest, id: "errors.api.redact-and-allow", args: []any{"Redact", `"redact"`, "Allow", `"allowSecrets"`}}
	case req.Redact:
		return secretsRedact, nil
	case req.AllowSecrets:
		return secretsAllow, nil
	}
	return secretsAsk, nil
}

// writeSecretsFound is the API's 422 for a state with values that look secret and no choice:
// the findings (never the values) and how to choose.
func writeSecretsFound(w http.ResponseWriter, r *http.Request, findings []secrets.Finding, total int) error {
	words := wording.For(r.Context())
	return writeJSON(w, http.StatusUnprocessableEntity, api.SecretsResponse{
		Error:   api.ErrorBody{Status: http.StatusUnprocessableEntity, Message: words.SecretsFound(total) + " " + words.SecretsAPIChoice()},
		Secrets: words.SecretFindings(findings),
		Total:   total,
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
		return httpError{status: http.StatusBadRequest, id: "errors.api.json", args: []any{"Reason", web.Bound(err.Error(), 300)}}
	}
	if _, err := dec.Token(); err != io.EOF {
		return httpError{status: http.StatusBadRequest, id: "errors.api.trailing"}
	}
	return nil
}
