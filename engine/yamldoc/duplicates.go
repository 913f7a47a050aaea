package yamldoc

import (
	"strconv"

	yaml "go.yaml.in/yaml/v3"
)

// Duplicate is a mapping key written more than once in one mapping: its path (as the checks
// write paths: JoinKey, list items by their name or position), the lines it is written on
// (counted from the text's first), and the last one's value when it is a scalar — the one
// Kubernetes' reader, and so Istio's, keeps: it reads YAML into a map, and a later key
// overwrites an earlier one without a word.
type Duplicate struct {
	Path  string
	Lines []int
	Kept  string
	// Scalar says Kept is the value (a scalar), not empty for a map or a list.
	Scalar bool
}

// DuplicateKeys are the keys text writes twice or more in the same mapping, in the order they
// first appear. Text that is not YAML has none.
func DuplicateKeys(text string) []Duplicate {
	root := parseNode(text)
	if root == nil {
		return nil
	}
	var out []Duplicate
	seen := map[string]bool{}
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, path)
			}
		case yaml.SequenceNode:
			for i, item := range n.Content {
				seg := "[" + strconv.Itoa(i) + "]"
				if _, v := MappingEntry(item, "name"); v != nil && v.Kind == yaml.ScalarNode && v.Value != "" {
					seg = "[" + v.Value + "]"
				}
				walk(item, path+seg)
			}
		case yaml.MappingNode:
			at := map[string]int{} // of out, by key, for the keys written twice
			first := map[string]int{}
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				p := JoinKey(path, k.Value)
				if l, ok := first[k.Value]; ok {
					j, known := at[k.Value]
					if !known && !seen[p] {
						seen[p] = true
						out = append(out, Duplicate{Path: p, Lines: []int{l}})
						j, known = len(out)-1, true
						at[k.Value] = j
					}
					if known {
						out[j].Lines = append(out[j].Lines, k.Line)
						out[j].Kept, out[j].Scalar = "", false
						if v.Kind == yaml.ScalarNode {
							out[j].Kept, out[j].Scalar = v.Value, true
						}
					}
				} else {
					first[k.Value] = k.Line
				}
				walk(v, p)
			}
		}
	}
	walk(root, "")
	return out
}
