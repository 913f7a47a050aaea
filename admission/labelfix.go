package admission

import (
	"bytes"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"istio.io/api/annotation"
	"istio.io/api/label"

	"github.com/sidecarlab/sidecarlab/engine/yamldoc"
	"github.com/sidecarlab/sidecarlab/i18n"
)

// ErrNothingToMove says no document asks for injection with the annotation alone.
var ErrNothingToMove error = nothingToMove{}

// nothingToMove is ErrNothingToMove: its English is the catalogs' (errors.fix.nothing-to-move),
// which the page words in the reader's language.
type nothingToMove struct{}

func (nothingToMove) Error() string { return i18n.For(i18n.Default).T("errors.fix.nothing-to-move") }

// LabelInsteadOfAnnotation moves sidecar.istio.io/inject: "true" from each pod template's
// annotations to its labels, where the webhooks' object selectors read it (they read labels, not
// annotations). Only documents that have the annotation and not the label change, and are
// written again from their YAML tree (comments kept, indentation made two spaces); every other
// document stays byte for byte.
func LabelInsteadOfAnnotation(manifest []byte) ([]byte, error) {
	docs, err := yamldoc.Split(manifest)
	if err != nil {
		return nil, err
	}
	lines := strings.SplitAfter(string(manifest), "\n")
	var out strings.Builder
	next, moved := 0, false // next is the index of the first input line not yet written
	for _, d := range docs {
		fixed, ok := moveInjectLabel(d.Raw)
		if !ok {
			continue
		}
		first := d.Line - 1
		n := bytes.Count(d.Raw, []byte("\n"))
		for _, l := range lines[next:first] {
			out.WriteString(l)
		}
		out.Write(fixed)
		next, moved = first+n, true
	}
	if !moved {
		return nil, ErrNothingToMove
	}
	for _, l := range lines[min(next, len(lines)):] {
		out.WriteString(l)
	}
	return []byte(out.String()), nil
}

// moveInjectLabel rewrites one document, if its pod template has the annotation and not the label.
func moveInjectLabel(raw []byte) ([]byte, bool) {
	var root yaml.Node
	if err := yaml.Unmarshal(raw, &root); err != nil || len(root.Content) == 0 {
		return nil, false
	}
	top := root.Content[0]
	kind := scalarAt(top, "kind")
	var path []string
	switch kind {
	case "Pod":
		path = []string{"metadata"}
	case "CronJob":
		path = []string{"spec", "jobTemplate", "spec", "template", "metadata"}
	case "":
		return nil, false
	default:
		path = []string{"spec", "template", "metadata"}
	}
	meta := top
	for _, k := range path {
		if meta = mapValue(meta, k); meta == nil || meta.Kind != yaml.MappingNode {
			return nil, false
		}
	}
	ann := mapValue(meta, "annotations")
	if ann == nil || scalarAt(ann, annotation.SidecarInject.Name) != "true" {
		return nil, false
	}
	labels := mapValue(meta, "labels")
	if labels != nil && mapValue(labels, label.SidecarInject.Name) != nil {
		return nil, false
	}
	removeKey(ann, annotation.SidecarInject.Name)
	if len(ann.Content) == 0 {
		removeKey(meta, "annotations")
	}
	if labels == nil {
		labels = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		meta.Content = append(meta.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "labels"}, labels)
	}
	labels.Content = append(labels.Content,
		&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: label.SidecarInject.Name},
		&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "true", Style: yaml.DoubleQuotedStyle})
	var buf bytes.Buffer
	if bytes.HasPrefix(raw, []byte("---")) {
		buf.WriteString("---\n") // the separator that opened the document stays its first line
	}
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&root); err != nil {
		return nil, false
	}
	_ = enc.Close()
	return buf.Bytes(), true
}

// mapValue is the value node of key in a mapping node (yamldoc.MappingEntry's), nil when absent.
func mapValue(m *yaml.Node, key string) *yaml.Node {
	_, v := yamldoc.MappingEntry(m, key)
	return v
}

func scalarAt(m *yaml.Node, key string) string {
	if v := mapValue(m, key); v != nil && v.Kind == yaml.ScalarNode {
		return v.Value
	}
	return ""
}

func removeKey(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return
		}
	}
}
