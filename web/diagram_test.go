package web

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

// TestLayOut: a lane per container, left to right; an event in its container's lane, one about
// several across their lanes, one about no lane left out; the stop rows below the divider.
func TestLayOut(t *testing.T) {
	d := layOut(Sequence{
		Lanes: []SequenceLane{{Name: "istio-proxy", Role: "proxy"}, {Name: "app", Role: "app"}, {Name: "worker", Role: "app"}},
		Start: []SequenceEvent{{Containers: []string{"istio-proxy"}, Label: "starts", Blocks: true}, {Containers: []string{"app", "worker"}, Label: "start"}, {Containers: []string{"gone"}, Label: "lost"}},
		Stop:  []SequenceEvent{{Containers: []string{"app"}, Label: "SIGTERM"}},
	})
	if len(d.Lanes) != 3 || d.Lanes[1].X != d.Lanes[0].X+laneW || d.Width != d.Lanes[2].X+laneW+rightMargin {
		t.Fatalf("lanes %+v, width %d", d.Lanes, d.Width)
	}
	if len(d.Rows) != 3 {
		t.Fatalf("%d rows, want 3 (the event about no lane left out): %+v", len(d.Rows), d.Rows)
	}
	proxy, both, stop := d.Rows[0], d.Rows[1], d.Rows[2]
	if proxy.Role != "proxy" || !proxy.Blocks || proxy.Span || proxy.X != d.Lanes[0].X+boxInset {
		t.Errorf("the proxy's event: %+v", proxy)
	}
	if !both.Span || both.X != d.Lanes[1].X+boxInset || both.W != 2*laneW-2*boxInset || both.Y <= proxy.Y {
		t.Errorf("the event across app and worker: %+v", both)
	}
	if !(both.Y+both.H < d.StopY && d.StopY < stop.Y && stop.Y+stop.H < d.Height) {
		t.Errorf("the stop row %+v is not below the divider (StopY %d) and within the height %d", stop, d.StopY, d.Height)
	}
}
