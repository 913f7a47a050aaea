package provenance

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"

	"github.com/sidecarlab/sidecarlab/engine/yamldoc"
)

// Field is one leaf of a rendering's YAML (a scalar, or an empty map or list), by the path the
// field diff names it with, and the nodes that wrote its key and its value.
type Field struct {
	// Path is the field's path as the field diff writes it: keys joined by dots (or ["key"]),
	// a list of named things by [name], any other list by [index].
	Path string `json:"path"`
	// Key is the node that wrote the field's key (nil for a list's element), Value the node that
	// wrote its value — the first action that wrote part of it (- --proxyLogLevel={{ annotation
	// … }}), or else the text that holds it; KeyLine and ValueLine their lines in the template.
	Key, Value         *Node `json:"-"`
	KeyLine, ValueLine int   `json:"-"`
	// Also are the other actions that wrote part of the value, in order.
	Also []*Node `json:"-"`
}

// Fields are the leaves of the rendering's YAML, in the order they are written; nil when the
// output is not one YAML document (Istio fails on it first).
func (r *Rendering) Fields() []Field {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(r.Text), &doc); err != nil || len(doc.Content) == 0 {
		return nil
	}
	starts := lineStarts(r.Text)
	// begins are where every node of the YAML starts, in order: a value's text ends before the
	// next one.
	var begins []int
	var collect func(n *yaml.Node)
	collect = func(n *yaml.Node) {
		begins = append(begins, offset(r.Text, starts, n.Line, n.Column))
		for _, c := range n.Content {
			collect(c)
		}
	}
	collect(doc.Content[0])
	slices.Sort(begins)
	// valueText is where a value's text is: a block scalar's on the lines after its indicator
	// (|, >), up to the next node; any other's from its start to the end of its line (or the
	// next node, in a flow collection); without the spaces after it.
	valueText := func(n *yaml.Node) (from, to int) {
		from = offset(r.Text, starts, n.Line, n.Column)
		if from < 0 {
			return from, from
		}
		block := n.Kind == yaml.ScalarNode && n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0
		if block && n.Line < len(starts) {
			from = starts[n.Line]
			for from < len(r.Text) && (r.Text[from] == ' ' || r.Text[from] == '\n') {
				from++
			}
		}
		to = len(r.Text)
		if i, _ := slices.BinarySearch(begins, from+1); i < len(begins) {
			to = begins[i]
		}
		if !block {
			if eol := strings.IndexByte(r.Text[from:], '\n'); eol >= 0 {
				to = min(to, from+eol)
			}
		}
		for to > from && strings.IndexByte(" \t\r\n", r.Text[to-1]) >= 0 {
			to--
		}
		return from, to
	}
	at := func(n *yaml.Node) (*Node, int) {
		if n == nil {
			return nil, 0
		}
		from, _ := valueText(n)
		return r.At(from)
	}
	var out []Field
	var walk func(path string, key, n *yaml.Node)
	walk = func(path string, key, n *yaml.Node) {
		n = yamldoc.Deref(n)
		switch {
		case n.Kind == yaml.MappingNode && len(n.Content) > 0:
			for i := 0; i+1 < len(n.Content); i += 2 {
				walk(yamldoc.JoinKey(path, n.Content[i].Value), n.Content[i], n.Content[i+1])
			}
			return
		case n.Kind == yaml.SequenceNode && len(n.Content) > 0:
			named := yamldoc.ElementNames(n)
			for i, e := range n.Content {
				p := path + "[" + strconv.Itoa(i) + "]"
				if named != nil {
					p = path + "[" + named[i] + "]"
				}
				walk(p, nil, e)
			}
			return
		}
		f := Field{Path: path}
		f.Key, f.KeyLine = at(key)
		f.Value, f.ValueLine = at(n)
		if from, to := valueText(n); from >= 0 {
			for i, a := range r.actions(from, to) {
				if i == 0 {
					f.Value, f.ValueLine = a.node, a.line
				} else if !slices.Contains(f.Also, a.node) {
					f.Also = append(f.Also, a.node)
				}
			}
		}
		out = append(out, f)
	}
	walk("", nil, doc.Content[0])
	return out
}

// lineStarts are the byte offsets at which the lines of text start.
func lineStarts(text string) []int {
	out := []int{0}
	for i := 0; i < len(text); i++ {
		if text[i] == '\n' {
			out = append(out, i+1)
		}
	}
	return out
}

// offset is the byte offset of a YAML position (line and column from 1, the column in
// characters).
func offset(text string, starts []int, line, col int) int {
	if line < 1 || line > len(starts) {
		return -1
	}
	off := starts[line-1]
	for c := 1; c < col && off < len(text) && text[off] != '\n'; c++ {
		_, size := utf8.DecodeRuneInString(text[off:])
		off += size
	}
	return off
}
