package handlers

// The secrets gate: what every share passes before anything is stored (the manifest, the
// steps and the settings scanned for values that look secret, and the person's choice), and the
// page that asks.

import (
	"crypto/sha256"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/input"
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

// Package secrets reads plain values, not the engine's types: these give it a state's manifest,
// steps and settings, put its redactions back in their places, and report a document it cannot
// redact as every other problem with the input is reported.

// redactManifest is secrets.Redact of a state's manifest.
func redactManifest(manifest string) (string, error) {
	red, err := secrets.Redact([]byte(manifest))
	return red, redactError(err)
}

// redactError is a document secrets.Redact could not redact as an input.Error of the
// manifest, which handlers classify and word like any other (input.<ID> in the catalogs).
func redactError(err error) error {
	var re *secrets.Error
	if !errors.As(err, &re) {
		return err
	}
	return &input.Error{Doc: re.Doc, Line: re.Line, Field: "manifest", ID: re.ID, Params: re.Params}
}

// secretSteps are steps as package secrets reads them.
func secretSteps(steps []input.Step) []secrets.Step {
	out := make([]secrets.Step, len(steps))
	for i, st := range steps {
		out[i] = secrets.Step(st)
	}
	return out
}

// scanSteps is secrets.ScanSteps of a state's steps.
func scanSteps(steps []input.Step) []secrets.Finding {
	return secrets.ScanSteps(secretSteps(steps))
}

// redactSteps is steps with the values secrets.RedactSteps replaces replaced.
func redactSteps(steps []input.Step) []input.Step {
	out := slices.Clone(steps)
	for i, st := range secrets.RedactSteps(secretSteps(steps)) {
		out[i].Value = st.Value
	}
	return out
}

// meshParts are the texts of a mesh's own configuration, by the names its JSON gives them.
func meshParts(m *engine.OwnMesh) []struct {
	name string
	text *string
} {
	return []struct {
		name string
		text *string
	}{{"injectorConfig", &m.InjectorConfig}, {"values", &m.Values}, {"meshConfig", &m.MeshConfig}, {"webhooks", &m.Webhooks}}
}

// secretSettings are the texts of s package secrets reads.
func secretSettings(s engine.Settings) secrets.Settings {
	out := secrets.Settings{Set: s.Install.Set, Overlay: s.Install.Overlay, Labels: s.Namespace.Labels}
	for _, p := range meshParts(&s.Install.Mesh) {
		out.Mesh = append(out.Mesh, secrets.MeshPart{Name: p.name, Text: *p.text})
	}
	return out
}

// scanSettings is secrets.ScanSettings of a state's settings.
func scanSettings(s engine.Settings) []secrets.Finding {
	return secrets.ScanSettings(secretSettings(s))
}

// redactSettings is s with its texts as secrets.RedactSettings redacts them.
func redactSettings(s engine.Settings) (engine.Settings, error) {
	red, err := secrets.RedactSettings(secretSettings(s))
	if err != nil {
		return s, redactError(err)
	}
	s.Install.Set, s.Install.Overlay, s.Namespace.Labels = red.Set, red.Overlay, red.Labels
	for i, p := range meshParts(&s.Install.Mesh) {
		*p.text = red.Mesh[i].Text
	}
	return s, nil
}
