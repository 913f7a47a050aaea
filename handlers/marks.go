package handlers

import (
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/explain"
	"github.com/sidecarlab/sidecarlab/web"
)

// findingMarks puts each finding about an annotation (or label) the person pasted on the input
// line of its key — for a field inside a block-literal proxy.istio.io/config, on that field's
// line — so the editor can mark it where the eye is. A finding about the output, or about an
// annotation a step set (or changed, or removed), has no input line: the banner alone shows it.
// The engine stays language- and text-position-free; this is the edge's reading of the input.
func findingMarks(fs []engine.Finding, docs []engine.Document, steps []engine.Step) []web.Mark {
	var out []web.Mark
	for _, f := range fs {
		if f.Doc < 1 || f.Doc > len(docs) {
			continue
		}
		meta, key, rest, ok := splitAnnotationPath(f.Path)
		if !ok || slices.ContainsFunc(steps, func(s engine.Step) bool { return s.Key == key }) {
			continue
		}
		d := docs[f.Doc-1]
		line := annotationLine(d.Input, meta, key, rest)
		if line == 0 {
			continue
		}
		out = append(out, web.Mark{Line: d.Line + line - 1, Severity: string(f.Severity), Message: explain.Message(f)})
	}
	return out
}

// splitAnnotationPath reads a finding's path `a.b.annotations["key"].rest` (or labels) into the
// metadata's path (a, b, annotations), the key and the path inside the value (rest, may be "").
func splitAnnotationPath(path string) (meta []string, key, rest string, ok bool) {
	i := strings.Index(path, `["`)
	if i < 0 {
		return nil, "", "", false
	}
	meta = strings.Split(path[:i], ".")
	if last := meta[len(meta)-1]; last != "annotations" && last != "labels" {
		return nil, "", "", false
	}
	q, err := strconv.QuotedPrefix(path[i+1:])
	if err != nil {
		return nil, "", "", false
	}
	key, _ = strconv.Unquote(q)
	after := path[i+1+len(q):]
	if !strings.HasPrefix(after, "]") {
		return nil, "", "", false
	}
	return meta, key, strings.TrimPrefix(after[1:], "."), true
}

// annotationLine is the 1-based line of key under the mapping at meta in one document's text, 0
// when it is not there. When rest names a field and the value is a literal block (`|`), the line
// of that field's first segment inside the block.
func annotationLine(doc string, meta []string, key, rest string) int {
	var root yaml.Node
	if yaml.Unmarshal([]byte(doc), &root) != nil || len(root.Content) == 0 {
		return 0
	}
	n := root.Content[0]
	for _, seg := range meta {
		if _, n = mappingEntry(n, seg); n == nil {
			return 0
		}
	}
	k, v := mappingEntry(n, key)
	if k == nil {
		return 0
	}
	if rest != "" && v.Kind == yaml.ScalarNode && v.Style == yaml.LiteralStyle {
		if l := blockFieldLine(v.Value, strings.SplitN(rest, ".", 2)[0]); l > 0 {
			return v.Line + l // the block's text starts on the line after its "|"
		}
	}
	return k.Line
}

// mappingEntry is the key and value nodes of name in a mapping node, or nils.
func mappingEntry(n *yaml.Node, name string) (*yaml.Node, *yaml.Node) {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == name {
			return n.Content[i], n.Content[i+1]
		}
	}
	return nil, nil
}

// blockFieldLine is the 1-based line of a top-level field in a YAML value, 0 when not found.
func blockFieldLine(value, field string) int {
	var root yaml.Node
	if yaml.Unmarshal([]byte(value), &root) != nil || len(root.Content) == 0 {
		return 0
	}
	if k, _ := mappingEntry(root.Content[0], field); k != nil {
		return k.Line
	}
	return 0
}
