package handlers

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/secrets"
	"github.com/sidecarlab/sidecarlab/web"
	"github.com/sidecarlab/sidecarlab/wording"
)

// secretsChoice is what the person chose to do with values that look secret.
type secretsChoice string

const (
	secretsAsk    secretsChoice = ""
	secretsRedact secretsChoice = "redact"
	secretsAllow  secretsChoice = "allow"
)

// canonical is st written the one way the form writes it, so that the same view gets the
// same short link however it was shared (the form, the API, the CLI): the default mode is
// empty and lines end in "\n". The Kubernetes version is kept in every mode: the Cluster tab
// runs the webhook and Pod Security at it whatever the mode (injection outside webhook mode
// does not read it, nor does its memo key).
func canonical(st api.State) api.State {
	st.Manifest = strings.ReplaceAll(st.Manifest, "\r\n", "\n")
	st.Settings.Install.Overlay = strings.ReplaceAll(st.Settings.Install.Overlay, "\r\n", "\n")
	if st.Settings.Mode == engine.ModeKubeInject {
		st.Settings.Mode = ""
	}
	return st
}

// readSecretsChoice reads the share form's "secrets" field.
func readSecretsChoice(v string) (secretsChoice, error) {
	switch c := secretsChoice(v); c {
	case secretsAsk, secretsRedact, secretsAllow:
		return c, nil
	}
	return "", httpError{status: http.StatusBadRequest, id: "errors.share.secrets-choice", args: []any{"Field", `"secrets"`, "Redact", `"redact"`, "Allow", `"allow"`}}
}

// secretsGate is what every share passes before anything is stored: the manifest, the
// annotation steps and the settings (install options, namespace labels) are scanned
// (package secrets: secrets.Scan, secrets.ScanSteps, secrets.ScanSettings); with findings and no choice, they
// are returned (at most secrets.MaxFindings; total > 0) and nothing may be stored; with
// secretsRedact, the state comes back with all three redacted; with secretsAllow, as it is.
func secretsGate(st api.State, choice secretsChoice) (api.State, []secrets.Finding, int, error) {
	switch choice {
	case secretsAllow:
		return st, nil, 0, nil
	case secretsRedact:
		red, err := redactManifest(st.Manifest)
		if err != nil {
			return st, nil, 0, err
		}
		st.Manifest = red
		st.Steps = redactSteps(st.Steps)
		if st.Settings, err = redactSettings(st.Settings); err != nil {
			return st, nil, 0, err
		}
		return st, nil, 0, nil
	}
	findings, total := secrets.Scan([]byte(st.Manifest))
	for _, more := range [][]secrets.Finding{scanSteps(st.Steps), scanSettings(st.Settings)} {
		findings = append(findings, more[:min(len(more), max(secrets.MaxFindings-len(findings), 0))]...)
		total += len(more)
	}
	return st, findings, total, nil
}

// shareSecretsView is the page that lists the findings and asks, in words' language.
func shareSecretsView(words wording.Words, v view, findings []secrets.Finding, total int) web.ShareSecrets {
	p := web.ShareSecrets{
		Headline: words.SecretsFound(total),
		Choice:   words.SecretsChoice(),
		More:     words.SecretsMore(len(findings), total),
		Form:     formOf(v),
		Cancel:   v.permalink(),
	}
	for _, f := range findings {
		p.Rows = append(p.Rows, web.SecretRow{Where: words.SecretWhere(f), Kind: words.SecretKind(f), Path: f.Path, Excerpt: f.Excerpt})
	}
	return p
}

// linkSecretsBanner warns on a view whose address carries its state (a long ?s= link) when
// the manifest holds values that look secret. It does not block: the person already has the
// link; the warning says what it gives away.
func (s *server) linkSecretsBanner(words wording.Words, v view) func(*pageExtras, *engine.Timeline) {
	return func(p *pageExtras, _ *engine.Timeline) {
		if total := s.secretTotals.total(v.state.Manifest) + len(scanSteps(v.state.Steps)) + len(scanSettings(v.state.Settings)); total > 0 {
			p.banner = words.SecretsInLink(total)
		}
	}
}

// maxSecretTotals bounds secretTotals: 4,096 entries of a 32-byte hash and an int.
const maxSecretTotals = 4096

// secretTotals remembers how many values that look secret each manifest holds, by its hash, so
// that a view rendered again (another tab, a toggle's fragment, a reload) does not parse its
// manifest again: a scan is ~70 µs for a Deployment and ~65 ms for 500 of them (the steps, at
// most a hundred values, are scanned each time). When full, it starts over.
type secretTotals struct {
	mu sync.Mutex
	m  map[[sha256.Size]byte]int
}

func (c *secretTotals) total(manifest string) int {
	key := sha256.Sum256([]byte(manifest))
	c.mu.Lock()
	n, ok := c.m[key]
	c.mu.Unlock()
	if ok {
		return n
	}
	_, n = secrets.Scan([]byte(manifest))
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxSecretTotals {
		c.m = make(map[[sha256.Size]byte]int)
	}
	c.m[key] = n
	return n
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
		st := canonical(api.State{Version: StateVersion, Istio: engine.Version().Istio, Manifest: req.Manifest, Steps: req.Steps, Settings: req.Settings})
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
