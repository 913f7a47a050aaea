// Package secrets finds what should not be shared in what a person gives sidecarlab, and
// redacts it. A share stores its state behind a permanent link, and a long link carries it in its
// address: before either, the manifest, the annotation steps and the settings are scanned here
// (Scan, ScanSteps, ScanSettings) for Secret documents and their values, values whose names say
// they are passwords or tokens (names.go), the secrets of files and command lines inside values
// (text.go), private keys, registry credentials, URLs and flags with passwords, random-looking
// tokens, and credentials of the formats gitleaks' default rules know; a scalar is read as YAML
// decodes it (escapes, continued lines, tags).
// A finding names where the value is and never carries it. Redact (RedactSteps, RedactSettings)
// replaces each flagged value (or the flagged part of a file or command line) with Redacted and
// keeps every other byte, so that a redacted manifest injects as the original does with the
// values replaced.
//
// The scan reads the text alone: it runs on manifests Istio rejects and on documents that do not
// parse, and it needs nothing of the engine (the engine does not need it either).
package secrets

// Kind says why a value looks like something that should not be shared. The words for
// each kind are in package wording.
type Kind string

const (
	// Document: the document is a Secret (its data values are findings of their own).
	Document Kind = "secret-document"
	// DataValue: a value under a Secret's data or stringData.
	DataValue Kind = "data-value"
	// EnvName: a value whose name says password, token, key, secret, …: an env variable's, a
	// mapping's key (a ConfigMap's data, an annotation, a label, a Helm value), a key inside a
	// file the value holds (properties, ini, .env, .netrc; .pgpass's password field), a
	// connection string's Password=.
	EnvName Kind = "env-name"
	// HighEntropy: a long token that looks random (see highEntropy).
	HighEntropy Kind = "high-entropy"
	// PrivateKey: a PEM private key (or a Secret value that decodes to one).
	PrivateKey Kind = "private-key"
	// RegistryCredential: a Docker config (a dockerconfigjson Secret's value, or any value
	// with "auths" in it).
	RegistryCredential Kind = "registry-credential"
	// URLCredential: a URL with a password in it (postgres://admin:hunter2@db:5432/x).
	URLCredential Kind = "url-credential"
	// FlagValue: the value of a command-line flag whose name says password, token, key,
	// secret, … (--password=hunter2, or the argument after --password), or a command's password
	// flag (mysql -pSecret, redis-cli -a …, curl -u user:…).
	FlagValue Kind = "flag-value"
	// SameValue: a value equal to one flagged elsewhere in the manifest (a password that
	// is also a ConfigMap's value): redacted with it.
	SameValue Kind = "same-value"
	// Comment: a comment that holds one (# password: hunter2, a URL with a password, a
	// password flag, a random-looking token, a credential of a known format).
	Comment Kind = "comment"
	// KnownFormat: a credential of a format one of gitleaks' rules knows (an AWS access
	// key id, a Slack webhook URL, a GitHub token, …), anywhere: a value, a mapping's key, a
	// step, a setting. Rule names the rule.
	KnownFormat Kind = "known-format"
)

// Kinds lists every kind Scan reports, in the order a person reads them.
var Kinds = []Kind{Document, DataValue, EnvName, FlagValue, URLCredential, PrivateKey,
	RegistryCredential, KnownFormat, HighEntropy, SameValue, Comment}

// Redacted is what Redact writes in place of a flagged value.
const Redacted = "<redacted>"

// Finding is one value of a manifest that should not be shared as is. It never carries the
// value: Excerpt is the value's key with Redacted in place of the value.
type Finding struct {
	// Doc is the 1-based document; Line the 1-based line of the value in the whole input. Both
	// are 0 for a finding in an annotation step, and Step is its 1-based number.
	Doc  int `json:"doc,omitempty"`
	Line int `json:"line,omitempty"`
	Step int `json:"step,omitempty"`
	// Path names the value the way the diff names fields
	// (spec.template.spec.containers[app].env[DB_PASSWORD].value); empty in a document that
	// does not parse.
	Path string `json:"path,omitempty"`
	Kind Kind   `json:"kind"`
	// Rule is the gitleaks rule of a known-format finding (aws-access-token).
	Rule    string `json:"rule,omitempty"`
	Excerpt string `json:"excerpt"`
	// Setting names the setting of a finding in the settings (ScanSettings): SettingInstallSet
	// (Line is the --set option's 1-based number, Path its path), SettingInstallOverlay (Line
	// is the overlay's line) or SettingNamespaceLabel (Path is the label's key).
	Setting string `json:"setting,omitempty"`
}

// The settings ScanSettings looks at.
const (
	SettingInstallSet     = "install.set"
	SettingInstallOverlay = "install.overlay"
	SettingNamespaceLabel = "namespace.labels"
	// SettingMesh is a mesh's own configuration (Settings.Mesh); Path names the part
	// (MeshPart.Name) and Line is that part's line.
	SettingMesh = "install.mesh"
)

// MaxFindings bounds the findings Scan returns (the total is counted beyond it):
// every echoed list is bounded.
const MaxFindings = 100

// Scan looks through a manifest for what should not be shared: Secret documents and
// their values, env values whose names say they are secret, private keys, registry
// credentials, and long random-looking tokens. It returns at most MaxFindings findings and
// the total found. It is a heuristic on the text, before any injection: it runs on manifests
// Istio rejects too, and on documents that do not parse (line by line).
func Scan(manifest []byte) (findings []Finding, total int) {
	hits := scanSecrets(splitScanDocs(manifest))
	for i, h := range hits {
		if i == MaxFindings {
			break
		}
		findings = append(findings, h.Finding)
	}
	return findings, len(hits)
}
