package secrets

import (
	"bytes"
	"cmp"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/sidecarlab/sidecarlab/engine/input"
)

// Redact replaces every value Scan flags with Redacted and leaves every other byte of the
// manifest as it was: comments, quoting, layout, line ends. A flagged scalar keeps its style
// ("…" stays double-quoted, a block (|, >) becomes a plain scalar), so the document keeps its
// shape. Where the text of a value cannot be found exactly (a plain scalar folded over several
// lines, an anchor), that document is written again from its parsed tree with the values
// replaced (its comments kept where the YAML encoder keeps them). Each redacted document is parsed
// again and must equal the original with exactly the flagged values replaced: an in-place edit
// that does not falls back to writing the document again, and one written again that does not is
// an *Error, never a manifest with a secret left in it. In a document that does not parse,
// the flagged tokens are replaced where they are.
func Redact(manifest []byte) (string, error) {
	docs := splitScanDocs(manifest)
	hits := scanSecrets(docs)
	if len(hits) == 0 {
		return string(manifest), nil
	}
	lines := inputLines(manifest)
	byDoc := make(map[int][]secretHit)
	for _, h := range hits {
		if h.node != nil || h.token.line > 0 || h.comment != nil {
			byDoc[h.Doc] = append(byDoc[h.Doc], h)
		}
	}
	var edits []edit
	for _, d := range docs {
		dh := byDoc[d.index]
		if len(dh) == 0 {
			continue
		}
		e, err := redactDoc(d, dh)
		if err != nil {
			return "", err
		}
		edits = append(edits, e...)
	}
	text, ok := applyEdits(lines, edits)
	if !ok {
		return "", &Error{ID: "redact-differs"}
	}
	return text, nil
}

// Error is a document Redact could not redact. Doc is its 1-based number and Line the 1-based
// line of the input it starts on (0 when not known); ID names sidecarlab's sentence for it (the
// catalogs' input.<ID>), worded with Params. Callers report it as they report any other problem
// with the input (handlers: an input.Error of the field "manifest").
type Error struct {
	Doc, Line int
	ID        string
	Params    map[string]string
}

// Error is the sentence in English, as an input error's (input.Error.Text).
func (e *Error) Error() string { return (&input.Error{ID: e.ID, Params: e.Params}).Text() }

// edit replaces [from, to) of the input, as (line, byte column) pairs, 1-based lines.
type edit struct {
	fromLine, fromCol, toLine, toCol int
	text                             string
}

func redactDoc(d scanDoc, hits []secretHit) ([]edit, error) {
	if d.root == nil {
		var edits []edit
		for _, h := range hits {
			edits = append(edits, edit{h.token.line, h.token.from, h.token.line, h.token.to, Redacted})
		}
		return edits, nil
	}
	// replaced is each flagged node's value once redacted: Redacted, or its value with the
	// flagged spans replaced (a password in a file the value holds).
	replaced := make(map[*yaml.Node]string)
	spans := make(map[*yaml.Node][]textSpan)
	whole := make(map[*yaml.Node]bool)
	var order []*yaml.Node
	var scrub []secretHit
	for _, h := range hits {
		if h.comment != nil {
			scrub = append(scrub, h)
			continue
		}
		if _, ok := replaced[h.node]; !ok {
			order = append(order, h.node)
		}
		replaced[h.node] = ""
		if h.spans == nil {
			whole[h.node] = true
		} else {
			spans[h.node] = append(spans[h.node], h.spans...)
		}
	}
	// A comment is not a node's value: the secret is replaced in the comment's text where it
	// is (commentEdits), else the document is written again with it taken out.
	exact := true
	var edits []edit
	if len(scrub) > 0 {
		edits, exact = commentEdits(d, scrub)
	}
	for _, n := range order {
		if whole[n] {
			replaced[n] = Redacted
		} else {
			sp := mergeTextSpans(spans[n])
			spans[n] = sp
			replaced[n] = replaceSpans(n.Value, sp)
		}
		// Every flagged node is marked even when one cannot be edited exactly: the fallback
		// replaces them all.
		var es []edit
		ok := false
		if whole[n] {
			var e edit
			e, ok = scalarEdit(d, n)
			es = []edit{e}
		} else {
			es, ok = spanEdits(d, n, spans[n])
		}
		if ok {
			edits = append(edits, es...)
		} else {
			exact = false
		}
	}
	if exact {
		if checkRedacted(d, edits, replaced, scrub) {
			return edits, nil
		}
	}
	// Write the document again from its tree.
	for _, h := range scrub {
		n := h.comment
		n.HeadComment = strings.ReplaceAll(n.HeadComment, h.secret, Redacted)
		n.LineComment = strings.ReplaceAll(n.LineComment, h.secret, Redacted)
		n.FootComment = strings.ReplaceAll(n.FootComment, h.secret, Redacted)
	}
	for n, v := range replaced {
		n.Value = v
		if whole[n] {
			n.Tag = "!!str"
			if n.Style == yaml.LiteralStyle || n.Style == yaml.FoldedStyle {
				n.Style = 0
			}
		}
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(d.root); err != nil {
		return nil, &Error{Doc: d.index, Line: d.Line, ID: "redact-failed", Params: map[string]string{"error": err.Error()}}
	}
	text := buf.String()
	var got yaml.Node
	if yaml.Unmarshal([]byte(text), &got) != nil || len(got.Content) == 0 || !sameTree(d.root.Content[0], got.Content[0], replaced) {
		return nil, &Error{Doc: d.index, Line: d.Line, ID: "redact-differs"}
	}
	first := 0
	if strings.HasPrefix(d.lines[0], "---") {
		// The separator that opens the document stays.
		first = 1
	}
	last := len(d.lines) - 1
	// The encoder may end a block scalar with blank lines of its own; they go when the
	// document (with the line end the input keeps after it) reads the same without them.
	text = strings.TrimSuffix(text, "\n")
	end := ""
	if bytes.HasSuffix(d.Raw, []byte("\n")) {
		end = "\n"
	}
	if t := strings.TrimRight(text, "\n"); t != text && yaml.Unmarshal([]byte(t+end), &got) == nil && len(got.Content) > 0 && sameTree(d.root.Content[0], got.Content[0], replaced) {
		text = t
	}
	return []edit{{d.Line + first, 0, d.Line + last, len(d.lines[last]), text}}, nil
}

// scalarEdit finds the text of a scalar in its document: from its first character (a quote, a
// block indicator, or the value) to its last. ok is false when it cannot be found exactly.
func scalarEdit(d scanDoc, n *yaml.Node) (edit, bool) {
	li := n.Line - 1
	if li < 0 || li >= len(d.lines) || n.Anchor != "" || n.Style&yaml.TaggedStyle != 0 {
		return edit{}, false
	}
	line := d.lines[li]
	col, ok := byteCol(line, n.Column)
	if !ok {
		return edit{}, false
	}
	at := func(l, c int) edit { return edit{d.Line + li, col, d.Line + l, c, ""} }
	switch {
	case n.Style&yaml.DoubleQuotedStyle != 0:
		if !strings.HasPrefix(line[col:], `"`) {
			return edit{}, false
		}
		for l, c := li, col+1; l < len(d.lines); l, c = l+1, 0 {
			s := d.lines[l]
			for ; c < len(s); c++ {
				switch s[c] {
				case '\\':
					c++
				case '"':
					e := at(l, c+1)
					e.text = `"` + Redacted + `"`
					return e, true
				}
			}
		}
	case n.Style&yaml.SingleQuotedStyle != 0:
		if !strings.HasPrefix(line[col:], `'`) {
			return edit{}, false
		}
		for l, c := li, col+1; l < len(d.lines); l, c = l+1, 0 {
			s := d.lines[l]
			for ; c < len(s); c++ {
				if s[c] == '\'' {
					if c+1 < len(s) && s[c+1] == '\'' {
						c++
						continue
					}
					e := at(l, c+1)
					e.text = "'" + Redacted + "'"
					return e, true
				}
			}
		}
	case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		if !strings.HasPrefix(line[col:], "|") && !strings.HasPrefix(line[col:], ">") {
			return edit{}, false
		}
		// The content: the lines after the header while they are blank or indented at least as
		// much as the first non-blank one (YAML's auto-detected indentation; an explicit
		// indentation indicator is left to the fallback).
		if strings.ContainsAny(strings.Fields(line[col:])[0], "123456789") {
			return edit{}, false
		}
		indent, end := -1, li
		for l := li + 1; l < len(d.lines); l++ {
			s := d.lines[l]
			if strings.TrimSpace(s) == "" {
				continue
			}
			ind := len(s) - len(strings.TrimLeft(s, " "))
			if indent < 0 {
				indent = ind
			}
			if ind < indent {
				break
			}
			end = l
		}
		if end == li {
			return edit{}, false
		}
		e := at(end, len(d.lines[end]))
		e.text = Redacted
		return e, true
	default:
		if !strings.HasPrefix(line[col:], n.Value) || strings.Contains(n.Value, "\n") {
			return edit{}, false
		}
		e := at(li, col+len(n.Value))
		e.text = Redacted
		return e, true
	}
	return edit{}, false
}

// replaceSpans is v with each span (sorted, apart) replaced by Redacted.
func replaceSpans(v string, spans []textSpan) string {
	var b strings.Builder
	at := 0
	for _, sp := range spans {
		b.WriteString(v[at:sp.from])
		b.WriteString(Redacted)
		at = sp.to
	}
	b.WriteString(v[at:])
	return b.String()
}

// spanEdits are the edits that replace spans of n's value where its text is its value: a plain
// or quoted scalar on one line without escapes, or a literal block (|) whose lines are its
// value's lines, indented. ok is false for any other (the document is written again).
func spanEdits(d scanDoc, n *yaml.Node, spans []textSpan) ([]edit, bool) {
	li := n.Line - 1
	if li < 0 || li >= len(d.lines) || n.Anchor != "" || n.Style&yaml.TaggedStyle != 0 {
		return nil, false
	}
	line := d.lines[li]
	col, ok := byteCol(line, n.Column)
	if !ok {
		return nil, false
	}
	var edits []edit
	oneLine := func(start int) ([]edit, bool) {
		if strings.Contains(n.Value, "\n") || !strings.HasPrefix(line[start:], n.Value) {
			return nil, false
		}
		for _, sp := range spans {
			edits = append(edits, edit{d.Line + li, start + sp.from, d.Line + li, start + sp.to, Redacted})
		}
		return edits, true
	}
	switch {
	case n.Style&yaml.DoubleQuotedStyle != 0:
		if strings.ContainsAny(n.Value, "\\\"") || !strings.HasPrefix(line[col:], `"`) {
			return nil, false
		}
		return oneLine(col + 1)
	case n.Style&yaml.SingleQuotedStyle != 0:
		if strings.Contains(n.Value, "'") || !strings.HasPrefix(line[col:], "'") {
			return nil, false
		}
		return oneLine(col + 1)
	case n.Style&yaml.LiteralStyle != 0:
		if !strings.HasPrefix(line[col:], "|") || strings.ContainsAny(strings.Fields(line[col:])[0], "123456789") {
			return nil, false
		}
		// The value's lines are the block's lines after the header, each without the block's
		// indentation (that of its first non-blank line).
		vlines := strings.Split(n.Value, "\n")
		indent := -1
		for l := li + 1; l < len(d.lines) && indent < 0; l++ {
			if t := strings.TrimLeft(d.lines[l], " "); t != "" {
				indent = len(d.lines[l]) - len(t)
			}
		}
		if indent < 0 {
			return nil, false
		}
		starts := make([]int, len(vlines))
		for i, at := 0, 0; i < len(vlines); i++ {
			starts[i] = at
			at += len(vlines[i]) + 1
		}
		for _, sp := range spans {
			k, _ := slices.BinarySearch(starts, sp.from+1)
			k--
			tl := li + 1 + k
			if tl >= len(d.lines) || sp.to > starts[k]+len(vlines[k]) {
				return nil, false
			}
			text := d.lines[tl]
			if len(text) < indent || text[indent:] != vlines[k] {
				return nil, false
			}
			at := indent + sp.from - starts[k]
			edits = append(edits, edit{d.Line + tl, at, d.Line + tl, at + sp.to - sp.from, Redacted})
		}
		return edits, true
	case n.Style&yaml.FoldedStyle == 0:
		return oneLine(col)
	}
	return nil, false
}

// byteCol turns yaml's 1-based column (in characters) into a byte offset in line.
func byteCol(line string, column int) (int, bool) {
	c := 0
	for i := range line {
		if c == column-1 {
			return i, true
		}
		c++
	}
	return 0, false
}

// checkRedacted applies the edits to the document alone and parses it again, and says whether it
// is the original tree with exactly the replaced scalars changed to Redacted and no comment that
// keeps a secret.
func checkRedacted(d scanDoc, edits []edit, replaced map[*yaml.Node]string, scrub []secretHit) bool {
	local := make([]edit, len(edits))
	for i, e := range edits {
		e.fromLine -= d.Line - 1
		e.toLine -= d.Line - 1
		local[i] = e
	}
	lines := make([]string, len(d.lines))
	for i, l := range d.lines {
		lines[i] = l + "\n"
	}
	text, ok := applyEdits(lines, local)
	if !ok {
		return false
	}
	var got yaml.Node
	if err := yaml.Unmarshal([]byte(text), &got); err != nil || len(got.Content) == 0 || !sameTree(d.root.Content[0], got.Content[0], replaced) {
		return false
	}
	return !slices.ContainsFunc(scrub, func(h secretHit) bool { return commentHolds(&got, h.secret) })
}

// commentEdits replace each comment secret of hits on the lines where it follows a "#" that
// starts a comment (at the line's start or after a space, outside quotes). ok is false when one
// is found on no line.
func commentEdits(d scanDoc, hits []secretHit) ([]edit, bool) {
	var edits []edit
	done := map[[2]int]bool{}
	for _, h := range hits {
		found := false
		for i, l := range d.lines {
			c := commentStart(l)
			if c < 0 {
				continue
			}
			for from := c; ; {
				j := strings.Index(l[from:], h.secret)
				if j < 0 {
					break
				}
				at := from + j
				from = at + len(h.secret)
				found = true
				if !done[[2]int{i, at}] {
					done[[2]int{i, at}] = true
					edits = append(edits, edit{d.Line + i, at, d.Line + i, at + len(h.secret), Redacted})
				}
			}
		}
		if !found {
			return nil, false
		}
	}
	// Two secrets of one comment that overlap cannot both be cut in place.
	slices.SortFunc(edits, func(a, b edit) int { return cmp.Or(a.fromLine-b.fromLine, a.fromCol-b.fromCol) })
	for i := 1; i < len(edits); i++ {
		if edits[i].fromLine == edits[i-1].fromLine && edits[i].fromCol < edits[i-1].toCol {
			return nil, false
		}
	}
	return edits, true
}

// commentStart is the byte where line's comment starts ("#" at the start or after a space or a
// tab, outside quotes), or -1.
func commentStart(line string) int {
	var quote byte
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case quote != 0:
			if c == quote {
				quote = 0
			} else if c == '\\' && quote == '"' {
				i++
			}
		case c == '"' || c == '\'':
			if i == 0 || strings.ContainsRune(" \t:[{,-", rune(line[i-1])) {
				quote = c
			}
		case c == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t'):
			return i
		}
	}
	return -1
}

// commentHolds says whether a comment of n or of a node under it holds s.
func commentHolds(n *yaml.Node, s string) bool {
	if strings.Contains(n.HeadComment+n.LineComment+n.FootComment, s) {
		return true
	}
	return slices.ContainsFunc(n.Content, func(c *yaml.Node) bool { return commentHolds(c, s) })
}

func sameTree(want, got *yaml.Node, replaced map[*yaml.Node]string) bool {
	if want.Kind != got.Kind || len(want.Content) != len(got.Content) {
		return false
	}
	if v, ok := replaced[want]; ok {
		return got.Value == v
	}
	if want.Value != got.Value || (want.Kind != yaml.ScalarNode && want.Tag != got.Tag) || want.Alias != nil != (got.Alias != nil) {
		return false
	}
	if want.Kind == yaml.ScalarNode && want.ShortTag() != got.ShortTag() {
		return false
	}
	for i := range want.Content {
		if !sameTree(want.Content[i], got.Content[i], replaced) {
			return false
		}
	}
	return true
}

// inputLines are the input's lines with their line ends ("\n", "\r\n" or none for the last).
func inputLines(in []byte) []string {
	s := string(in)
	var out []string
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// applyEdits applies edits (1-based lines, byte columns of the lines' content) to lines, which
// may carry their line ends; the edits must not overlap. ok is false when they do, or when one
// ends outside its line: nothing is applied then.
func applyEdits(lines []string, edits []edit) (text string, ok bool) {
	slices.SortFunc(edits, func(a, b edit) int {
		if a.fromLine != b.fromLine {
			return a.fromLine - b.fromLine
		}
		return a.fromCol - b.fromCol
	})
	var b strings.Builder
	l, c := 1, 0 // the next byte to copy
	for _, e := range edits {
		if e.fromLine < l || (e.fromLine == l && e.fromCol < c) || e.toLine > len(lines) {
			return "", false
		}
		for ; l < e.fromLine; l, c = l+1, 0 {
			b.WriteString(lines[l-1][c:])
		}
		b.WriteString(content(lines[l-1])[c:e.fromCol])
		b.WriteString(e.text)
		l, c = e.toLine, e.toCol
		if c > len(content(lines[l-1])) {
			return "", false
		}
	}
	for ; l <= len(lines); l, c = l+1, 0 {
		b.WriteString(lines[l-1][c:])
	}
	return b.String(), true
}

// content is a line without its line end.
func content(l string) string {
	return strings.TrimSuffix(strings.TrimSuffix(l, "\n"), "\r")
}
