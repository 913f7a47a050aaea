package yamldoc

// DepthBound is an upper bound on how deeply the collections of one YAML document nest, read
// from its bytes without parsing it (a parse of deep nesting costs the parser its depth for
// every token: 45 documents nested 9,000 deep took a second of CPU to parse). It reads the
// text as the parser's scanner does where that decides structure — block indentation and "- "
// entries, flow brackets, quoted scalars (which begin only where a token begins), plain scalars
// (whose spaces begin no token), comments, block scalars, anchors and tags — and counts every
// bracket it cannot rule out. The bound is of the text; an alias makes the value as deep as the
// anchored node wherever it stands, which the text does not show: aliases reports whether the
// document has one (FuzzDepthBound holds the bound against go.yaml.in/yaml/v3 on documents
// without).
func DepthBound(doc []byte) (bound int, aliases bool) {
	var (
		levels []level // the open block levels, by column
		flow   int     // open flow collections
		// seqs says, for each open flow collection, whether it is a sequence, and pairs whether
		// that sequence's current entry is a single-pair mapping ("[k: v]" and "[? k]" nest a
		// mapping in the sequence, "{k: v}" does not); paired counts the open ones.
		seqs, pairs []bool
		paired      int
		blockText   = -1 // inside a block scalar: the column its parent line started at
		// scalarCol is the column of the block line that ended inside a plain scalar (a more
		// indented line after it continues the scalar), or -1.
		scalarCol = -1
	)
	for start := 0; start < len(doc); {
		end, next := lineEnd(doc, start)
		line := doc[start:end]
		start = next

		col := 0
		for col < len(line) && line[col] == ' ' {
			col++
		}
		blank := col == len(line) || line[col] == '#' || line[col] == '\r'
		if blockText >= 0 {
			if blank || col > blockText {
				continue // the block scalar's text
			}
			blockText = -1
		}
		if flow == 0 && scalarCol >= 0 {
			if blank || col > scalarCol {
				continue // a plain scalar's next line: text, whatever it holds
			}
			scalarCol = -1
		}
		i := 0
		if flow == 0 {
			if blank {
				continue
			}
			for len(levels) > 0 && levels[len(levels)-1].col > col {
				levels = levels[:len(levels)-1]
			}
			if len(levels) == 0 || levels[len(levels)-1].col < col {
				levels = append(levels, level{col: col})
			}
			dash := line[col] == '-' && (col+1 == len(line) || line[col+1] == ' ' || line[col+1] == '\t' || line[col+1] == '\r')
			top := &levels[len(levels)-1]
			top.entries = top.entries || dash
			top.keys = top.keys || !dash
			i = col
		}
		// A block level holds a mapping, a sequence, or both (a sequence under one of its keys
		// at the key's own column); "- " entries and a mapping after them nest on the same line;
		// the line's own node is one more. A quoted scalar is
		// read to the line's end at most: one that goes on is counted as structure on the next
		// line (a bound too high, never too low).
		block := 1
		for _, l := range levels {
			block += l.weight()
		}
		depth := block
		token := true // a token may begin here
		plain := false
		var quote byte
		// keyCol is the column of the node the line's last scalar belongs to (the key before it,
		// the "- " entry before it, or the line's start): the next line continues that scalar only
		// when it is indented more. tok is where the last token began.
		keyCol, tok := col, col
		// nest counts what nests on this line before a flow collection opens: "- " entries, "? "
		// complex keys, and keys after either (a mapping inside the entry or the key), so that
		// the collection is counted inside them ("? 0: [?0]" nests four deep, FuzzDepthBound).
		nest := 0
		for ; i < len(line); i++ {
			c := line[i]
			if quote != 0 {
				switch {
				case c == '\\' && quote == '"':
					i++
				case c == quote && quote == '\'' && i+1 < len(line) && line[i+1] == '\'':
					i++
				case c == quote:
					quote, token = 0, false
				}
				continue
			}
			next := byte(' ')
			if i+1 < len(line) {
				next = line[i+1]
			}
			switch {
			case c == ' ' || c == '\t':
				if !plain {
					token = true
				}
				continue
			case c == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t'):
				i = len(line) // a comment
				continue
			case c == ':' && (next == ' ' || next == '\t' || next == '\r' || i+1 == len(line) || (flow > 0 && isFlowIndicator(next)) || !plain):
				token, plain, keyCol = true, false, tok
				if nest > 0 && flow == 0 {
					nest++
				}
				if flow > 0 && openPair(seqs, pairs) {
					paired++
					depth = max(depth, block+nest+flow+paired)
				}
				continue
			case c == '?' && token && flow > 0:
				if openPair(seqs, pairs) {
					paired++
					depth = max(depth, block+nest+flow+paired)
				}
				plain, token = false, true
				continue
			case flow > 0 && isFlowIndicator(c):
				plain = false
			case plain:
				continue
			}
			switch c {
			case '[', '{':
				flow++
				seqs, pairs = append(seqs, c == '['), append(pairs, false)
				depth = max(depth, block+nest+flow+paired)
				token = true
			case ']', '}':
				if flow > 0 {
					flow--
					if pairs[flow] {
						paired--
					}
					seqs, pairs = seqs[:flow], pairs[:flow]
				}
				token = false
			case ',':
				if flow > 0 && pairs[flow-1] {
					pairs[flow-1] = false
					paired--
				}
				token = true
			case '"', '\'':
				if token {
					quote, tok = c, i
				} else {
					plain = true
				}
			case '-', '?':
				if token && flow == 0 && (next == ' ' || next == '\t' || i+1 == len(line)) {
					depth++ // an entry, or a complex key, nested on this line
					nest++
					keyCol, tok = i, i+2
					i++
					continue
				}
				plain, token = true, false
			case '&', '!', '*':
				if !token {
					plain = true
					continue
				}
				aliases = aliases || c == '*'
				for i+1 < len(line) && line[i+1] != ' ' && line[i+1] != '\t' && !(flow > 0 && isFlowIndicator(line[i+1])) {
					i++
				}
				token = c != '*' // after an anchor or a tag, the node itself
			case '|', '>':
				if token && flow == 0 {
					blockText = keyCol
					i = len(line)
					continue
				}
				plain, token, tok = true, false, i
			default:
				if token {
					tok = i
				}
				plain, token = true, false
			}
		}
		if flow == 0 && plain {
			scalarCol = keyCol
		}
		bound = max(bound, depth+flow+paired)
	}
	return bound, aliases
}

// openPair marks the innermost open flow collection's entry as a single-pair mapping when the
// collection is a sequence whose entry is not one yet, and says whether it did.
func openPair(seqs, pairs []bool) bool {
	n := len(seqs)
	if n == 0 || !seqs[n-1] || pairs[n-1] {
		return false
	}
	pairs[n-1] = true
	return true
}

// lineEnd is where the line starting at start ends, and where the next one starts: a line
// breaks where the parser's scanner breaks it, at "\r\n", "\r", "\n", NEL, LS or PS.
func lineEnd(doc []byte, start int) (end, next int) {
	for end = start; end < len(doc); end++ {
		switch c := doc[end]; {
		case c == '\n':
			return end, end + 1
		case c == '\r':
			if end+1 < len(doc) && doc[end+1] == '\n' {
				return end, end + 2
			}
			return end, end + 1
		case c == 0xC2 && end+1 < len(doc) && doc[end+1] == 0x85:
			return end, end + 2
		case c == 0xE2 && end+2 < len(doc) && doc[end+1] == 0x80 && (doc[end+2] == 0xA8 || doc[end+2] == 0xA9):
			return end, end + 3
		}
	}
	return end, end
}

// level is one open block level: its column, and whether keys or "- " entries stand there.
type level struct {
	col           int
	keys, entries bool
}

func (l level) weight() int {
	if l.keys && l.entries {
		return 2
	}
	return 1
}

func isFlowIndicator(c byte) bool { return c == ',' || c == '[' || c == ']' || c == '{' || c == '}' }
