package explain

import (
	"fmt"

	"github.com/sidecarlab/sidecarlab/engine"
)

// secretKinds say what each kind of engine.SecretFinding is, as a clause after "document N,
// line L:".
var secretKinds = map[engine.SecretKind]string{
	engine.SecretDocument:           "a Secret; its values are listed below it",
	engine.SecretDataValue:          "a value of a Secret's data or stringData",
	engine.SecretEnvName:            "an environment variable whose name says it holds a password, token, key or secret",
	engine.SecretPrivateKey:         "a private key",
	engine.SecretRegistryCredential: "a container registry credential (a Docker config)",
	engine.SecretHighEntropy:        "a long random-looking string, such as an API key or token",
}

// SecretKind says what a kind of secret finding is.
func (w Words) SecretKind(k engine.SecretKind) string { return secretKinds[k] }

// SecretWhere says where a finding is: a document and a line of the manifest, or an annotation
// step.
func (w Words) SecretWhere(f engine.SecretFinding) string {
	if f.Step > 0 {
		return fmt.Sprintf("annotation step %d", f.Step)
	}
	return fmt.Sprintf("document %d, line %d", f.Doc, f.Line)
}

// SecretLine is one finding on one line, for lists and the CLI: where it is and what it is,
// never the value.
func (w Words) SecretLine(f engine.SecretFinding) string {
	s := w.SecretWhere(f)
	if f.Path != "" {
		s += ", " + f.Path
	}
	return s + ": " + w.SecretKind(f.Kind) + " (" + f.Excerpt + ")"
}

// SecretFinding is a finding with its words, as the JSON API gives it.
type SecretFinding struct {
	engine.SecretFinding
	Message string `json:"message"`
}

// SecretFindings words findings for JSON.
func (w Words) SecretFindings(fs []engine.SecretFinding) []SecretFinding {
	out := make([]SecretFinding, 0, len(fs))
	for _, f := range fs {
		out = append(out, SecretFinding{SecretFinding: f, Message: w.SecretKind(f.Kind)})
	}
	return out
}

// SecretsFound is the headline over the list, before anything is stored: what was found (in
// the manifest or the annotation steps) and what a short link would do with it.
func (w Words) SecretsFound(total int) string {
	return fmt.Sprintf("This view looks like it holds secrets (%s). A short link stores the manifest and its annotations on this server, and anyone with the link can read it. Nothing has been stored.", count(total, "finding"))
}

// w.SecretsChoice() is what the person can do about it, and what redacting keeps.
func (w Words) SecretsChoice() string {
	return "Redact and share replaces each of these values with <redacted> and keeps everything else: the injected output is the same except for those values. Share as is stores them as they are."
}

// w.SecretsAPIChoice() is SecretsFound's advice for the API and the CLI.
func (w Words) SecretsAPIChoice() string {
	return `Send "redact": true to store the manifest with each of these values replaced by <redacted> (sidecarlab share --redact), or "allowSecrets": true to store it as it is (--allow-secrets).`
}

// SecretsInLink warns on a page whose address carries its state: the long link holds the
// manifest itself, so whoever it is sent to reads these values.
func (w Words) SecretsInLink(total int) string {
	return fmt.Sprintf("This page's address holds the whole manifest and its annotations, which look like they hold secrets (%s): anyone you send this link to can read them, and the address may be kept in browser history and server logs. Share a redacted short link instead.", count(total, "finding"))
}

// SecretsMore says how many findings a bounded list leaves out.
func (w Words) SecretsMore(shown, total int) string {
	if total <= shown {
		return ""
	}
	return fmt.Sprintf("and %s more", thousands(total-shown))
}
