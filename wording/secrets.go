package wording

import "github.com/sidecarlab/sidecarlab/engine/secrets"

// secretKinds are the kinds of secrets.Finding sidecarlab words
// (wording.secrets.kind.<kind>), as a clause after where ("document N, line L: ").
var secretKinds = map[secrets.Kind]bool{
	secrets.Document:           true,
	secrets.DataValue:          true,
	secrets.EnvName:            true,
	secrets.FlagValue:          true,
	secrets.URLCredential:      true,
	secrets.SameValue:          true,
	secrets.Comment:            true,
	secrets.PrivateKey:         true,
	secrets.RegistryCredential: true,
	secrets.HighEntropy:        true,
	secrets.KnownFormat:        true,
}

// SecretKind says what kind of secret a finding is (with gitleaks' rule for a known format).
func (w Words) SecretKind(f secrets.Finding) string {
	if !secretKinds[f.Kind] {
		return ""
	}
	return w.loc().T("wording.secrets.kind."+string(f.Kind), "rule", f.Rule)
}

// SecretWhere says where a finding is: a document and a line of the manifest, an annotation
// step, an install option, a line of the install overlay, or a label of the namespace.
func (w Words) SecretWhere(f secrets.Finding) string {
	switch {
	case f.Setting == secrets.SettingInstallSet:
		return w.loc().T("wording.secrets.install-set", "n", f.Line)
	case f.Setting == secrets.SettingInstallOverlay:
		return w.loc().T("wording.secrets.install-overlay", "line", f.Line)
	case f.Setting == secrets.SettingNamespaceLabel:
		return w.loc().T("wording.secrets.namespace-label")
	case f.Setting == secrets.SettingMesh:
		return w.loc().T("wording.secrets.mesh", "line", f.Line)
	case f.Step > 0:
		return w.loc().T("wording.secrets.step", "step", f.Step)
	}
	return w.where(f.Doc, f.Line, 0, "")
}

// SecretLine is one finding on one line, for lists and the CLI: where it is and what it is,
// never the value.
func (w Words) SecretLine(f secrets.Finding) string {
	s := w.SecretWhere(f)
	if f.Path != "" {
		s += w.loc().T("wording.where.sep") + f.Path
	}
	return w.at(s, w.SecretKind(f)+" ("+f.Excerpt+")")
}

// SecretFinding is a finding with its words, as the JSON API gives it.
type SecretFinding struct {
	secrets.Finding
	Message string `json:"message"`
}

// SecretFindings words findings for JSON.
func (w Words) SecretFindings(fs []secrets.Finding) []SecretFinding {
	out := make([]SecretFinding, 0, len(fs))
	for _, f := range fs {
		out = append(out, SecretFinding{Finding: f, Message: w.SecretKind(f)})
	}
	return out
}

// SecretsFound is the headline over the list, before anything is stored: what was found (in
// the manifest or the annotation steps) and what a short link would do with it.
func (w Words) SecretsFound(total int) string {
	return w.loc().N("wording.secrets.found", total, "n", thousands(total))
}

// SecretsChoice is what the person can do about it, and what redacting keeps.
func (w Words) SecretsChoice() string { return w.loc().T("wording.secrets.choice") }

// SecretsAPIChoice is SecretsFound's advice for the API and the CLI.
func (w Words) SecretsAPIChoice() string { return w.loc().T("wording.secrets.api-choice") }

// SecretsInLink warns on a page whose address carries its state: the long link holds the
// manifest itself, so whoever it is sent to reads these values.
func (w Words) SecretsInLink(total int) string {
	return w.loc().N("wording.secrets.in-link", total, "n", thousands(total))
}

// SecretsMore says how many findings a bounded list leaves out.
func (w Words) SecretsMore(shown, total int) string {
	if total <= shown {
		return ""
	}
	return w.loc().T("wording.secrets.more", "n", thousands(total-shown))
}
