package testkit

import (
	_ "embed"

	"sigs.k8s.io/yaml"
)

// secretVariantsYAML is the secret corpus (its head says how an entry reads).
//
//go:embed secretvariants.yaml
var secretVariantsYAML []byte

// SecretVariant is one realistic way a secret is written, with a near miss that holds none:
// package secrets' TestVariants holds its scan and redaction to them on every text it reads, the
// handlers' tests the share gate every storing path passes.
type SecretVariant struct {
	Name string
	// Kind is the kind of finding expected (secrets.Kind), Secret the value that must not be
	// left once redacted.
	Kind, Secret string
	// Exact is false when redacting may not be the input with Secret replaced (the value is
	// escaped or spans lines: all of it is replaced).
	Exact *bool
	// Found is where the secret is written; Near the same place with a near miss.
	Found, Near SecretPlace
}

// SecretPlace is where a variant's secret (or its near miss) is written: a manifest, a step,
// install --set lines, the namespace's labels, the install overlay, or a mesh's own texts
// (injectorConfig, values, meshConfig).
type SecretPlace struct {
	Manifest string
	Step     *struct{ Key, Value string }
	Set      []string
	Labels   map[string]string
	Overlay  string
	Mesh     map[string]string
}

// SecretVariants are the secret corpus' entries.
func SecretVariants() ([]SecretVariant, error) {
	var vs []SecretVariant
	err := yaml.Unmarshal(secretVariantsYAML, &vs)
	return vs, err
}
