package yamldoc

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
)

// LineRE finds the line number that go-yaml puts into its messages ("yaml: line 3: …") and what
// follows it.
var LineRE = regexp.MustCompile(`line (\d+)(: (.*))?`)

// parserProblems are the problems go-yaml's parser (not its scanner) reports: every problem
// string of go.yaml.in/yaml/v2's parserc.go, which sigs.k8s.io/yaml, and so Istio's reader, parses
// with. Its fail() puts the 0-based line of the token it stopped at into such a message — one less
// than the line a person counts — and the 1-based line into a scanner's (engine's
// TestYAMLErrorLine).
var parserProblems = regexp.MustCompile(`^(did not find expected (key|node content|'-' indicator|',' or '\]'|',' or '\}'|<document start>|<stream-start>)|found (duplicate %TAG directive|duplicate %YAML directive|incompatible YAML document|undefined tag handle))`)

// TypeError is a typed decode's complaint (encoding/json's UnmarshalTypeError, as Kubernetes'
// decoder reports it): the JSON type of the value it found, the field's path from the object's
// root (the struct's name first, list indexes left out), and the Go type it wanted. Package
// wording words the same messages.
var TypeError = regexp.MustCompile(`cannot unmarshal (\w+) into Go struct field \w+\.([\w.]+) of type (\S+)`)

// UnknownAnchor is go-yaml's complaint about an alias of an anchor the text does not define,
// which names no line.
var UnknownAnchor = regexp.MustCompile(`unknown anchor '([^']*)' referenced`)

// ErrorLine is the line of text, counted from 1, that a person points at for an error reading
// text (msg, as sigs.k8s.io/yaml or Kubernetes' decoder says it), or 0 when msg names none:
//   - go-yaml's line, one more for its parser's problems (above), on the last line when it is
//     past the end (an unclosed bracket);
//   - a quoted string never closed ("found unexpected end of stream", which go-yaml v2 reports at
//     the end of the text): the line the string opens on, as go-yaml v3 finds it;
//   - a flow collection not closed where it should be ("did not find expected ',' or '}'"): the
//     line it opens on, as go-yaml v3 finds it, where v2 names the line it stopped on;
//   - a key that cannot follow ("did not find expected key", "mapping values are not allowed")
//     under a line that is a scalar without its colon (`- name app`): that line;
//   - an alias of an anchor that is not defined ("unknown anchor 'x' referenced"): the line of the
//     alias (*x);
//   - a resource quantity Kubernetes cannot read ("quantities must match the regular expression"):
//     the line of the first value under `requests`, `limits` or `overhead` that is not one;
//   - a value of the wrong type ("cannot unmarshal string into Go struct field
//     DeploymentSpec.spec.replicas of type int32"): the line of the field's key, the first whose
//     value is of the JSON type the message names (in a list, of any item; in a map of values, of
//     the value).
func ErrorLine(msg string, text []byte) int {
	m := LineRE.FindStringSubmatch(msg)
	if m == nil {
		if t := TypeError.FindStringSubmatch(msg); t != nil {
			return typeErrorLine(text, t[1], strings.Split(t[2], "."))
		}
		if a := UnknownAnchor.FindStringSubmatch(msg); a != nil {
			return aliasLine(text, a[1])
		}
		if strings.Contains(msg, QuantityMessage) {
			return quantityLine(text)
		}
		return 0
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return 0
	}
	problem := m[3]
	last := max(1, bytes.Count(bytes.TrimRight(text, "\n"), []byte("\n"))+1)
	switch {
	case problem == "found unexpected end of stream":
		if l := v3Line(text, problem, false); l > 0 {
			return min(l, last)
		}
	case strings.HasPrefix(problem, "did not find expected ',' or "):
		if l := v3Line(text, problem, true); l > 0 {
			return min(l, last)
		}
	}
	if parserProblems.MatchString(problem) {
		n++
	}
	n = min(n, last)
	if problem == "did not find expected key" || problem == "mapping values are not allowed in this context" {
		if p := colonless(text, n); p > 0 {
			return p
		}
	}
	return n
}

// v3Line is the line go-yaml v3 names for the same problem in text (0 when it says another):
// counted from 0 for a parser's problem, from 1 for its scanner's.
func v3Line(text []byte, problem string, parser bool) int {
	var n yaml.Node
	err := yaml.Unmarshal(text, &n)
	if err == nil {
		return 0
	}
	m := LineRE.FindStringSubmatch(err.Error())
	if m == nil || m[3] != problem {
		return 0
	}
	l, _ := strconv.Atoi(m[1])
	if parser {
		l++
	}
	return l
}

// colonless is the line before line n (the nearest that is not blank or a comment) when it is a
// scalar that looks like a key without its colon (`- name app`, `name web`), indented no deeper
// than line n; else 0.
func colonless(text []byte, n int) int {
	lines := strings.Split(string(text), "\n")
	if n < 2 || n > len(lines) {
		return 0
	}
	at := indent(lines[n-1])
	for i := n - 2; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if indent(lines[i]) > at {
			return 0
		}
		body := strings.TrimSpace(strings.TrimPrefix(l, "-"))
		if c := strings.Index(body, " #"); c >= 0 {
			body = strings.TrimSpace(body[:c])
		}
		if body == "" || strings.ContainsAny(body[:1], `"'[{|>&*!%@`+"`") || strings.Contains(body, ": ") || strings.HasSuffix(body, ":") {
			return 0
		}
		if !strings.Contains(body, " ") {
			return 0 // one word: a scalar, not a key and value run together
		}
		return i + 1
	}
	return 0
}

// QuantityMessage is what Kubernetes' decoder says of a resource quantity it cannot read.
const QuantityMessage = "quantities must match the regular expression"

// quantity is what Kubernetes' resource.Quantity reads (its error names this expression).
var quantity = regexp.MustCompile(`^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$`)

// quantityLine is the line of the first value of a `requests`, `limits` or `overhead` map that
// is not a quantity, or 0.
func quantityLine(text []byte) int {
	var doc yaml.Node
	if yaml.Unmarshal(text, &doc) != nil {
		return 0
	}
	var walk func(n *yaml.Node) int
	walk = func(n *yaml.Node) int {
		n = Deref(n)
		switch n.Kind {
		case yaml.DocumentNode, yaml.SequenceNode:
			for _, c := range n.Content {
				if l := walk(c); l > 0 {
					return l
				}
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], Deref(n.Content[i+1])
				if (k.Value == "requests" || k.Value == "limits" || k.Value == "overhead") && v.Kind == yaml.MappingNode {
					for j := 0; j+1 < len(v.Content); j += 2 {
						if q := Deref(v.Content[j+1]); q.Kind == yaml.ScalarNode && !quantity.MatchString(q.Value) {
							return v.Content[j].Line
						}
					}
				}
				if l := walk(v); l > 0 {
					return l
				}
			}
		}
		return 0
	}
	return walk(&doc)
}

// aliasLine is the first line with the alias *name, or 0.
func aliasLine(text []byte, name string) int {
	alias := "*" + name
	for i, l := range strings.Split(string(text), "\n") {
		for j := strings.Index(l, alias); j >= 0; {
			end := j + len(alias)
			if end == len(l) || strings.ContainsRune(" ,]}#\t", rune(l[end])) {
				return i + 1
			}
			k := strings.Index(l[end:], alias)
			if k < 0 {
				break
			}
			j = end + k
		}
	}
	return 0
}

// indent is the count of spaces a line starts with, a sequence's "- " counted as indent.
func indent(l string) int {
	n := 0
	for n < len(l) && (l[n] == ' ' || l[n] == '-' && n+1 < len(l) && l[n+1] == ' ') {
		n++
	}
	return n
}

// typeErrorLine finds the field path in text: the line of its key whose value has the JSON type
// got ("string", "number", "bool", "object", "array"), or 0.
func typeErrorLine(text []byte, got string, path []string) int {
	var doc yaml.Node
	if yaml.Unmarshal(text, &doc) != nil || len(doc.Content) == 0 {
		return 0
	}
	return findTyped(Deref(doc.Content[0]), nil, got, path)
}

// findTyped walks path from n (whose key is key, nil at the root): through every item of a list,
// since the path has no indexes; at its end, the key of a value of type got, or the key of the
// first entry of a map that has such a value.
func findTyped(n, key *yaml.Node, got string, path []string) int {
	n = Deref(n)
	if n.Kind == yaml.SequenceNode {
		for _, item := range n.Content {
			if l := findTyped(item, key, got, path); l > 0 {
				return l
			}
		}
		if len(path) > 0 {
			return 0
		}
	}
	if len(path) == 0 {
		if jsonType(n) == got && key != nil {
			return key.Line
		}
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if jsonType(Deref(n.Content[i+1])) == got {
					return n.Content[i].Line
				}
			}
		}
		return 0
	}
	k, v := MappingEntry(n, path[0])
	if k == nil {
		return 0
	}
	return findTyped(v, k, got, path[1:])
}

// jsonType is the JSON type sigs.k8s.io/yaml converts a node to.
func jsonType(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "object"
	case yaml.SequenceNode:
		return "array"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!int", "!!float":
			return "number"
		case "!!bool":
			return "bool"
		case "!!null":
			return "null"
		}
		return "string"
	}
	return ""
}

// ErrorColumn is the column, counted from 1 in characters, on line n of text (ErrorLine's) that
// a person points at for the error msg, or 0 when the message names no one place on it:
//   - a quoted string never closed: the quote that opens it;
//   - a flow collection not closed ("did not find expected ',' or '}'", "… node content"): its
//     bracket, the outermost left open on the line;
//   - a tab that breaks the indentation: the tab;
//   - a block sequence entry where a value belongs (`args: - x`): its "-";
//   - a key that cannot follow ("did not find expected key", "mapping values are not allowed"):
//     the line's first character past its indent and "- ";
//   - an alias of an anchor that is not defined: the alias;
//   - a value of the wrong type, a resource quantity Kubernetes cannot read: the value when it is
//     on the line, else its key.
func ErrorColumn(msg string, text []byte, n int) int {
	lines := strings.Split(string(text), "\n")
	if n < 1 || n > len(lines) {
		return 0
	}
	l := lines[n-1]
	col := func(i int) int { // byte offset i of l, as a column of characters
		if i < 0 {
			return 0
		}
		return utf8.RuneCountInString(l[:i]) + 1
	}
	problem := ""
	if m := LineRE.FindStringSubmatch(msg); m != nil {
		problem = m[3]
	}
	switch {
	case problem == "found unexpected end of stream":
		return col(openQuote(l))
	case strings.HasPrefix(problem, "did not find expected ',' or ") || problem == "did not find expected node content":
		return col(openBracket(l))
	case strings.HasPrefix(problem, "found a tab character"):
		return col(strings.IndexByte(l, '\t'))
	case strings.HasPrefix(problem, "block sequence entries are not allowed"):
		if i := strings.Index(l, ": - "); i >= 0 {
			return col(i + 2)
		}
	case problem == "did not find expected key" || problem == "mapping values are not allowed in this context":
		return col(indent(l))
	}
	if a := UnknownAnchor.FindStringSubmatch(msg); a != nil {
		return col(strings.Index(l, "*"+a[1]))
	}
	if TypeError.MatchString(msg) || strings.Contains(msg, QuantityMessage) {
		key := indent(l)
		if i := strings.Index(l[key:], ": "); i >= 0 {
			if v := strings.TrimLeft(l[key+i+2:], " "); v != "" && !strings.HasPrefix(v, "#") {
				return col(len(l) - len(v))
			}
		}
		return col(key)
	}
	return 0
}

// openQuote is the byte offset of the quote that opens a string the line leaves open, or -1.
func openQuote(l string) int {
	open := -1
	var q byte
	for i := 0; i < len(l); i++ {
		switch c := l[i]; {
		case q == 0 && (c == '"' || c == '\'') && (i == 0 || strings.ContainsRune(" \t:[{,-", rune(l[i-1]))):
			q, open = c, i
		case q == '"' && c == '\\':
			i++
		case q == '\'' && c == '\'' && i+1 < len(l) && l[i+1] == '\'':
			i++
		case q != 0 && c == q:
			q, open = 0, -1
		case q == 0 && c == '#' && i > 0 && l[i-1] == ' ':
			return -1
		}
	}
	return open
}

// openBracket is the byte offset of the flow bracket ('[' or '{') the line leaves open, outside
// quotes: the one a wrong closing bracket meets, else the outermost still open, else the line's
// first; or -1.
func openBracket(l string) int {
	var stack []int
	first := -1
	var q byte
	for i := 0; i < len(l); i++ {
		c := l[i]
		switch {
		case q != 0:
			if c == q {
				q = 0
			}
		case c == '"' || c == '\'':
			q = c
		case c == '#' && i > 0 && l[i-1] == ' ':
			i = len(l)
		case c == '[' || c == '{':
			if first < 0 {
				first = i
			}
			stack = append(stack, i)
		case (c == ']' || c == '}') && len(stack) > 0:
			top := stack[len(stack)-1]
			if (c == ']') != (l[top] == '[') {
				return top // closed by the wrong bracket: it is the one left open
			}
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) > 0 {
		return stack[0]
	}
	return first
}
