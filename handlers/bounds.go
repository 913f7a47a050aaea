package handlers

import (
	"strings"
	"unicode/utf8"

	"github.com/sidecarlab/sidecarlab/i18n"
)

// Bounds on what a page shows of one value: the values a person typed are shown in full once
// (a step's in the timeline) and by a preview elsewhere; a line of output or diff is cut past
// maxShownLine bytes (no line of a normal output is near it). The raw outputs have everything.
// So a page is at most about twice its state and its fixed parts, whatever the state holds.
const (
	maxTitleValue = 120
	maxShownLine  = 4096
)

// cutText is s whole when it has at most max bytes, else its first max bytes (at a character's
// start) and how many it has in all; cut says which.
func cutText(l *i18n.Localizer, s string, max int) (text string, cut bool) {
	if len(s) <= max {
		return s, false
	}
	n := max
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + l.N("results.cut", len(s)), true
}

// cutLines is text with every line over max bytes cut (cutText), and how many were.
func cutLines(l *i18n.Localizer, text string, max int) (string, int) {
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
		c, _ := cutText(l, body, max)
		b.WriteString(c)
		if nl {
			b.WriteByte('\n')
		}
		n++
	}
	return b.String(), n
}

// yamlShare is an injected output cut to what lim documents may show of it, yamlPerDoc each (at
// a line's end), and whether it was cut: a document may hold many objects (a List of a thousand
// Pods is one document), so the output is bounded by bytes, not only by documents.
func yamlShare(out string, lim int) (string, bool) {
	budget := yamlPerDoc * lim
	if len(out) <= budget {
		return out, false
	}
	return out[:strings.LastIndexByte(out[:budget], '\n')+1], true
}
