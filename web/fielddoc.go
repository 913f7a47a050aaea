package web

import (
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Istio's doc comments (ProxyConfig's fields, from proxy.proto) are written in a little Markdown:
// `code`, [text](https://…), [text][proto.Name], _emphasis_ and ```fenced blocks```. The page
// shows them as what they mean, never as HTML of their own: every piece is text that templ escapes,
// and a link is made only of an http or https address.

// DocSpan is a piece of a doc's paragraph: text, inline code, emphasis, or a link (Href, only
// ever an http or https URL).
type DocSpan struct {
	Text     string
	Code, Em bool
	Href     string
}

// DocBlock is a paragraph of spans, or a fenced code block's lines (Pre).
type DocBlock struct {
	Spans []DocSpan
	Pre   string
	IsPre bool
}

// FieldDoc is a doc as the page shows it: Lead in view, More behind a "more" that opens without
// JavaScript (<details>). More is empty when the whole doc is short.
type FieldDoc struct {
	Lead, More []DocBlock
}

// docLeadMax is about three lines of the panel (12.5 px type in a column ~400 px wide): a doc up
// to this long is shown whole; a longer one shows its first sentences up to this long (at least
// one sentence, whatever its length) and the rest behind "more".
const docLeadMax = 200

// ParseDoc turns a doc comment into blocks and splits a long one where a sentence of its first
// paragraph ends (never inside a word, a code span or a link): the lead is its first sentences up
// to docLeadMax characters, or its first sentence when that alone is longer.
func ParseDoc(doc string) FieldDoc {
	blocks := readBlocks(doc)
	if len(blocks) == 0 || docLen(blocks) <= docLeadMax {
		return FieldDoc{Lead: blocks}
	}
	first := blocks[0]
	if first.IsPre {
		return FieldDoc{Lead: blocks[:1], More: blocks[1:]}
	}
	type cut struct{ span, at, len int }
	var cuts []cut
	n := 0
	for si, s := range first.Spans {
		if !s.Code && !s.Em && s.Href == "" {
			for _, end := range sentenceEnds(s.Text) {
				cuts = append(cuts, cut{si, end, n + utf8.RuneCountInString(s.Text[:end])})
			}
		}
		n += utf8.RuneCountInString(s.Text)
	}
	last := len(first.Spans) - 1
	cuts = append(cuts, cut{last, len(first.Spans[last].Text), n}) // the paragraph's end
	pick := cuts[0]
	for _, c := range cuts[1:] {
		if c.len <= docLeadMax {
			pick = c
		}
	}
	var head, tail []DocSpan
	if pick.span == last && pick.at == len(first.Spans[last].Text) {
		head = first.Spans
	} else {
		head = append(slices.Clone(first.Spans[:pick.span]), DocSpan{Text: first.Spans[pick.span].Text[:pick.at]})
		if rest := strings.TrimLeft(first.Spans[pick.span].Text[pick.at:], " "); rest != "" {
			tail = append(tail, DocSpan{Text: rest})
		}
		tail = append(tail, first.Spans[pick.span+1:]...)
	}
	more := blocks[1:]
	if len(tail) > 0 {
		more = append([]DocBlock{{Spans: tail}}, more...)
	}
	return FieldDoc{Lead: []DocBlock{{Spans: head}}, More: more}
}

// docLen is the length of the blocks' text, in characters.
func docLen(blocks []DocBlock) int {
	n := 0
	for _, b := range blocks {
		n += utf8.RuneCountInString(b.Pre)
		for _, s := range b.Spans {
			n += utf8.RuneCountInString(s.Text)
		}
	}
	return n
}

// sentenceEnds are the offsets just past each ".", "!" or "?" in s that ends a sentence: followed
// by a space and then a capital letter, and not the end of "e.g." or "i.e." (so "e.g. `x`",
// "i.e. Envoy" and "0.5" end none). A mark at the very end of s is left alone: what follows it is
// another span (code, a link), and the paragraph's end is a cut of its own.
func sentenceEnds(s string) []int {
	var ends []int
	for i := 0; i+1 < len(s); i++ {
		if s[i] != '.' && s[i] != '!' && s[i] != '?' || s[i+1] != ' ' {
			continue
		}
		if lower := strings.ToLower(s[:i+1]); strings.HasSuffix(lower, "e.g.") || strings.HasSuffix(lower, "i.e.") {
			continue
		}
		if next, _ := utf8.DecodeRuneInString(strings.TrimLeft(s[i+1:], " ")); unicode.IsUpper(next) {
			ends = append(ends, i+1)
		}
	}
	return ends
}

// readBlocks splits a doc into paragraphs and fenced blocks (the generator puts each fence on lines
// of its own; an unclosed fence runs to the end).
func readBlocks(doc string) []DocBlock {
	var out []DocBlock
	var pre []string
	inFence := false
	for _, line := range strings.Split(doc, "\n") {
		fence := strings.HasPrefix(strings.TrimSpace(line), "```")
		switch {
		case inFence && fence:
			out = append(out, DocBlock{IsPre: true, Pre: strings.Join(pre, "\n")})
			pre, inFence = nil, false
		case inFence:
			pre = append(pre, line)
		case fence:
			inFence = true
		case strings.TrimSpace(line) != "":
			out = append(out, DocBlock{Spans: readSpans(strings.TrimSpace(line))})
		}
	}
	if inFence {
		out = append(out, DocBlock{IsPre: true, Pre: strings.Join(pre, "\n")})
	}
	return out
}

// readSpans reads one paragraph's inline Markdown. What is not well formed stays text as written.
func readSpans(s string) []DocSpan {
	var out []DocSpan
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			out = append(out, DocSpan{Text: text.String()})
			text.Reset()
		}
	}
	for i := 0; i < len(s); {
		switch s[i] {
		case '`':
			if end := strings.IndexByte(s[i+1:], '`'); end > 0 {
				flush()
				out = append(out, DocSpan{Text: s[i+1 : i+1+end], Code: true})
				i += end + 2
				continue
			}
		case '[':
			if span, n, ok := docLink(s[i:]); ok {
				flush()
				out = append(out, span)
				i += n
				continue
			}
		case '_':
			// _emphasis_: opens after no letter or digit, closes before none.
			if i == 0 || !isWordByte(s[i-1]) {
				if end := strings.IndexByte(s[i+1:], '_'); end > 0 && (i+2+end == len(s) || !isWordByte(s[i+2+end])) && s[i+1] != ' ' {
					flush()
					out = append(out, DocSpan{Text: s[i+1 : i+1+end], Em: true})
					i += end + 2
					continue
				}
			}
		}
		text.WriteByte(s[i])
		i++
	}
	flush()
	return out
}

func isWordByte(c byte) bool {
	return c >= 0x80 || c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// docLink reads [text](address) or [text][reference] at the start of s: the span and its length.
// Only an http or https address with a host becomes a link; any other (javascript:, a relative
// path, a reference to a proto name) leaves the text alone.
func docLink(s string) (DocSpan, int, bool) {
	rb := strings.IndexByte(s, ']')
	if rb <= 1 || rb+1 >= len(s) || strings.IndexByte(s[1:rb], '[') >= 0 {
		return DocSpan{}, 0, false
	}
	text := s[1:rb]
	var end int
	var target string
	switch s[rb+1] {
	case '(':
		// The address may hold balanced parentheses (…/Foo_(bar)).
		depth := 0
		end = -1
		for j := rb + 1; j < len(s); j++ {
			if s[j] == '(' {
				depth++
			} else if s[j] == ')' {
				if depth--; depth == 0 {
					end = j
					break
				}
			}
		}
		if end < 0 {
			return DocSpan{}, 0, false
		}
		target = strings.TrimSpace(s[rb+2 : end])
	case '[':
		e := strings.IndexByte(s[rb+2:], ']')
		if e < 0 {
			return DocSpan{}, 0, false
		}
		end = rb + 2 + e
		target = s[rb+2 : end]
	default:
		return DocSpan{}, 0, false
	}
	span := DocSpan{Text: text}
	if t, ok := strings.CutPrefix(text, "`"); ok && len(t) > 1 && strings.HasSuffix(t, "`") {
		span.Text, span.Code = t[:len(t)-1], true
	}
	if u, err := url.Parse(target); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && s[rb+1] == '(' {
		span.Href = u.String()
	}
	return span, end + 1, true
}
