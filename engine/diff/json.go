package diff

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// Two injected outputs of one document differ in a few fields: a toggle changes a container's
// resources or an annotation, and the rest (the volumes, the other containers, the workload's own
// spec) is the same JSON on both sides. PrunedTrees decodes only what differs, so that the field
// diff neither decodes nor walks the rest, which would be most of a toggle's diff time.

// maxPruneDepth is how deep PrunedTrees looks for equal parts; below that it decodes whole, so
// a deeply nested value costs no more than decoding it.
const maxPruneDepth = 64

// PrunedTrees decodes two JSON values for Values, leaving out every object member that is the
// same JSON on both sides, and standing in for every element of a list of named things that is
// the same on both sides (by name) with just its name. Equal values make no change in
// Values, and the members it reads to match elements ("name") are always kept, so for valid
// JSON (a document's, written by json.Marshal) the diff of the pruned trees is the diff of the
// whole ones (TestPrunedTreesDiffTheSame, FuzzPrunedTrees).
func PrunedTrees(a, b []byte) (any, any, error) {
	return pruneValue(a, b, 0)
}

func pruneValue(a, b []byte, depth int) (any, any, error) {
	if depth < maxPruneDepth {
		if am, ok := jsonMembers(a); ok {
			if bm, ok := jsonMembers(b); ok {
				return pruneObject(am, bm, depth)
			}
		} else if ae, ok := jsonElements(a); ok {
			if be, ok := jsonElements(b); ok {
				if an, am, ok := jsonNames(ae); ok {
					if bn, bm, ok := jsonNames(be); ok {
						return pruneNamed(ae, be, an, bn, am, bm, depth)
					}
				}
			}
		}
	}
	av, err := decodeJSON(a)
	if err != nil {
		return nil, nil, err
	}
	bv, err := decodeJSON(b)
	return av, bv, err
}

// pruneObject keeps the members that differ (each pruned in turn), those on one side only
// (whole), and "name", which Values reads to match the elements of a list.
func pruneObject(am, bm map[string][]byte, depth int) (any, any, error) {
	ao, bo := map[string]any{}, map[string]any{}
	var err error
	for k, x := range am {
		y, inB := bm[k]
		switch {
		case !inB:
			ao[k], err = decodeJSON(x)
		case k != "name" && bytes.Equal(x, y):
			continue
		default:
			ao[k], bo[k], err = pruneValue(x, y, depth+1)
		}
		if err != nil {
			return nil, nil, err
		}
	}
	for k, y := range bm {
		if _, inA := am[k]; !inA {
			if bo[k], err = decodeJSON(y); err != nil {
				return nil, nil, err
			}
		}
	}
	return ao, bo, nil
}

// pruneNamed prunes two lists of uniquely named objects (their elements, names and members): an
// element on both sides that is the same JSON becomes its name alone on both sides (so it still
// matches, and its place still counts for moves), one that differs is pruned, and one on one
// side only is decoded whole.
func pruneNamed(ae, be [][]byte, an, bn []string, am, bm []map[string][]byte, depth int) (any, any, error) {
	bIdx := make(map[string]int, len(bn))
	for j, n := range bn {
		bIdx[n] = j
	}
	al, bl := make([]any, len(ae)), make([]any, len(be))
	var err error
	for i, x := range ae {
		j, inB := bIdx[an[i]]
		switch {
		case !inB:
			al[i], err = decodeJSON(x)
		case bytes.Equal(x, be[j]):
			al[i], bl[j] = map[string]any{"name": an[i]}, map[string]any{"name": bn[j]}
		case depth+1 < maxPruneDepth:
			al[i], bl[j], err = pruneObject(am[i], bm[j], depth+1)
		default:
			al[i], bl[j], err = pruneValue(x, be[j], depth+1)
		}
		if err != nil {
			return nil, nil, err
		}
	}
	for j, y := range be {
		if bl[j] == nil {
			if bl[j], err = decodeJSON(y); err != nil {
				return nil, nil, err
			}
		}
	}
	return al, bl, nil
}

func decodeJSON(b []byte) (any, error) {
	var v any
	err := json.Unmarshal(b, &v)
	return v, err
}

// jsonNames are the "name" of every element, and the elements' members, if each is an object with
// a non-empty string name and no two share one: the lists Values matches by name (names).
func jsonNames(elems [][]byte) ([]string, []map[string][]byte, bool) {
	names := make([]string, len(elems))
	members := make([]map[string][]byte, len(elems))
	seen := make(map[string]bool, len(elems))
	for i, e := range elems {
		m, ok := jsonMembers(e)
		if !ok {
			return nil, nil, false
		}
		raw, ok := m["name"]
		if !ok || len(raw) == 0 || raw[0] != '"' {
			return nil, nil, false
		}
		n, ok := jsonKey(raw)
		if !ok || n == "" || seen[n] {
			return nil, nil, false
		}
		seen[n] = true
		names[i], members[i] = n, m
	}
	return names, members, true
}

// jsonMembers splits a JSON object into its members' values by name, without decoding them; a
// later member of the same name wins, as when decoding. It answers false for anything but an
// object, and for anything it cannot split (then the caller decodes, which reports it).
func jsonMembers(b []byte) (map[string][]byte, bool) {
	out := map[string][]byte{}
	ok := jsonSplit(b, '{', func(name string, v []byte) { out[name] = v })
	return out, ok
}

// jsonElements splits a JSON array into its elements, without decoding them.
func jsonElements(b []byte) ([][]byte, bool) {
	out := [][]byte{}
	ok := jsonSplit(b, '[', func(_ string, v []byte) { out = append(out, v) })
	return out, ok
}

// jsonSplit calls each with every part of the JSON object (open '{': each member's name and
// value) or array (open '[': each element, with no name) in b, and says whether b was one it
// could split.
func jsonSplit(b []byte, open byte, each func(name string, v []byte)) bool {
	end := byte('}')
	if open == '[' {
		end = ']'
	}
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != open {
		return false
	}
	if i = skipSpace(b, i+1); i < len(b) && b[i] == end {
		return skipSpace(b, i+1) == len(b)
	}
	for i < len(b) {
		var name string
		if open == '{' {
			k := jsonValueEnd(b, i)
			if k < 0 || b[i] != '"' {
				return false
			}
			var ok bool
			if name, ok = jsonKey(b[i:k]); !ok {
				return false
			}
			if i = skipSpace(b, k); i >= len(b) || b[i] != ':' {
				return false
			}
			i = skipSpace(b, i+1)
		}
		v := jsonValueEnd(b, i)
		if v < 0 {
			return false
		}
		each(name, b[i:v])
		if i = skipSpace(b, v); i >= len(b) {
			return false
		}
		if b[i] == end {
			return skipSpace(b, i+1) == len(b)
		}
		if b[i] != ',' {
			return false
		}
		i = skipSpace(b, i+1)
	}
	return false
}

// jsonKey is a quoted string's text: as written when it has no escapes and is valid UTF-8, else
// decoded.
func jsonKey(q []byte) (string, bool) {
	if bytes.IndexByte(q, '\\') < 0 && utf8.Valid(q) {
		return string(q[1 : len(q)-1]), true
	}
	var s string
	return s, json.Unmarshal(q, &s) == nil
}

// jsonValueEnd is the end of the JSON value that starts at b[i], or -1. It finds where the
// value ends (strings, nesting), not whether it is valid: what it splits is decoded later, and
// decoding checks it.
func jsonValueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return JSONStringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				if j = JSONStringEnd(b, j); j < 0 {
					return -1
				}
				j--
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	case '}', ']', ',', ':':
		return -1
	}
	j := i
	for j < len(b) && !jsonDelim(b[j]) {
		j++
	}
	return j
}

// JSONStringEnd is the end of the string whose opening quote is b[i], or -1: the first quote
// after it that an odd number of backslashes does not escape.
func JSONStringEnd(b []byte, i int) int {
	for j := i + 1; ; {
		q := bytes.IndexByte(b[j:], '"')
		if q < 0 {
			return -1
		}
		j += q
		n := 0
		for k := j - 1; k > i && b[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return j + 1
		}
		j++
	}
}

// jsonDelim ends a number or a literal.
func jsonDelim(c byte) bool {
	switch c {
	case ',', ':', '{', '}', '[', ']', '"', ' ', '\t', '\r', '\n':
		return true
	}
	return false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}
