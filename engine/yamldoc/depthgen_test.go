package yamldoc

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"unicode/utf16"
)

// The generator of YAML documents that FuzzDepthBound's seeds come from: random trees of
// mappings, sequences and scalars, written in the forms the parser's scanner tells apart —
// block and flow collections, compact entries ("- - a", "- k: v"), sequences at their key's
// column, complex keys, single-pair mappings in flow sequences, plain, quoted and block scalars
// that go on over lines (at any indentation where the parser allows it), anchors, tags,
// aliases, comments, blank lines, "\r\n", byte order marks, directives and document markers
// with a node on their line — and sometimes a few characters changed. About half of them parse;
// DepthBound must hold on those. (Written against what the fuzzer found in CI, ":\": [?0]",
// and what this generator found next: compact entries under-counted on the next lines, a
// quoted scalar's next lines read as indentation, a plain scalar going on over lines in a flow
// collection, "--- [[[1]]]", byte order marks.)

// gnode is a generated node: a mapping (kids: key, value, ...), a sequence or a scalar.
type gnode struct {
	kind byte // 'm', 's', 'v'
	kids []gnode
}

// ygen writes generated documents into b.
type ygen struct {
	r *rand.Rand
	b strings.Builder
}

// node is a tree at most depth deep.
func (g *ygen) node(depth int) gnode {
	if depth <= 0 || g.r.IntN(4) == 0 {
		return gnode{kind: 'v'}
	}
	n := 1 + g.r.IntN(3)
	var kids []gnode
	if g.r.IntN(2) == 0 {
		for range n {
			kids = append(kids, g.node(depth-1))
		}
		return gnode{kind: 's', kids: kids}
	}
	for range n {
		k := gnode{kind: 'v'}
		if g.r.IntN(8) == 0 {
			k = g.node(depth - 1)
		}
		kids = append(kids, k, g.node(depth-1))
	}
	return gnode{kind: 'm', kids: kids}
}

// plainWords are plain scalars, some beginning or holding indicators; textChars are what
// quoted scalars, block scalars, comments and changes hold.
var plainWords = []string{"a", "b0", "x-y", "q?r", "s:t", "u#v", "w'x", "y\"z", "1", "-3", "c.d", ":e", "?f", "%g", "@h"}
var textChars = []string{"[", "]", "{", "}", ",", "\"", "'", "#", ":", " ", "a", "- ", ": ", "? ", "|", ">", "&a", "*a", "!t", "\\"}

func (g *ygen) pick(s []string) string { return s[g.r.IntN(len(s))] }

// text is n pieces of textChars.
func (g *ygen) text(n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(g.pick(textChars))
	}
	return b.String()
}

// nl ends a line, sometimes with a comment, and writes blank lines.
func (g *ygen) nl() {
	if g.r.IntN(6) == 0 {
		g.b.WriteString(" # " + g.text(3))
	}
	switch g.r.IntN(24) {
	case 0, 1:
		g.b.WriteString("\r\n")
	case 2:
		g.b.WriteString("\u0085") // NEL, a line break to the parser
	case 3:
		g.b.WriteString("\u2028") // LS
	default:
		g.b.WriteString("\n")
	}
	if g.r.IntN(10) == 0 {
		g.b.WriteString(strings.Repeat(" ", g.r.IntN(6)) + "\n")
	}
}

// sp is n spaces.
func sp(n int) string { return strings.Repeat(" ", max(0, n)) }

// scalar writes a scalar; multi-line forms continue on lines indented at cont (block) or anywhere (flow).
func (g *ygen) scalar(flow bool, cont int) {
	switch g.r.IntN(7) {
	case 0, 1:
		w := g.pick(plainWords)
		if flow {
			w = strings.NewReplacer("s:t", "st", "u#v", "uv").Replace(w)
		}
		g.b.WriteString(w)
		if g.r.IntN(5) == 0 {
			g.b.WriteString("\n" + sp(cont+g.r.IntN(3)) + g.pick([]string{"more", "\"q", "'q", "[x", "x]", "- a", "# c", "a: b", "|", "?"}))
		}
	case 2:
		g.b.WriteString("\"" + strings.NewReplacer("\"", "\\\"", "\\", "\\\\").Replace(g.text(g.r.IntN(4))))
		if g.r.IntN(3) == 0 {
			g.b.WriteString("\n" + sp(g.r.IntN(cont+3)) + strings.NewReplacer("\"", "", "\\", "").Replace(g.text(2)))
		}
		g.b.WriteString("\"")
	case 3:
		g.b.WriteString("'" + strings.ReplaceAll(g.text(g.r.IntN(4)), "'", "''"))
		if g.r.IntN(3) == 0 {
			g.b.WriteString("\n" + sp(g.r.IntN(cont+3)) + strings.ReplaceAll(g.text(2), "'", ""))
		}
		g.b.WriteString("'")
	case 4:
		if !flow {
			g.b.WriteString(g.pick([]string{"|", ">", "|-", ">+", "|2", "|1-"}))
			g.nl()
			in := cont + 1 + g.r.IntN(3)
			for range 1 + g.r.IntN(3) {
				g.b.WriteString(sp(in+g.r.IntN(2)) + strings.NewReplacer("\t", "").Replace(g.text(3)) + "\n")
			}
			return
		}
		g.b.WriteString("\"\"")
	case 5:
		g.b.WriteString(g.pick([]string{"&a ", "!t ", "!!str ", "&b !t "}) + "x")
	default:
		g.b.WriteString(g.pick([]string{"*a", "''", "\"\"", "~", "null", "0", "-"}))
	}
	if !flow {
		g.nl()
	}
}

// flow writes n as a flow node; its lines after the first are indented at cont or more.
func (g *ygen) flow(n gnode, cont int) {
	sepr := func() {
		g.b.WriteString(g.pick([]string{",", ", ", " ,", ",\n" + sp(cont+g.r.IntN(3)), "\n" + sp(cont+1) + ",", ", # \"[ ,\n" + sp(cont), ",\t"}))
	}
	if g.r.IntN(8) == 0 {
		g.b.WriteString(g.pick([]string{"&a ", "!t ", "!!seq "}))
	}
	switch n.kind {
	case 'v':
		g.scalar(true, cont)
	case 's':
		g.b.WriteString("[")
		for i, k := range n.kids {
			if i > 0 {
				sepr()
			}
			if k.kind == 'm' && len(k.kids) == 2 && g.r.IntN(2) == 0 {
				if g.r.IntN(3) == 0 {
					g.b.WriteString("? ")
				}
				g.flow(k.kids[0], cont)
				g.b.WriteString(g.pick([]string{": ", " : ", ":\n" + sp(cont+1)}))
				g.flow(k.kids[1], cont)
				continue
			}
			g.flow(k, cont)
		}
		g.b.WriteString("]")
	case 'm':
		g.b.WriteString("{")
		for i := 0; i < len(n.kids); i += 2 {
			if i > 0 {
				sepr()
			}
			g.flow(n.kids[i], cont)
			g.b.WriteString(g.pick([]string{": ", " : ", ":\n" + sp(cont+1)}))
			g.flow(n.kids[i+1], cont)
		}
		g.b.WriteString("}")
	}
}

// value writes n after "key:" or "-" on a line whose block collection is at col.
func (g *ygen) value(n gnode, col int, dash bool) {
	if n.kind == 'v' || g.r.IntN(4) == 0 {
		g.b.WriteString(" ")
		if n.kind == 'v' {
			g.scalar(false, col)
			return
		}
		g.flow(n, col+1)
		g.nl()
		return
	}
	if dash && g.r.IntN(2) == 0 {
		extra := g.r.IntN(3)
		g.b.WriteString(sp(1 + extra))
		g.block(n, col+2+extra)
		return
	}
	if g.r.IntN(6) == 0 {
		g.b.WriteString(g.pick([]string{" &a", " !t"}))
	}
	g.nl()
	in := col + 1 + g.r.IntN(3)
	if n.kind == 's' && !dash && g.r.IntN(2) == 0 {
		in = col
	}
	g.b.WriteString(sp(in))
	g.block(n, in)
}

// block writes a block collection whose first entry's indentation is already written.
func (g *ygen) block(n gnode, col int) {
	first := true
	ind := func() {
		if !first {
			g.b.WriteString(sp(col))
		}
		first = false
	}
	switch n.kind {
	case 'v':
		g.scalar(false, col)
	case 's':
		for _, k := range n.kids {
			ind()
			g.b.WriteString("-")
			g.value(k, col, true)
		}
	case 'm':
		for i := 0; i < len(n.kids); i += 2 {
			ind()
			k := n.kids[i]
			if k.kind != 'v' || g.r.IntN(10) == 0 {
				g.b.WriteString("?")
				g.value(k, col, false)
				g.b.WriteString(sp(col) + ":")
				g.value(n.kids[i+1], col, false)
				continue
			}
			if g.r.IntN(6) == 0 {
				g.b.WriteString(g.pick([]string{"&k ", "!t "}))
			}
			switch g.r.IntN(4) {
			case 0:
				g.b.WriteString("\"" + strings.NewReplacer("\"", "", "\\", "").Replace(g.text(2)) + "\"")
			case 1:
				g.b.WriteString("'" + strings.ReplaceAll(g.text(2), "'", "") + "'")
			default:
				g.b.WriteString(g.pick([]string{"a", "b", "c-d", "e.f", "g h", "0"}) + strconv.Itoa(i))
			}
			g.b.WriteString(":")
			g.value(n.kids[i+1], col, false)
		}
	}
}

// doc is a generated document.
func (g *ygen) doc() string {
	g.b.Reset()
	switch g.r.IntN(10) {
	case 0:
		g.b.WriteString("\ufeff")
	case 1:
		g.b.WriteString("--- ")
		g.flow(g.node(4), 1)
		g.b.WriteString("\n")
		return g.b.String()
	case 2:
		g.b.WriteString("%YAML 1.1\n---\n")
	case 3:
		g.b.WriteString("---\n")
	}
	n := g.node(1 + g.r.IntN(6))
	if g.r.IntN(5) == 0 {
		g.flow(n, 1)
		g.b.WriteString("\n")
	} else {
		g.block(n, 0)
	}
	if g.r.IntN(8) == 0 {
		g.b.WriteString(g.pick([]string{"...\n", "---\n", "--- "}))
		g.flow(g.node(3), 1)
		g.b.WriteString("\n")
	}
	return g.b.String()
}

// mutate changes a few characters of s.
func mutate(r *rand.Rand, s string) string {
	for range r.IntN(3) {
		if len(s) == 0 {
			return s
		}
		i := r.IntN(len(s))
		switch r.IntN(4) {
		case 0:
			s = s[:i] + s[i+1:]
		case 1:
			s = s[:i] + textChars[r.IntN(len(textChars))] + s[i:]
		case 2:
			s = s[:i] + "\n" + sp(r.IntN(5)) + s[i:]
		default:
			s = s[:i] + " " + s[i:]
		}
	}
	return s
}

// generatedDocs are n generated documents from seed: half with a few characters changed, and one
// in 20 written in UTF-16 (with its byte order mark, little- or big-endian), which the parser
// reads too.
func generatedDocs(seed uint64, n int) []string {
	g := &ygen{r: rand.New(rand.NewPCG(seed, 11))}
	docs := make([]string, 0, n)
	for range n {
		doc := g.doc()
		if g.r.IntN(2) == 0 {
			doc = mutate(g.r, doc)
		}
		if g.r.IntN(20) == 0 {
			le := g.r.IntN(2) == 0
			b := []byte{0xfe, 0xff}
			if le {
				b = []byte{0xff, 0xfe}
			}
			for _, u := range utf16.Encode([]rune(doc)) {
				if le {
					b = append(b, byte(u), byte(u>>8))
				} else {
					b = append(b, byte(u>>8), byte(u))
				}
			}
			doc = string(b)
		}
		docs = append(docs, doc)
	}
	return docs
}
