package handlers

import (
	"strings"
	"testing"
)

// TestLabelLines: a label that fits its box stays one line; a longer one breaks at spaces into
// lines that each fit; a run of a wide script (Japanese) breaks between its characters; a word
// wider than the box alone keeps its own line, which the drawing squeezes. No text is lost.
func TestLabelLines(t *testing.T) {
	room := float64(laneW - 2*boxInset - 2*labelPad)
	for _, c := range []struct {
		label string
		lines int // the lines it must take
	}{
		{"starts", 1},
		{"runs to completion", 1},
		{"starts · postStart: pilot-agent wait", 2},
		{"起動 · postStart: pilot-agent wait（プロキシの準備ができるまでアプリを待たせます）", 3},
		{"holdApplicationUntilProxyStartsAndThenSomeMore", 1},
	} {
		lines := labelLines(c.label, room)
		if len(lines) != c.lines {
			t.Errorf("%q: %d lines %q, want %d", c.label, len(lines), lines, c.lines)
		}
		joined := strings.Join(lines, "")
		if strings.ReplaceAll(joined, " ", "") != strings.ReplaceAll(c.label, " ", "") {
			t.Errorf("%q broke into %q: text lost or added", c.label, lines)
		}
		for _, ln := range lines {
			if labelWidth(ln) > room && (len(lines) > 1 || strings.Contains(ln, " ")) {
				t.Errorf("%q: the line %q (%.0f) is wider than its box's room (%.0f)", c.label, ln, labelWidth(ln), room)
			}
		}
	}
	// The estimate is the one the breaking relies on: a long line is wider than a short one, and
	// a Japanese character wider than a Latin letter.
	if !(labelWidth("starts") < room && labelWidth("starts · postStart: pilot-agent wait") > room && labelWidth("起") > labelWidth("a")) {
		t.Errorf("labelWidth: starts=%.0f long=%.0f 起=%.0f a=%.0f room=%.0f", labelWidth("starts"), labelWidth("starts · postStart: pilot-agent wait"), labelWidth("起"), labelWidth("a"), room)
	}
}
