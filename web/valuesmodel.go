package web

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"sigs.k8s.io/yaml"

	"github.com/sidecarlab/sidecarlab/engine/diff"
	"github.com/sidecarlab/sidecarlab/i18n"
)

// Bounds on a value shown in the field diff; the whole of it is in the injected YAML. maxValue is
// for a value on one line, maxBlockLines and maxBlock for one shown as YAML lines; foldLines is
// where a value starts folded.
const (
	maxValue      = 400
	maxBlockLines = 80
	maxBlock      = 6000
	foldLines     = 6
)

// ShowValue is a change's value as a person reads it: YAML, not escaped JSON. Maps and lists are
// YAML lines; a string holding a JSON object or list (PROXY_CONFIG, the sidecar.istio.io/status
// annotation) is decoded and shown the same way, and says so; a string that would read as another
// type ("true", "8080") is quoted, as YAML quotes it. A value the engine left out of the change
// (omitted > 0 bytes) is its size. Its notes are in English; ShowValueIn words them in a
// reader's language.
func ShowValue(v any, omitted int) Value {
	return ShowValueIn(i18n.For(i18n.Default), v, omitted)
}

// ShowValueIn is ShowValue with its notes in l's language.
func ShowValueIn(l *i18n.Localizer, v any, omitted int) Value {
	if omitted > 0 {
		return Value{Text: l.T("lab.value.omitted", "Size", ByteSize(int64(omitted)))}
	}
	var out Value
	var text string
	var decoded map[string]any // a map value with its JSON strings decoded, for abridged
	switch x := v.(type) {
	case string:
		if d, ok := decodeJSONString(x); ok {
			text, out.Note = yamlText(d), l.T("lab.value.json-string")
			break
		}
		text = yamlText(x)
	case map[string]any, []any:
		// JSON inside the value's strings (the status annotation in a whole annotations map, the
		// PROXY_CONFIG of a whole container) is decoded too, and the note says so.
		d, inStrings := decodeJSONStrings(x)
		text = yamlText(d)
		if inStrings {
			out.Note = l.T("lab.value.json-strings")
		}
		decoded, _ = d.(map[string]any)
	default:
		text = diff.FormatValue(x)
	}
	text = strings.TrimSuffix(text, "\n")
	lines := strings.Count(text, "\n") + 1
	if lines == 1 {
		if r := []rune(text); len(r) > maxValue {
			text = string(r[:maxValue]) + l.N("lab.value.more-characters", len(r)-maxValue)
		}
		out.Text = text
		return out
	}
	out.Block, out.Lines = true, lines
	out.Fold = lines > foldLines
	if m, ok := v.(map[string]any); ok {
		out.Name, _ = m["name"].(string)
	}
	if decoded != nil && (lines > maxBlockLines || len(text) > maxBlock) {
		// A whole container or volume: its largest fields give way, so that the short ones
		// (resources, lifecycle, image) stay in view.
		text = abridged(l, decoded)
	}
	all := strings.Split(text, "\n")
	kept, n := 0, 0
	for kept < len(all) && kept < maxBlockLines && n+len(all[kept]) <= maxBlock {
		n += len(all[kept]) + 1
		kept++
	}
	if kept < len(all) {
		text = strings.Join(all[:kept], "\n") + "\n" + l.N("lab.value.more-lines", len(all)-kept)
	}
	out.Text = text
	return out
}

// abridged is m as YAML lines within maxBlockLines and maxBlock: while it is longer, the field
// with the most lines is cut to its first line and one that says how many more it has. The
// fields stay in YAML's order (by key), each either whole or cut.
func abridged(l *i18n.Localizer, m map[string]any) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([][]string, len(keys))
	for i, k := range keys {
		parts[i] = strings.Split(strings.TrimSuffix(yamlText(map[string]any{k: m[k]}), "\n"), "\n")
	}
	size := func() (lines, bytes int) {
		for _, p := range parts {
			lines += len(p)
			for _, ln := range p {
				bytes += len(ln) + 1
			}
		}
		return lines, bytes
	}
	for lines, bytes := size(); lines > maxBlockLines || bytes > maxBlock; lines, bytes = size() {
		big := 0
		for i, p := range parts {
			if len(p) > len(parts[big]) {
				big = i
			}
		}
		if len(parts[big]) <= 2 {
			break // what is left is a line or two per field; the caller cuts the rest
		}
		parts[big] = []string{parts[big][0], "  " + l.N("lab.value.more-lines", len(parts[big])-1)}
	}
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return strings.Join(out, "\n")
}

// decodeJSONString decodes a string that holds a JSON object or list.
func decodeJSONString(s string) (any, bool) {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "{") && !strings.HasPrefix(t, "[") {
		return nil, false
	}
	var v any
	if json.Unmarshal([]byte(t), &v) != nil {
		return nil, false
	}
	return v, true
}

// decodeJSONStrings is v with every string that holds a JSON object or list decoded (a copy; v
// is the memoised change's and is not written), and whether there was one.
func decodeJSONStrings(v any) (any, bool) {
	switch x := v.(type) {
	case string:
		return decodeJSONString(x)
	case map[string]any:
		var m map[string]any
		for k, e := range x {
			if d, ok := decodeJSONStrings(e); ok {
				if m == nil {
					m = make(map[string]any, len(x))
					for k2, e2 := range x {
						m[k2] = e2
					}
				}
				m[k] = d
			}
		}
		if m == nil {
			return x, false
		}
		return m, true
	case []any:
		var l []any
		for i, e := range x {
			if d, ok := decodeJSONStrings(e); ok {
				if l == nil {
					l = append([]any(nil), x...)
				}
				l[i] = d
			}
		}
		if l == nil {
			return x, false
		}
		return l, true
	}
	return v, false
}

// yamlText is v as YAML, or as FormatValue writes it if it has none.
func yamlText(v any) string {
	b, err := yaml.Marshal(v)
	if err != nil {
		return diff.FormatValue(v)
	}
	return string(b)
}

// FlagValue is one istio-iptables flag as written on its command line: "-o 3306,6379", `-x ""`,
// or the flag alone for one written bare. A value is quoted only where a command line would need
// it (empty, or with spaces or quotes): "-u 1337" is a flag and its string, whatever it looks like.
func FlagValue(flag string, v any) Value {
	if b, ok := v.(bool); ok && b {
		return Value{Text: flag}
	}
	s, _ := v.(string)
	if s == "" || strings.ContainsAny(s, " \t\n\"'") {
		s = strconv.Quote(s)
	}
	return Value{Text: flag + " " + s}
}

// Bounds on what a page shows of one value: the values a person typed are shown in full once
// (a step's in the timeline) and by a preview elsewhere; a line of output or diff is cut past
// MaxShownLine bytes (no line of a normal output is near it). The raw outputs have everything.
// So a page is at most about twice its state and its fixed parts, whatever the state holds.
const (
	MaxTitleValue = 120
	MaxShownLine  = 4096
)

// CutText is s whole when it has at most max bytes, else its first max bytes (at a character's
// start) and how many it has in all; cut says which.
func CutText(l *i18n.Localizer, s string, max int) (text string, cut bool) {
	if len(s) <= max {
		return s, false
	}
	n := max
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + l.N("results.cut", len(s)), true
}

// CutLines is text with every line over max bytes cut (CutText), and how many were.
func CutLines(l *i18n.Localizer, text string, max int) (string, int) {
	long := func(line string) bool { return len(strings.TrimSuffix(line, "\n")) > max }
	if len(text) <= max {
		return text, 0
	}
	found := false
	for line := range strings.Lines(text) {
		if found = long(line); found {
			break
		}
	}
	if !found {
		return text, 0
	}
	var b strings.Builder
	n := 0
	for line := range strings.Lines(text) {
		if !long(line) {
			b.WriteString(line)
			continue
		}
		body, nl := strings.CutSuffix(line, "\n")
		c, _ := CutText(l, body, max)
		b.WriteString(c)
		if nl {
			b.WriteByte('\n')
		}
		n++
	}
	return b.String(), n
}

// ByteSize is n bytes as a person reads it: in MiB or KiB when it is a whole number of them.
func ByteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
