package wording

import (
	"strconv"
	"strings"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/provenance"
)

// Branch says a branch around a template line, and whether its own list ran or its else: what
// explain prints and the why page lists.
func (w Words) Branch(c engine.ProvenanceCondition) string {
	id := "cli.explain.taken"
	if !c.Taken {
		id = "cli.explain.else"
	}
	return w.loc().T(id, "Kind", c.Kind, "Text", c.Text, "Line", c.Line)
}

// Reads says one input a template line reads: its kind and name, its value and its line in the
// manifest when known, a default's text, and whose a ProxyConfig field is.
func (w Words) Reads(in engine.ProvenanceInput) string {
	l := w.loc()
	kind := l.T("cli.explain.kind." + string(in.Kind))
	var s string
	switch {
	case in.Kind == provenance.InputDefault:
		s = l.T("cli.explain.reads-default", "Value", in.Value)
	case in.Line > 0:
		s = l.T("cli.explain.reads-line", "Kind", kind, "Name", in.Name, "Value", in.Value, "Line", in.Line)
	case in.Value != "":
		s = l.T("cli.explain.reads-value", "Kind", kind, "Name", in.Name, "Value", in.Value)
	default:
		s = l.T("cli.explain.reads", "Kind", kind, "Name", in.Name)
	}
	if in.From != "" {
		s += " " + l.T("cli.explain.from-"+in.From)
	}
	return s
}

// Lines are template line numbers as a sentence lists them: "12, 14, 20".
func Lines(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}
