package wording

import (
	"github.com/sidecarlab/sidecarlab/engine/lifecycle"
)

// events are the lifecycle events sidecarlab words (wording.event.<id>.what, a sentence, and
// .short, a few words for a diagram): the variant of what an event's parameters choose, "" for
// what itself.
var events = map[string]func(p map[string]string) string{
	"init-runs":      nil,
	"sidecar-starts": nil,
	"sidecar-starts-probe": func(p map[string]string) string {
		if p["path"] != "" {
			return "what_path"
		}
		return ""
	},
	"starts":            nil,
	"starts-post-start": nil,
	"sigterm":           nil,
	"pre-stop":          nil,
	"apps-exited":       nil,
	"sidecar-sigterm":   nil,
	"sidecar-pre-stop":  nil,
}

// What is a lifecycle event in a sentence.
func (w Words) What(e lifecycle.Event) string {
	choose, ok := events[e.Event]
	if !ok {
		return e.Event
	}
	v := "what"
	if choose != nil {
		if c := choose(e.Params); c != "" {
			v = c
		}
	}
	return w.tmap("wording.event."+e.Event+"."+v, e.Params)
}

// Short is a lifecycle event in a few words, for a diagram.
func (w Words) Short(e lifecycle.Event) string {
	if _, ok := events[e.Event]; !ok {
		return e.Event
	}
	return w.tmap("wording.event."+e.Event+".short", e.Params)
}

// Event is a lifecycle event with its words, as the JSON API gives it.
type Event struct {
	lifecycle.Event
	What  string `json:"what"`
	Short string `json:"short"`
}

// Lifecycle is a lifecycle with worded events and verdicts, as the JSON API gives it.
type Lifecycle struct {
	lifecycle.Lifecycle
	Start    []Event   `json:"start"`
	Stop     []Event   `json:"stop"`
	Verdicts []Verdict `json:"verdicts"`
}

// Lifecycles words lifecycles for JSON.
func (w Words) Lifecycles(ls []lifecycle.Lifecycle) []Lifecycle {
	out := make([]Lifecycle, 0, len(ls))
	for _, l := range ls {
		wl := Lifecycle{Lifecycle: l}
		for _, e := range l.Start {
			wl.Start = append(wl.Start, Event{Event: e, What: w.What(e), Short: w.Short(e)})
		}
		for _, e := range l.Stop {
			wl.Stop = append(wl.Stop, Event{Event: e, What: w.What(e), Short: w.Short(e)})
		}
		for _, v := range l.Verdicts {
			wl.Verdicts = append(wl.Verdicts, Verdict{Verdict: v, Question: w.Question(v), Why: w.Why(v)})
		}
		out = append(out, wl)
	}
	return out
}
