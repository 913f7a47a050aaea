package input

import (
	"strconv"
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

// MaxCauseValue is the most of a step's value a change's Cause repeats: the whole value is the
// row's Step, once, and a change names it instead of copying it (a 250,000-byte value that sets
// five fields would otherwise be carried by each of them).
const MaxCauseValue = 120

// Cause is what a change made by the step says caused it: String, with a value over
// MaxCauseValue bytes cut at a character's start and ended by "…".
func (s Step) Cause() string {
	if s.Remove || len(s.Value) <= MaxCauseValue {
		return s.String()
	}
	n := MaxCauseValue
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
		return Step{}, &Error{Field: "annotation", ID: "step-format", Params: Params("stepQ", strconv.Quote(s))}
	}
	return Step{Key: strings.TrimSpace(k), Value: v}, nil
}
