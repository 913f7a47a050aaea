package web

import (
	"strings"
	"unicode"
)

// The lifecycle diagram (diagram in results.templ) is laid out here, beside its drawing: the
// handlers pass a Sequence — the pod's containers and its events, worded — and layOut places
// them in SVG user units (pixels at 1:1).

// Sequence is what the lifecycle diagram draws: the pod's containers in the order the kubelet
// starts them, and the events of its start and of its stop, in order.
type Sequence struct {
	Lanes       []SequenceLane
	Start, Stop []SequenceEvent
}

// SequenceLane is one container: its name, and its role as the diagram colours it ("proxy" for
// istio-proxy, else "init", "sidecar" or "app"; results.role.* words it).
type SequenceLane struct {
	Name, Role string
}

// SequenceEvent is one event: the containers it is about (by name; one about several is drawn
// across their lanes), its label in the reader's language, and whether the next event waits for
// it to finish.
type SequenceEvent struct {
	Containers []string
	Label      string
	Blocks     bool
}

// Diagram is an SVG sequence diagram, laid out: one lane per container, one row per event.
type Diagram struct {
	Width, Height int
	// Phase is "start" or "stop" for a diagram of one phase alone (layOutPhase), "" for both.
	Phase string
	Lanes []DiagramLane
	Rows  []DiagramRow
	// StopY is where the stop sequence starts.
	StopY int
}

// DiagramLane is a container's column.
type DiagramLane struct {
	// X is where the lane starts; Mid its middle, where its heading and lifeline are drawn.
	X, Mid     int
	Name, Role string
}

// DiagramRow is one event drawn in its lane.
type DiagramRow struct {
	X, Y, W, H int
	Label      string
	// Lines is the label broken to fit the box, each with its baseline.
	Lines  []DiagramLine
	Role   string
	Blocks bool
	// Span is true for an event about several containers (drawn across their lanes).
	Span bool
}

// DiagramLine is one line of an event's label: its baseline, and, for a word wider than the
// box on its own, the length the drawing squeezes it to (SVG textLength; 0 when it fits).
type DiagramLine struct {
	Text       string
	Y, Squeeze int
}

// The diagram's geometry. The drawing (diagram in results.templ) fits within it: the lane
// headings above firstRowY, each event as a box 24 high, and the "start ↓" and "stop ↓" labels
// in the gutter left of laneX0.
const (
	laneX0 = 64  // where the first lane starts, right of the gutter
	laneW  = 180 // one container's lane
	rowGap = 8   // from one event's box to the next's
	boxH   = 24  // an event's box with a label of one line

	firstRowY   = 46 // the first event row's top, below the lane headings (name, then role)
	boxInset    = 6  // the room between an event's box and the edges of its lanes, on each side
	dividerGap  = 6  // from the row after the last start event to the start/stop divider
	stopGap     = 32 // the same to the first stop event: room for the "stop ↓" label
	rightMargin = 8  // after the last lane
	bottomGap   = 12 // from the row after the last stop event to the bottom

	labelSize     = 11 // an event label's font size (.diagram .ev-label in static/app.css)
	labelPad      = 5  // the room between a label and its box's sides
	labelBaseline = 16 // a label's first baseline below its box's top
	labelLineH    = 13 // from one line of a label to the next
)

// layOut places the sequence: a lane per container, a row per event, start above stop. An event
// about no container of the lanes is left out.
func layOut(s Sequence) Diagram {
	d := Diagram{Width: laneX0 + len(s.Lanes)*laneW + rightMargin}
	lane := map[string]int{}
	for i, c := range s.Lanes {
		d.Lanes = append(d.Lanes, DiagramLane{X: laneX0 + i*laneW, Mid: laneX0 + i*laneW + laneW/2, Name: c.Name, Role: c.Role})
		lane[c.Name] = i
	}
	y := firstRowY
	place := func(e SequenceEvent) {
		first, last := len(s.Lanes), -1
		for _, n := range e.Containers {
			if i, ok := lane[n]; ok {
				first, last = min(first, i), max(last, i)
			}
		}
		if last < 0 {
			return
		}
		row := DiagramRow{X: laneX0 + first*laneW + boxInset, Y: y, W: (last-first+1)*laneW - 2*boxInset, Label: e.Label, Blocks: e.Blocks, Span: len(e.Containers) > 1}
		row.Role = d.Lanes[first].Role
		room := float64(row.W - 2*labelPad)
		for i, ln := range labelLines(row.Label, room) {
			dl := DiagramLine{Text: ln, Y: y + labelBaseline + i*labelLineH}
			if labelWidth(ln) > room {
				dl.Squeeze = int(room)
			}
			row.Lines = append(row.Lines, dl)
		}
		row.H = boxH + (len(row.Lines)-1)*labelLineH
		d.Rows = append(d.Rows, row)
		y += row.H + rowGap
	}
	for _, e := range s.Start {
		place(e)
	}
	d.StopY = y + dividerGap
	y += stopGap
	for _, e := range s.Stop {
		place(e)
	}
	d.Height = y + bottomGap
	return d
}

// layOutPhase is the sequence's start (or, stop, its stop) alone, with the lanes' names: a
// diagram of its own.
func layOutPhase(s Sequence, stop bool) Diagram {
	one := s
	one.Stop = nil
	if stop {
		one.Start = s.Stop
	}
	d := layOut(one)
	d.Height = d.StopY
	d.Phase = "start"
	if stop {
		d.Phase = "stop"
	}
	return d
}

// labelWidth estimates how wide s is drawn at labelSize in a sans-serif face: a wide script's
// character (CJK, Hangul, full-width forms) a whole em, narrow punctuation and spaces a third,
// capitals 0.7 and the rest 0.58 of an em — a little over what the faces the page asks for
// draw, so that a label estimated to fit does.
func labelWidth(s string) float64 {
	em := 0.0
	for _, r := range s {
		switch {
		case wideRune(r) || (r >= 0xFF01 && r <= 0xFF60) || (r >= 0x3000 && r <= 0x303F):
			em += 1
		case strings.ContainsRune(" .,:;·|!'ilIjft()[]", r):
			em += 0.34
		case unicode.IsUpper(r) || strings.ContainsRune("mwMW", r):
			em += 0.72
		default:
			em += 0.58
		}
	}
	return em * labelSize
}

// labelLines breaks label into lines no wider than room (labelWidth): at spaces, and between
// the characters of a wide script, which a line may break anywhere. A word wider than room on
// its own keeps its line (the drawing squeezes it).
func labelLines(label string, room float64) []string {
	if labelWidth(label) <= room {
		return []string{label}
	}
	var lines []string
	var cur strings.Builder
	add := func(word, sep string) {
		if cur.Len() > 0 && labelWidth(cur.String()+sep+word) > room {
			lines = append(lines, cur.String())
			cur.Reset()
			sep = ""
		}
		if cur.Len() > 0 {
			cur.WriteString(sep)
		}
		cur.WriteString(word)
	}
	for _, word := range strings.Fields(label) {
		if labelWidth(word) <= room || !wideScript(word) {
			add(word, " ")
			continue
		}
		for i, r := range word { // a wide script's run: a break may come between any two characters
			sep := ""
			if i == 0 {
				sep = " "
			}
			add(string(r), sep)
		}
	}
	if cur.Len() > 0 {
		lines = append(lines, cur.String())
	}
	return lines
}

// wideScript says s holds a character of a script that breaks between characters (CJK, Hangul).
func wideScript(s string) bool { return strings.IndexFunc(s, wideRune) >= 0 }

// wideRune is a character of a wide script that breaks between characters (CJK, Hangul).
func wideRune(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}
