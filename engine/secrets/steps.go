package secrets

import (
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Step is an annotation step as ScanSteps reads it: it sets Key to Value, or removes Key. Its
// fields are input.Step's, in the same order, so that each converts to the other.
type Step struct {
	Key, Value string
	Remove     bool
}

// ScanSteps looks at the values of annotation steps as Scan looks at a manifest's
// values: a private key, a registry credential, a random-looking token, a credential of a known
// format, a value whose annotation's name says it is secret (example.com/admin-password), a
// YAML value read as a manifest (proxy.istio.io/config's proxyMetadata: DB_PASSWORD: …), and
// the secrets of a file or a command line a value holds (textSecrets). Step names a finding.
func ScanSteps(steps []Step) []Finding {
	var out []Finding
	for i, st := range steps {
		if f, _, ok := stepFinding(st); ok {
			f.Step = i + 1
			out = append(out, f)
		}
	}
	return out
}

// stepFinding is the finding of one step, if its value holds a secret, and the value redacted:
// Redacted in place of all of it, or of the secrets in it where it is YAML or a file whose
// other lines are kept.
func stepFinding(st Step) (Finding, string, bool) {
	v := st.Value
	if st.Remove || v == "" || v == Redacted {
		return Finding{}, "", false
	}
	f := Finding{Excerpt: excerpt(st.Key)}
	if kind, ok := valueKind(v); ok {
		f.Kind = kind
		return f, Redacted, true
	}
	if keyName(st.Key) && nameValue(v) {
		f.Kind = EnvName
		return f, Redacted, true
	}
	if yamlMapping(v) {
		if hits := scanSecrets(splitScanDocs([]byte(v))); len(hits) > 0 {
			f.Kind, f.Rule, f.Path = hits[0].Kind, hits[0].Rule, hits[0].Path
			red, err := Redact([]byte(v))
			if err != nil {
				red = Redacted
			}
			return f, red, true
		}
		return Finding{}, "", false
	}
	if sp := textSecrets(v); len(sp) > 0 {
		f.Kind = sp[0].kind
		return f, replaceSpans(v, sp), true
	}
	if ls := leaks(v); len(ls) > 0 {
		f.Kind, f.Rule = KnownFormat, ls[0].Rule
		return f, Redacted, true
	}
	return Finding{}, "", false
}

// yamlMapping says whether v is a YAML mapping (proxy.istio.io/config's ProxyConfig, a JSON
// object), to be read as a manifest is.
func yamlMapping(v string) bool {
	if !strings.Contains(v, ":") {
		return false
	}
	var root yaml.Node
	return yaml.Unmarshal([]byte(v), &root) == nil && len(root.Content) > 0 && root.Content[0].Kind == yaml.MappingNode
}

// RedactSteps is steps with the secrets ScanSteps finds replaced by Redacted: all of a value,
// or the secrets in a YAML value or a file (a proxy.istio.io/config keeps its other fields). A
// redacted value of an annotation Istio reads changes what it does; the others reach the output
// as they are.
func RedactSteps(steps []Step) []Step {
	out := slices.Clone(steps)
	for i, st := range steps {
		if _, red, ok := stepFinding(st); ok {
			out[i].Value = red
		}
	}
	return out
}
