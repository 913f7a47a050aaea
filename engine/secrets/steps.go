package secrets

import (
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/sidecarlab/sidecarlab/engine/yamldoc"
)

// Step is an annotation step as ScanSteps reads it: it sets Key to Value, or removes Key. Its
// fields are engine.Step's, in the same order, so that each converts to the other.
type Step struct {
	Key, Value string
	Remove     bool
}

// ScanSteps looks at the values of annotation steps as Scan looks at a manifest's
// values: a private key, a registry credential or a random-looking token in one is a finding
// (Step names it). An annotation's name says nothing about its value, so names are not read.
func ScanSteps(steps []Step) []Finding {
	var out []Finding
	for i, st := range steps {
		if st.Remove || st.Value == "" || st.Value == Redacted {
			continue
		}
		if kind, ok := valueKind(st.Value); ok {
			out = append(out, Finding{Step: i + 1, Kind: kind, Excerpt: excerpt(st.Key)})
			continue
		}
		if name, ok := secretProxyMetadata(st.Value); ok {
			out = append(out, Finding{Step: i + 1, Path: "proxyMetadata." + yamldoc.Clip(name), Kind: EnvName, Excerpt: excerpt(st.Key)})
			continue
		}
		if ls := leaks(st.Value); len(ls) > 0 {
			out = append(out, Finding{Step: i + 1, Kind: KnownFormat, Rule: ls[0].Rule, Excerpt: excerpt(st.Key)})
		}
	}
	return out
}

// secretProxyMetadata reads a step's value as a ProxyConfig (proxy.istio.io/config's YAML) and
// names the first of its proxyMetadata, environment variables of the proxy, whose name says it
// is secret (DB_PASSWORD: hunter2), as env does for a container's.
func secretProxyMetadata(v string) (string, bool) {
	var root yaml.Node
	if !strings.Contains(v, "proxyMetadata") || yaml.Unmarshal([]byte(v), &root) != nil || len(root.Content) == 0 {
		return "", false
	}
	md := entry(root.Content[0], "proxyMetadata")
	if md == nil || md.Kind != yaml.MappingNode {
		return "", false
	}
	for i := 0; i+1 < len(md.Content); i += 2 {
		k, val := md.Content[i], yamldoc.Deref(md.Content[i+1])
		if val.Kind == yaml.ScalarNode && val.Value != "" && val.Value != Redacted && secretName(k.Value) && !filePath(val.Value) {
			return k.Value, true
		}
	}
	return "", false
}

// RedactSteps is steps with the value of each step ScanSteps flags replaced by Redacted. A
// redacted value of an annotation Istio reads (proxy.istio.io/config) changes what it does;
// the others reach the output as they are.
func RedactSteps(steps []Step) []Step {
	out := slices.Clone(steps)
	for _, f := range ScanSteps(steps) {
		out[f.Step-1].Value = Redacted
	}
	return out
}
