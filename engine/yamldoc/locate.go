package yamldoc

import (
	"strconv"
	"strings"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
)

// Location is where a path is in a YAML text, for tools that mark a line (a CI annotation, an
// editor's gutter).
type Location struct {
	// Line and Column are 1-based: the position of the path's key, or of a list item's first key.
	Line   int `json:"line"`
	Column int `json:"column"`
	// Exact is false when the path's field is not in the text — injection adds it (istio-proxy
	// and everything in it), or an annotation step set it — and Line and Column are those of
	// the nearest field above it that is.
	Exact bool `json:"exact"`
	// InValue, when Exact is false, says the field is inside a value the text has, at Line and
	// Column or below: a field of an annotation's value (proxy.istio.io/config) written on one
	// line, whose own line the text does not show, or one its literal block lacks.
	InValue bool `json:"inValue,omitempty"`
}

// Text is one YAML document's text, parsed once to find paths in (Find).
type Text struct {
	text string
	root *yaml.Node
}

// ParseText parses a document's text for Find; text that is not YAML finds every path on its
// first line.
func ParseText(text string) *Text {
	text = newlineLines(text)
	return &Text{text: text, root: parseNode(text)}
}

// Find walks path down the document as far as the text has it (lines counted from the text's
// first).
func (t *Text) Find(path string) Location {
	return locate(t.root, t.text, path)
}

// Locate is where path is in one document's text.
func Locate(text, path string) Location {
	return ParseText(text).Find(path)
}

// parseNode is a document's node tree, nil when it is not YAML.
func parseNode(text string) *yaml.Node {
	var root yaml.Node
	if yaml.Unmarshal([]byte(text), &root) != nil || len(root.Content) == 0 {
		return nil
	}
	return root.Content[0]
}

// pathSeg is one step of a finding's path: a mapping key, a list item by its name, or a list
// item by its position.
type pathSeg struct {
	key   string
	name  string
	index int // -1 unless the segment is a position
}

// parsePath reads a finding's path, as the checks and the diff write it:
// spec.template.metadata.annotations["sidecar.istio.io/inject"] (a quoted key may hold dots),
// spec.template.spec.containers[istio-proxy].lifecycle (an item by name), args[2] (by position),
// and after an annotation, the fields inside its value (…["proxy.istio.io/config"].a.b).
func parsePath(path string) []pathSeg {
	var segs []pathSeg
	for path != "" {
		switch {
		case path[0] == '.':
			path = path[1:]
		case strings.HasPrefix(path, `["`):
			q, err := strconv.QuotedPrefix(path[1:])
			if err != nil {
				return segs
			}
			k, _ := strconv.Unquote(q)
			segs = append(segs, pathSeg{key: k, index: -1})
			path = strings.TrimPrefix(path[1+len(q):], "]")
		case path[0] == '[':
			end := strings.IndexByte(path, ']')
			if end < 0 {
				return segs
			}
			item := path[1:end]
			if n, err := strconv.Atoi(item); err == nil && n >= 0 {
				segs = append(segs, pathSeg{index: n})
			} else {
				segs = append(segs, pathSeg{name: item, index: -1})
			}
			path = path[end+1:]
		default:
			end := strings.IndexAny(path, ".[")
			if end < 0 {
				end = len(path)
			}
			segs = append(segs, pathSeg{key: path[:end], index: -1})
			path = path[end:]
		}
	}
	return segs
}

// locate walks path down a document's node tree as far as the input has it. text is the
// document's text, for the columns inside a literal block.
func locate(root *yaml.Node, text, path string) Location {
	if root == nil {
		return Location{Line: 1, Column: 1}
	}
	l := walk(root, text, parsePath(path))
	// The parser places an empty document's null past its "---", on a line the text may not
	// have: the text's last line stands for it.
	if last := strings.Count(text, "\n") + 1; l.Line > last {
		l.Line, l.Column = last, 1
	}
	return l
}

// newlineLines is text with the line breaks YAML knows besides "\n" — a lone CR, NEL, LS and
// PS — made spaces, so that the parser's line numbers are the input's lines as everything else
// counts them (the documents' first lines, an editor's gutter, a CI annotation): "\n"-ended.
// A space per break keeps the columns, which count characters.
func newlineLines(text string) string {
	if !strings.ContainsAny(text, "\r\u0085\u2028\u2029") {
		return text
	}
	var b strings.Builder
	b.Grow(len(text))
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case r == '\r' && !strings.HasPrefix(text[i+1:], "\n"),
			r == '\u0085', r == '\u2028', r == '\u2029':
			b.WriteByte(' ')
		default:
			b.WriteString(text[i : i+size])
		}
		i += size
	}
	return b.String()
}

func walk(root *yaml.Node, text string, segs []pathSeg) Location {
	at := Location{Line: root.Line, Column: root.Column, Exact: true}
	n := root
	for i, s := range segs {
		n = Deref(n)
		var key, next *yaml.Node
		switch {
		case n.Kind == yaml.MappingNode && s.name == "" && s.index < 0:
			key, next = MappingEntry(n, s.key)
		case n.Kind == yaml.SequenceNode && s.index >= 0:
			if s.index < len(n.Content) {
				next = n.Content[s.index]
			}
		case n.Kind == yaml.SequenceNode && s.name != "":
			for _, item := range n.Content {
				if _, v := MappingEntry(Deref(item), "name"); v != nil && v.Value == s.name {
					next = item
					break
				}
			}
		case n.Kind == yaml.ScalarNode && s.key != "":
			// The fields of an annotation's value (proxy.istio.io/config): found only in a
			// literal block (|), whose lines are the input's; otherwise the annotation itself.
			if l, ok := blockField(n, text, segs[i:]); ok {
				l.InValue = !l.Exact
				return l
			}
			at.Exact, at.InValue = false, true
			return at
		}
		if next == nil {
			at.Exact = false
			return at
		}
		at = Location{Line: next.Line, Column: next.Column, Exact: true}
		if key != nil {
			at.Line, at.Column = key.Line, key.Column
		}
		n = next
	}
	return at
}

// blockField is where a field of a YAML value written as a literal block is in the input: the
// block's text starts on the line after its "|", every line indented as much as the first
// (which YAML strips).
func blockField(n *yaml.Node, text string, segs []pathSeg) (Location, bool) {
	inner := parseNode(n.Value)
	if n.Style != yaml.LiteralStyle || inner == nil {
		return Location{}, false
	}
	if k, _ := MappingEntry(inner, segs[0].key); k == nil {
		return Location{}, false
	}
	indent := 0
	for _, l := range strings.Split(text, "\n")[n.Line:] {
		if strings.TrimSpace(l) != "" {
			indent = len(l) - len(strings.TrimLeft(l, " "))
			break
		}
	}
	l := walk(inner, n.Value, segs)
	l.Line += n.Line
	l.Column += indent
	return l, true
}
