package yamldoc

import (
	"fmt"
	"strconv"

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

// ElementNames are the "name" of each element of a list when every element is a map with a
// name of its own (the field diff pairs such lists by name, and writes an element as [name]);
// nil otherwise.
func ElementNames(seq *yaml.Node) []string {
	out := make([]string, 0, len(seq.Content))
	seen := map[string]bool{}
	for _, e := range seq.Content {
		_, v := MappingEntry(Deref(e), "name")
		if v == nil || v.Kind != yaml.ScalarNode || v.Tag != "!!str" || v.Value == "" || seen[v.Value] {
			return nil
		}
		seen[v.Value] = true
		out = append(out, v.Value)
	}
	return out
}

// PathAt is the field a line of one document's text holds, as the field diff writes its path:
// the innermost field that starts on the line (a flow collection, [80, 81], as a whole), or else
// the last that starts above it (a line of a literal block is its field's); "" when the text is
// not YAML or the line holds no field.
func PathAt(text string, line int) string {
	root := parseNode(newlineLines(text))
	if root == nil {
		return ""
	}
	best, bestLine := "", 0
	var walk func(path string, n *yaml.Node, at int)
	walk = func(path string, n *yaml.Node, at int) {
		if path != "" && at <= line && at >= bestLine {
			best, bestLine = path, at // later in document order, or deeper on the same line
		}
		n = Deref(n)
		if n.Style&yaml.FlowStyle != 0 && path != "" {
			return // [80, 81] on one line: the line holds the whole of it
		}
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				walk(JoinKey(path, n.Content[i].Value), n.Content[i+1], n.Content[i].Line)
			}
		case yaml.SequenceNode:
			named := ElementNames(n)
			for i, e := range n.Content {
				p := path + "[" + strconv.Itoa(i) + "]"
				if named != nil {
					p = path + "[" + named[i] + "]"
				}
				walk(p, e, e.Line)
			}
		}
	}
	walk("", root, root.Line)
	return best
}
