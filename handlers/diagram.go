package handlers

import (
	"strings"
	"unicode"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/explain"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/web"
)

// The lifecycle diagram's geometry, in SVG user units (pixels at 1:1). The template (diagram in
// web/results.templ) draws within it: the lane headings above firstRowY, each event as a box 24
// high, and the "start ↓" and "stop ↓" labels in the gutter left of laneX0.
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

// lifecycleViews lays out each workload's sequence as a diagram, with its verdicts and capacity,
// in loc's language.
func lifecycleViews(loc *i18n.Localizer, ls []engine.Lifecycle, rows []engine.BatchRow, replicas int) []web.LifecycleView {
	w := explain.In(loc)
	var out []web.LifecycleView
	for _, l := range ls {
		lv := web.LifecycleView{Title: l.Kind + "/" + l.Name, Ready: l.Ready, Diagram: layout(w, l)}
		for _, v := range l.Verdicts {
			lv.Verdicts = append(lv.Verdicts, web.VerdictView{ID: v.ID, Question: w.Question(v), Answer: v.Answer, AnswerText: loc.T(answerWords(v.Answer)), Why: w.Why(v), Goodness: string(v.Goodness)})
		}
		for _, e := range l.Start {
			lv.Start = append(lv.Start, e.Container+": "+w.What(e))
		}
		for _, e := range l.Stop {
			lv.Stop = append(lv.Stop, e.Container+": "+w.What(e))
		}
		for _, r := range rows {
			if r.Doc != l.Doc || r.Proxy == "" {
				continue
			}
			c := r.Capacity
			n, fromSpec := c.Replicas, true
			if replicas > 0 {
				n, fromSpec = replicas, false
			}
			if n == 0 {
				n = 1 // a DaemonSet: one per node; the person types the node count
				fromSpec = false
			}
			tot := c.For(n)
			lv.Capacity = web.CapacityView{Known: true, PerPodRequests: r.Requests, PerPodLimits: r.Limits, Replicas: n, ReplicasFromSpec: fromSpec,
				TotalRequests: pair(tot.RequestsCPU, tot.RequestsMem), TotalLimits: pair(tot.LimitsCPU, tot.LimitsMem)}
		}
		out = append(out, lv)
	}
	return out
}

// answerWords is the message id of a verdict's answer ("yes", "no", "n/a").
func answerWords(a string) string {
	return "results.answer." + strings.ReplaceAll(a, "/", "")
}

func pair(cpu, mem string) string {
	var p []string
	if cpu != "" {
		p = append(p, "cpu="+cpu)
	}
	if mem != "" {
		p = append(p, "memory="+mem)
	}
	return strings.Join(p, " ")
}

// layout places the sequence: a lane per container, a row per event, start above stop.
func layout(w explain.Words, l engine.Lifecycle) web.Diagram {
	d := web.Diagram{Width: laneX0 + len(l.Containers)*laneW + rightMargin}
	lane := map[string]int{}
	for i, c := range l.Containers {
		role := c.Role
		if c.Proxy {
			role = "proxy"
		}
		d.Lanes = append(d.Lanes, web.DiagramLane{X: laneX0 + i*laneW, Mid: laneX0 + i*laneW + laneW/2, Name: c.Name, Role: role})
		lane[c.Name] = i
	}
	y := firstRowY
	place := func(e engine.LifecycleEvent) {
		names := strings.Split(e.Container, ", ")
		first, last := len(l.Containers), -1
		for _, n := range names {
			if i, ok := lane[n]; ok {
				first, last = min(first, i), max(last, i)
			}
		}
		if last < 0 {
			return
		}
		row := web.DiagramRow{X: laneX0 + first*laneW + boxInset, Y: y, W: (last-first+1)*laneW - 2*boxInset, Label: w.Short(e), Blocks: e.Blocks, Span: len(names) > 1}
		row.Role = d.Lanes[first].Role
		room := float64(row.W - 2*labelPad)
		for i, ln := range labelLines(row.Label, room) {
			dl := web.DiagramLine{Text: ln, Y: y + labelBaseline + i*labelLineH}
			if labelWidth(ln) > room {
				dl.Squeeze = int(room)
			}
			row.Lines = append(row.Lines, dl)
		}
		row.H = boxH + (len(row.Lines)-1)*labelLineH
		d.Rows = append(d.Rows, row)
		y += row.H + rowGap
	}
	for _, e := range l.Start {
		place(e)
	}
	d.StopY = y + dividerGap
	y += stopGap
	for _, e := range l.Stop {
		place(e)
	}
	d.Height = y + bottomGap
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
