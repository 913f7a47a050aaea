// Package provenance observes Istio's injection templates as Istio runs them, to say where each
// field of a rendered template came from: the template line that wrote it and the conditions
// (if / with / range, and which branch ran) around that line. It runs no template logic of its
// own: it runs Istio's parsed template, over the very data Istio gave it, through a copy of its
// parse tree (text/template/parse is public) with marks between the nodes — functions that write
// nothing and note how far the output has come — so every byte of the output is known by the
// node that wrote it.
package provenance

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"text/template/parse"
)

// markFunc is the function a mark calls: its argument is the mark's node number. The name is
// one no template of Istio's or of a mesh's defines a function by (a template that calls a
// function of this name fails to parse before it gets here, since Istio's function map has
// none).
const markFunc = "sidecarlabProvenanceMark"

// Node is one node of a template's parse tree that writes output: a text or an action (an
// {{ expression }}, or a {{ template }} call), where it is, and the branches it sits in.
type Node struct {
	// ID numbers the node in its traced template, the same in every trace of that template.
	ID int `json:"-"`
	// Template is the {{ define }}'d template the node is in, or "" for the template's own text.
	Template string `json:"template"`
	// Line is the node's first line in the template's text, from 1.
	Line int `json:"line"`
	// Text is the node as written: the action ({{ index .ObjectMeta.Annotations "x" }}) or the
	// text.
	Text string `json:"text"`
	// Action says the node is an action; a text node writes its text as it is.
	Action bool `json:"action,omitempty"`
	// Conditions are the branches around the node, outermost first.
	Conditions []Condition `json:"conditions,omitempty"`
	// Inputs are what an action reads (through the variables and the dot it uses, too).
	Inputs []Input `json:"inputs,omitempty"`
}

// Condition is one branch a node sits in: an if, with or range as written (its pipeline), on
// its line, and which list of it holds the node (Else: the else list).
type Condition struct {
	// ID numbers the branch in its traced template, the same in every trace of that template.
	ID   int    `json:"-"`
	Kind string `json:"kind"`
	Text string `json:"text"`
	Line int    `json:"line"`
	Else bool   `json:"else,omitempty"`
	// Inputs are what the condition reads.
	Inputs []Input `json:"inputs,omitempty"`
}

// lineOf is the line of n in its template's text, from 1, as text/template's own errors say it.
func lineOf(t *parse.Tree, n parse.Node) int {
	loc, _ := t.ErrorContext(n)
	parts := strings.Split(loc, ":")
	if len(parts) < 3 {
		return 0
	}
	line, _ := strconv.Atoi(parts[len(parts)-2])
	return line
}

// Traced is a template's parse trees with a mark before every node and at the end of every
// list, and what each mark stands for. It is made once per template and run many times.
type Traced struct {
	tmpl     *template.Template
	nodes    []*Node
	branches int
	edits    []Edit
	// vars are what each variable of the template being traced reads, by name.
	vars map[string][]Input
}

// Edit changes a trace's copy of a template, to ask what a node or a branch is for: the
// template without a node (or one line of a text node), or with a branch's condition flipped.
type Edit struct {
	drop, line, flip int
}

// Dropping is the edit that leaves node id out; for a text node with line set, only that line
// of the template (and its line break).
func Dropping(id, line int) Edit { return Edit{drop: id + 1, line: line} }

// Flipping is the edit that flips branch id: the list that ran does not, the other does.
func Flipping(id int) Edit { return Edit{flip: id + 1} }

// Trace is t (and every template associated with it: its {{ define }}s) with marks between its
// nodes, and edits made. t is not changed: its trees are copied. Nodes and branches are
// numbered in the order of the templates' names and then of the text, so two traces of one
// template number them alike.
func Trace(t *template.Template, edits ...Edit) (*Traced, error) {
	c, err := t.Clone()
	if err != nil {
		return nil, err
	}
	tr := &Traced{edits: edits}
	// The marks are parsed together, as one template's actions: a mark is a real parse node.
	var marks []*parse.ActionNode
	next := func() *parse.ActionNode {
		if len(marks) == 0 {
			var b strings.Builder
			for i := range 256 {
				fmt.Fprintf(&b, "{{%s %d}}", markFunc, len(tr.nodes)+i)
			}
			trees, err := parse.Parse("marks", b.String(), "{{", "}}", map[string]any{markFunc: func(int) string { return "" }})
			if err != nil {
				panic(err) // marks are ours, and always parse
			}
			for _, n := range trees["marks"].Root.Nodes {
				marks = append(marks, n.(*parse.ActionNode))
			}
		}
		m := marks[0]
		marks = marks[1:]
		return m
	}
	all := c.Templates()
	slices.SortFunc(all, func(a, b *template.Template) int { return strings.Compare(a.Name(), b.Name()) })
	for _, tm := range all {
		if tm.Tree == nil || tm.Tree.Root == nil {
			continue
		}
		tree := tm.Tree.Copy()
		tr.vars = map[string][]Input{}
		name := tm.Name()
		if name == t.Name() {
			name = ""
		}
		tr.mark(tree, tree.Root, name, nil, nil, next)
		if _, err := c.AddParseTree(tm.Name(), tree); err != nil {
			return nil, err
		}
	}
	tr.tmpl = c
	return tr, nil
}

// mark puts a mark before each node of list and one at its end, recursing into the lists of
// branches; conds are the branches list sits in, dot what "." reads there.
func (tr *Traced) mark(t *parse.Tree, list *parse.ListNode, name string, conds []Condition, dot []Input, next func() *parse.ActionNode) {
	if list == nil {
		return
	}
	var out []parse.Node
	for _, n := range list.Nodes {
		switch v := n.(type) {
		case *parse.TextNode:
			node := &Node{Template: name, Line: lineOf(t, v), Text: string(v.Text), Conditions: conds}
			out = append(out, tr.markFor(node, next))
			if e, ok := tr.dropped(node.ID); ok {
				n = nil
				if e.line > 0 {
					n = withoutLine(v, e.line-node.Line)
				}
			}
		case *parse.ActionNode, *parse.TemplateNode:
			node := &Node{Template: name, Line: lineOf(t, n), Text: n.String(), Action: true, Conditions: conds, Inputs: reads(n, tr.vars, dot)}
			if a, ok := n.(*parse.ActionNode); ok && a.Pipe != nil {
				for _, v := range a.Pipe.Decl {
					tr.vars[v.Ident[0]] = node.Inputs
				}
			}
			out = append(out, tr.markFor(node, next))
			if _, ok := tr.dropped(node.ID); ok {
				n = nil
			}
		case *parse.IfNode:
			tr.branch(t, n, &v.BranchNode, "if", name, conds, dot, next)
		case *parse.WithNode:
			tr.branch(t, n, &v.BranchNode, "with", name, conds, dot, next)
		case *parse.RangeNode:
			tr.branch(t, n, &v.BranchNode, "range", name, conds, dot, next)
		}
		if n != nil {
			out = append(out, n)
		}
	}
	// The end of the list: the bytes after its last node are not that node's.
	out = append(out, tr.markFor(nil, next))
	list.Nodes = out
}

// branch marks both lists of a branch node; dot is what "." reads around it.
func (tr *Traced) branch(t *parse.Tree, n parse.Node, b *parse.BranchNode, kind, name string, conds []Condition, dot []Input, next func() *parse.ActionNode) {
	c := Condition{ID: tr.branches, Kind: kind, Text: b.Pipe.String(), Line: lineOf(t, n), Inputs: reads(b.Pipe, tr.vars, dot)}
	tr.branches++
	for _, v := range b.Pipe.Decl {
		tr.vars[v.Ident[0]] = c.Inputs // a range's $index, $element, an if's or with's $x
	}
	inner := dot
	if kind != "if" {
		inner = c.Inputs // inside a with or a range, "." is what it reads
	}
	in := append(append([]Condition(nil), conds...), c)
	tr.mark(t, b.List, name, in, inner, next)
	c.Else = true
	out := append(append([]Condition(nil), conds...), c)
	tr.mark(t, b.ElseList, name, out, dot, next)
	if slices.Contains(tr.edits, Flipping(c.ID)) {
		empty := &parse.ListNode{NodeType: parse.NodeList, Pos: b.Pos}
		b.List, b.ElseList = cmp.Or(b.ElseList, empty), b.List
	}
}

// dropped is the edit that drops node id, if one does.
func (tr *Traced) dropped(id int) (Edit, bool) {
	for _, e := range tr.edits {
		if e.drop == id+1 {
			return e, true
		}
	}
	return Edit{}, false
}

// withoutLine is a copy of a text node without its k-th line (from 0) and that line's break.
func withoutLine(n *parse.TextNode, k int) *parse.TextNode {
	c := n.Copy().(*parse.TextNode)
	lines := bytes.SplitAfter(c.Text, []byte("\n"))
	if k >= 0 && k < len(lines) {
		lines = append(lines[:k], lines[k+1:]...)
	}
	c.Text = bytes.Join(lines, nil)
	return c
}

// markFor is the next mark, standing for n (nil: for nothing, the end of a list).
func (tr *Traced) markFor(n *Node, next func() *parse.ActionNode) *parse.ActionNode {
	m := next() // numbered len(tr.nodes): the marks are numbered in the order they are taken
	if n != nil {
		n.ID = len(tr.nodes)
	}
	tr.nodes = append(tr.nodes, n)
	return m
}

// Span is a run of a rendering's bytes, [Start, End), and the node that wrote them.
type Span struct {
	Start, End int
	Node       int
}

// Rendering is one run of a traced template: its output, and which node wrote each byte of it.
type Rendering struct {
	Text  string
	Spans []Span
	nodes []*Node
}

// Run executes the traced template over data, as Istio executes the template: the output is
// byte for byte Istio's (the marks write nothing).
func (tr *Traced) Run(data any) (*Rendering, error) {
	c, err := tr.tmpl.Clone()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	var spans []Span
	cur, start := -1, 0
	c.Funcs(template.FuncMap{markFunc: func(id int) string {
		if at := buf.Len(); at > start && cur >= 0 {
			spans = append(spans, Span{Start: start, End: at, Node: cur})
		}
		cur, start = id, buf.Len()
		return ""
	}})
	if err := c.Execute(&buf, data); err != nil {
		return nil, err
	}
	if at := buf.Len(); at > start && cur >= 0 {
		spans = append(spans, Span{Start: start, End: at, Node: cur})
	}
	return &Rendering{Text: buf.String(), Spans: spans, nodes: tr.nodes}, nil
}

// At is the node that wrote byte off of the output, and the line of the template that holds
// that byte; nil when no node did (a byte outside the output).
func (r *Rendering) At(off int) (*Node, int) {
	lo, hi := 0, len(r.Spans)
	for lo < hi {
		m := (lo + hi) / 2
		if r.Spans[m].End <= off {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == len(r.Spans) || r.Spans[lo].Start > off {
		return nil, 0
	}
	s := r.Spans[lo]
	n := r.nodes[s.Node]
	if n == nil {
		return nil, 0
	}
	line := n.Line
	if !n.Action {
		line += strings.Count(n.Text[:min(off-s.Start, len(n.Text))], "\n") // a text node writes its Text as it is
	}
	return n, line
}

// placed is a node and the line of the template that holds a byte it wrote.
type placed struct {
	node *Node
	line int
}

// actions are the actions that wrote the bytes from up to to of the output, each once, in
// order, with their lines.
func (r *Rendering) actions(from, to int) []placed {
	var out []placed
	i, _ := slices.BinarySearchFunc(r.Spans, from, func(s Span, off int) int {
		if s.End <= off {
			return -1
		}
		return 1
	})
	for ; i < len(r.Spans) && r.Spans[i].Start < to; i++ {
		n := r.nodes[r.Spans[i].Node]
		if n == nil || !n.Action || slices.ContainsFunc(out, func(p placed) bool { return p.node == n }) {
			continue
		}
		out = append(out, placed{n, n.Line})
	}
	return out
}
