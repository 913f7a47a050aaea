package yamldoc

import (
	"fmt"

	yaml "go.yaml.in/yaml/v3"
)

// Deref follows an alias to the node it names.
func Deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// MappingEntry is the key and value nodes of name in a mapping node, or nils.
func MappingEntry(n *yaml.Node, name string) (key, value *yaml.Node) {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, nil
	}
	// The last: a key written twice is read as Kubernetes reads it, into a map, where the later
	// one overwrites the earlier (DuplicateKeys).
	for i := len(n.Content) - 2; i >= 0; i -= 2 {
		if n.Content[i].Value == name {
			return n.Content[i], n.Content[i+1]
		}
	}
	return nil, nil
}

// JoinKey is path with the mapping key k after it, the way the diff and the secret scan name a
// field: after a dot when k is a plain key (spec.containers), else quoted in brackets
// (metadata.annotations["sidecar.istio.io/inject"]).
func JoinKey(path, k string) string {
	if !plainKey(k) {
		return fmt.Sprintf("%s[%q]", path, k)
	}
	if path == "" {
		return k
	}
	return path + "." + k
}

// plainKey says whether k can be written after a dot in a path: ^[A-Za-z_][A-Za-z0-9_-]*$.
func plainKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		case i > 0 && (c >= '0' && c <= '9' || c == '-'):
		default:
			return false
		}
	}
	return true
}
