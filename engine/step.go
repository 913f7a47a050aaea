package engine

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Step is one annotation change the user makes: set Key to Value, or remove Key.
type Step struct {
	Key    string `json:"key"`
	Value  string `json:"value,omitempty"`
	Remove bool   `json:"remove,omitempty"`
}

// String renders a step as a person writes it: key=value, or -key for a removal.
func (s Step) String() string {
	if s.Remove {
		return "-" + s.Key
	}
	return s.Key + "=" + s.Value
}

// maxCauseValue is the most of a step's value a change's Cause repeats: the whole value is the
// row's Step, once, and a change names it instead of copying it (a 250,000-byte value that sets
// five fields would otherwise be carried by each of them).
const maxCauseValue = 120

// cause is what a change made by the step says caused it: String, with a value over
// maxCauseValue bytes cut at a character's start and ended by "…".
func (s Step) cause() string {
	if s.Remove || len(s.Value) <= maxCauseValue {
		return s.String()
	}
	n := maxCauseValue
	for n > 0 && !utf8.RuneStart(s.Value[n]) {
		n--
	}
	return s.Key + "=" + s.Value[:n] + "…"
}

// ParseStep reads "key=value" (set) or "-key" (remove).
func ParseStep(s string) (Step, error) {
	s = strings.TrimSpace(s)
	if k, ok := strings.CutPrefix(s, "-"); ok && !strings.Contains(k, "=") {
		return Step{Key: strings.TrimSpace(k), Remove: true}, nil
	}
	k, v, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(k) == "" {
		return Step{}, &InputError{Field: "annotation", ID: "step-format", Params: errParams("stepQ", quote(s)),
			Msg: fmt.Sprintf("%q: want KEY=VALUE (or -KEY to remove)", s)}
	}
	return Step{Key: strings.TrimSpace(k), Value: v}, nil
}

type annotationChange struct {
	key, value string
	remove     bool
}

// annotationsAt is the list of changes in force at step k: steps[:k], in order.
func annotationsAt(steps []Step, k int) []annotationChange {
	out := make([]annotationChange, 0, k)
	for _, s := range steps[:k] {
		out = append(out, annotationChange{key: s.Key, value: s.Value, remove: s.Remove})
	}
	return out
}
