package yamldoc

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"
)

// DepthBound is an upper bound on how deeply the collections of one YAML document nest, read
// from its bytes without parsing it (a parse of deep nesting costs the parser its depth for
// every token: 45 documents nested 9,000 deep took a second of CPU to parse). It reads the
// text as the parser's scanner (go.yaml.in/yaml/v3) does where that decides structure — the
// stream's encoding and byte order marks, document markers, block indentation and "- "
// entries, flow brackets, quoted scalars (which begin only where a token begins, and go on
// over lines), plain scalars (whose spaces begin no token, and which go on over lines more
// indented than their collection, or anywhere in a flow collection), comments, block scalars
// (their text: the lines at their indentation), anchors and tags — and counts every bracket it
// cannot rule out. The bound is of the text; an alias makes the value as deep as the anchored
// node wherever it stands, which the text does not show: aliases reports whether the document
// has one (FuzzDepthBound and TestDepthBoundGenerated hold the bound against the parser on
// documents without).
func DepthBound(doc []byte) (bound int, aliases bool) {
	doc = utf8Text(doc)
	var (
		levels []level // the open block levels, by column
		flow   int     // open flow collections
		// seqs says, for each open flow collection, whether it is a sequence, and pairs whether
		// that sequence's current entry is a single-pair mapping ("[k: v]" and "[? k]" nest a
		// mapping in the sequence, "{k: v}" does not); paired counts the open ones.
		seqs, pairs []bool
		paired      int
		// A block scalar's text is the lines indented at least blockIndent; until its first
		// line that is not empty sets it (blockAuto), the lines indented more than blockParent,
		// the column of its collection. none: no block scalar is open.
		blockParent = none
		blockIndent int
		blockAuto   bool
		// scalarCol is the column of the collection of a plain scalar that ended the last
		// line in block context (the lines indented more go on with it), or none.
		scalarCol = none
		// quote is the quote of a quoted scalar the last line ended in, which goes on over the
		// next lines, whatever their indentation, to its closing quote. flowPlain: the last
		// line ended in a plain scalar in a flow collection, which goes on at the next line.
		// contCol is the column of the collection of what the last line left open (a quoted
		// scalar, a flow collection).
		quote     byte
		flowPlain bool
		contCol   int
		compact   []level // the levels nested on the line (below), kept for the next lines
	)
	for start := 0; start < len(doc); {
		end, next := lineEnd(doc, start)
		line := doc[start:end]
		start = next
		// A byte order mark that begins a line is skipped where a token may begin, and counts
		// as a column; in a scalar's text it is text: either way, one column of a space.
		bom := bytes.HasPrefix(line, utf8BOM)
		if bom {
			line = append([]byte{' '}, line[len(utf8BOM):]...)
		}

		col := 0
		for col < len(line) && line[col] == ' ' {
			col++
		}
		empty := col == len(line)
		blank := empty || line[col] == '#'
		i := 0
		token, plain := true, false // a token may begin here; inside a plain scalar
		keyCol := contCol           // the column of the collection of the line's last scalar
		keyOK := true               // a key may begin here: tok is where the last one began
		tok := 0

		// A document marker ends what is open in block context and begins a document, whose
		// node may follow on the line.
		marker := quote == 0 && !bom && len(line) >= 3 && (string(line[:3]) == "---" || string(line[:3]) == "...") &&
			(len(line) == 3 || line[3] == ' ' || line[3] == '\t')
		switch {
		case marker:
			levels, blockParent, scalarCol = levels[:0], none, none
			i, keyCol = 3, -1
		case blockParent != none:
			if empty {
				if blockAuto {
					blockIndent = max(blockIndent, col)
				}
				continue
			}
			if blockAuto {
				blockIndent, blockAuto = max(blockIndent, col, blockParent+1, 1), false
			}
			if col >= blockIndent && !bom {
				continue // the block scalar's text
			}
			blockParent = none
		}
		// A line that begins in a quoted scalar (which goes on to its closing quote, whatever the
		// line's indentation) or after a marker has no indentation of its own.
		indented := !marker && quote == 0
		if indented && flow == 0 && scalarCol != none {
			if blank || (col > scalarCol && (!bom || scalarCol < 0)) {
				continue // a plain scalar's next line: text, whatever it holds
			}
			scalarCol = none
		}
		if indented {
			if flow > 0 {
				if flowPlain {
					token, plain = false, true
				}
			} else {
				if blank {
					continue
				}
				for len(levels) > 0 && levels[len(levels)-1].col > col {
					levels = levels[:len(levels)-1]
				}
				// A line with no key or entry is a scalar (or a flow collection) of the innermost
				// collection at or left of its column: the level at its column (a mapping or
				// sequence begun there, on a line or after "- "), or the one below it.
				keyCol = col
				if len(levels) == 0 || levels[len(levels)-1].col < col {
					keyCol = -1
					if len(levels) > 0 {
						keyCol = levels[len(levels)-1].col
					}
					levels = append(levels, level{col: col})
				}
				dash := line[col] == '-' && (col+1 == len(line) || line[col+1] == ' ' || line[col+1] == '\t')
				top := &levels[len(levels)-1]
				top.entries = top.entries || dash
				top.keys = top.keys || !dash
				i, tok = col, col
			}
		}
		// A block level holds a mapping, a sequence, or both (a sequence under one of its keys
		// at the key's own column); "- " entries and a mapping after them nest on the same line;
		// the line's own node is one more.
		block := 1 + blockWeight(levels)
		if marker {
			block = 1
		}
		depth := block + flow + paired // what is open where the line begins
		// nest counts what nests on this line before a flow collection opens: "- " entries, "? "
		// complex keys, and keys after either (a mapping inside the entry or the key), so that
		// the collection is counted inside them ("? 0: [?0]" nests four deep, FuzzDepthBound);
		// compact holds their levels, which the next lines are in.
		nest := 0
		compact = compact[:0]
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
			if flow == 0 && token && keyOK && c != ' ' && c != '\t' && c != '#' && c != '-' && c != '?' && c != ':' {
				tok, keyOK = i, false // a node that may be a key begins (its anchor or tag first)
			}
			switch {
			case c == ' ' || c == '\t':
				if !plain {
					token = true
				}
				continue
			case c == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t'):
				i, plain = len(line), false // a comment
				continue
			// ":" is the value indicator before a blank, and in a flow collection wherever a
			// token begins; in block context ":x" begins a plain scalar (":\": [?0]" is a key
			// ":\"", not a key and a quote, FuzzDepthBound), as the parser's scanner reads it.
			case c == ':' && (next == ' ' || next == '\t' || i+1 == len(line) || (flow > 0 && (isFlowIndicator(next) || !plain))):
				token, plain = true, false
				if flow == 0 {
					keyCol, keyOK = tok, true
					if nest > 0 {
						nest++
						compact = append(compact, level{col: tok, keys: true})
					}
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
					quote = c
				} else {
					plain = true
				}
			case '-', '?':
				if token && flow == 0 && (next == ' ' || next == '\t' || i+1 == len(line)) {
					depth++ // an entry, or a complex key, nested on this line
					if nest > 0 || i > col {
						compact = append(compact, level{col: i, entries: c == '-', keys: c == '?'})
					}
					nest++
					keyCol, tok, keyOK = i, i+2, true
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
					blockParent, blockIndent, blockAuto = keyCol, 0, true
					for j := i + 1; j < len(line) && (line[j] == '+' || line[j] == '-' || line[j] >= '1' && line[j] <= '9'); j++ {
						if line[j] != '+' && line[j] != '-' {
							// An indentation indicator: the text is that much more indented
							// than the collection (at the top, than column 0).
							blockIndent, blockAuto = max(keyCol, 0)+int(line[j]-'0'), false
						}
					}
					i = len(line)
					continue
				}
				plain, token = true, false
			default:
				plain, token = true, false
			}
		}
		if quote != 0 || flow > 0 {
			contCol = keyCol
		} else if plain {
			scalarCol = keyCol
		}
		flowPlain = flow > 0 && plain
		// The entries, complex keys and mappings nested on this line hold the next lines.
		for _, l := range compact {
			if len(levels) == 0 || l.col > levels[len(levels)-1].col {
				levels = append(levels, l)
			}
		}
		bound = max(bound, depth)
	}
	return bound, aliases
}

// none: no block scalar or plain scalar is open (a collection's column is -1 at the top).
const none = -2

var utf8BOM = []byte("\xef\xbb\xbf")

// utf8Text is the document as UTF-8, as the parser reads it: a UTF-16 stream (which begins with
// its byte order mark) decoded, a UTF-8 one without its byte order mark.
func utf8Text(doc []byte) []byte {
	if len(doc) >= 2 && (doc[0] == 0xff && doc[1] == 0xfe || doc[0] == 0xfe && doc[1] == 0xff) {
		le := doc[0] == 0xff
		units := make([]uint16, 0, len(doc)/2)
		for i := 2; i+1 < len(doc); i += 2 {
			if le {
				units = append(units, uint16(doc[i])|uint16(doc[i+1])<<8)
			} else {
				units = append(units, uint16(doc[i])<<8|uint16(doc[i+1]))
			}
		}
		out := make([]byte, 0, len(doc))
		for _, r := range utf16.Decode(units) {
			out = utf8.AppendRune(out, r)
		}
		return out
	}
	return bytes.TrimPrefix(doc, utf8BOM)
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

// blockWeight is how many block collections the open levels hold.
func blockWeight(levels []level) int {
	w := 0
	for _, l := range levels {
		w++
		if l.keys && l.entries {
			w++
		}
	}
	return w
}

func isFlowIndicator(c byte) bool { return c == ',' || c == '[' || c == ']' || c == '{' || c == '}' }
