package provenance

import (
	"slices"
	"strings"
	"text/template/parse"
)

// InputKind is what a template reads a value from.
type InputKind string

// The kinds of input a template reads.
const (
	// InputAnnotation is a pod annotation (.ObjectMeta.Annotations, isset, annotation).
	InputAnnotation InputKind = "annotation"
	// InputLabel is a pod label (.ObjectMeta.Labels).
	InputLabel InputKind = "label"
	// InputProxyConfig is a field of the pod's ProxyConfig: the mesh's defaultConfig with the
	// pod's proxy.istio.io/config over it (.ProxyConfig).
	InputProxyConfig InputKind = "proxyConfig"
	// InputMeshConfig is a field of the mesh config (.MeshConfig).
	InputMeshConfig InputKind = "meshConfig"
	// InputValues is a key of the installation's values (.Values), by its dotted path.
	InputValues InputKind = "values"
	// InputDefault is a value written in the template itself (a quoted default, a number).
	InputDefault InputKind = "default"
	// InputDocument is another part of the document as given: its pod spec (.Spec), its
	// metadata other than annotations and labels, its workload's name (.DeploymentMeta).
	InputDocument InputKind = "input"
	// InputComputed is a value Istio computes before the template from the others, named by its
	// field of the template's data (.ProxyImage, .ProxyUID, .Revision, .NativeSidecars, …).
	InputComputed InputKind = "computed"
)

// Input is one thing a template's expression reads: its kind and name (an annotation's key, a
// ProxyConfig field, a values path; the default's text). A ProxyConfig of name "" is the whole
// of it.
type Input struct {
	Kind InputKind `json:"kind"`
	Name string    `json:"name"`
}

// reads are the inputs an expression reads, in the order written, each once. vars are the
// template's variables by name ($tproxy: what its declaration reads); dot is what "." reads
// where the expression is (inside a with: what the with reads).
func reads(n parse.Node, vars map[string][]Input, dot []Input) []Input {
	var out []Input
	add := func(in ...Input) {
		for _, i := range in {
			if !slices.Contains(out, i) {
				out = append(out, i)
			}
		}
	}
	var walk func(n parse.Node)
	walk = func(n parse.Node) {
		switch n := n.(type) {
		case *parse.PipeNode:
			if n == nil {
				return
			}
			for _, c := range n.Cmds {
				walk(c)
			}
		case *parse.CommandNode:
			add(command(n)...)
			for _, a := range n.Args {
				walk(a)
			}
		case *parse.FieldNode:
			add(field(n.Ident)...)
		case *parse.ChainNode:
			walk(n.Node)
		case *parse.VariableNode:
			if len(n.Ident) > 0 {
				add(vars[n.Ident[0]]...)
			}
		case *parse.DotNode:
			add(dot...)
		case *parse.StringNode, *parse.NumberNode, *parse.BoolNode:
			// A literal argument: a default only where a default function takes it (command).
		case *parse.ActionNode:
			walk(n.Pipe)
		case *parse.TemplateNode:
			walk(n.Pipe)
		}
	}
	walk(n)
	return out
}

// command is what a function call reads by a literal argument: the annotation or label a key
// names (index .ObjectMeta.Annotations "k", isset …, annotation .ObjectMeta "k" default), and
// the literal a default gives (default "x", valueOrDefault v "x").
func command(c *parse.CommandNode) []Input {
	if len(c.Args) < 2 {
		return nil
	}
	fn, ok := c.Args[0].(*parse.IdentifierNode)
	if !ok {
		return nil
	}
	key := func(i int) (string, bool) {
		if i >= len(c.Args) {
			return "", false
		}
		s, ok := c.Args[i].(*parse.StringNode)
		if !ok {
			return "", false
		}
		return s.Text, true
	}
	on := func(i int) string {
		if f, ok := c.Args[i].(*parse.FieldNode); ok {
			return strings.Join(f.Ident, ".")
		}
		return ""
	}
	var out []Input
	switch fn.Ident {
	case "index", "isset":
		if k, ok := key(2); ok {
			switch on(1) {
			case "ObjectMeta.Annotations":
				out = append(out, Input{InputAnnotation, k})
			case "ObjectMeta.Labels":
				out = append(out, Input{InputLabel, k})
			}
		}
	case "annotation":
		if k, ok := key(2); ok && on(1) == "ObjectMeta" {
			out = append(out, Input{InputAnnotation, k})
		}
		if d, ok := literal(c.Args[len(c.Args)-1]); ok && len(c.Args) > 3 {
			out = append(out, Input{InputDefault, d})
		}
	case "default":
		if d, ok := literal(c.Args[1]); ok {
			out = append(out, Input{InputDefault, d})
		}
	case "valueOrDefault":
		if d, ok := literal(c.Args[len(c.Args)-1]); ok && len(c.Args) > 2 {
			out = append(out, Input{InputDefault, d})
		}
	}
	return out
}

// literal is a literal argument's text.
func literal(n parse.Node) (string, bool) {
	switch n := n.(type) {
	case *parse.StringNode:
		return n.Text, true
	case *parse.NumberNode:
		return n.Text, true
	case *parse.BoolNode:
		return n.String(), true
	}
	return "", false
}

// field is what a field of the template's data reads (.ProxyConfig.HoldApplicationUntilProxyStarts,
// .Values.global.proxy.resources): the whole of .ObjectMeta.Annotations or Labels reads no
// single one (index, isset and annotation name theirs).
func field(ident []string) []Input {
	if len(ident) == 0 {
		return nil
	}
	if len(ident) > 1 && ident[len(ident)-1] == "GetValue" {
		ident = ident[:len(ident)-1] // a wrapped value's getter (.HoldApplicationUntilProxyStarts.GetValue)
	}
	rest := strings.Join(ident[1:], ".")
	switch ident[0] {
	case "ProxyConfig":
		return []Input{{InputProxyConfig, rest}} // "" is the whole of it (protoToJSON .ProxyConfig)
	case "MeshConfig":
		if rest != "" {
			return []Input{{InputMeshConfig, rest}}
		}
	case "Values":
		if rest != "" {
			return []Input{{InputValues, rest}}
		}
	case "ObjectMeta":
		if len(ident) == 1 || ident[1] == "Annotations" || ident[1] == "Labels" {
			return nil // the functions that take them name the key they read (command)
		}
		return []Input{{InputDocument, "metadata." + rest}}
	case "Spec", "DeploymentMeta", "TypeMeta":
		return []Input{{InputDocument, strings.Join(ident, ".")}}
	default:
		return []Input{{InputComputed, ident[0]}}
	}
	return nil
}
