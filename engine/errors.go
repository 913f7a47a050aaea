package engine

import (
	"errors"
	"fmt"
)

// InputError is a problem with what the user gave us: a manifest that does not parse, an
// annotation value Istio would reject, an install option the charts do not know. It carries
// enough to point at the spot (document, line, field) so a person can fix it; callers turn it
// into a 4xx or a non-zero exit, never a crash.
type InputError struct {
	// Doc is the 1-based index of the YAML document, or 0 when the error is not about one.
	Doc int `json:"doc,omitempty"`
	// Line is the 1-based line in the whole input, or 0 when unknown.
	Line int `json:"line,omitempty"`
	// Column is the 1-based column on Line, in characters, where one place on it is the error's
	// (an unclosed quote's quote, a value of the wrong type), or 0.
	Column int `json:"column,omitempty"`
	// Field names what was wrong: an annotation key, an install option, "manifest".
	Field string `json:"field,omitempty"`
	// Msg is the explanation; where Istio produced the error, it is Istio's own message.
	Msg string `json:"message"`
	// ID names sidecarlab's own sentence (the catalogs' input.<ID>), worded with Params; Msg is
	// then its English, exactly. Empty when Msg is someone else's text (a parser's, Istio's),
	// which is shown as it is in every language.
	ID string `json:"-"`
	// Params are the values the sentence names, as text; a name ending in Q is the value
	// already quoted ("like this").
	Params map[string]string `json:"-"`
	// Lasting says that the work which failed fails the same way every time it runs again on the
	// same input (a worker's answer over its bound, a template that does not parse): the engine
	// keeps the error as it keeps results, so a repeated request does not run that work again. A
	// lasting error is shared by the requests that get it, and never changed.
	Lasting bool `json:"-"`
}

// isLasting says err is an *InputError marked Lasting.
func isLasting(err error) bool {
	var ie *InputError
	return errors.As(err, &ie) && ie.Lasting
}

// errParams builds an InputError's Params from pairs: errParams("count", "3", "max", "2").
func errParams(kv ...string) map[string]string {
	m := make(map[string]string, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

func (e *InputError) Error() string {
	s := ""
	if e.Doc > 0 {
		s = fmt.Sprintf("document %d", e.Doc)
	}
	if e.Line > 0 {
		if s != "" {
			s += ", "
		}
		s += fmt.Sprintf("line %d", e.Line)
	}
	if e.Field != "" {
		if s != "" {
			s += ", "
		}
		s += e.Field
	}
	if s == "" {
		return e.Msg
	}
	return s + ": " + e.Msg
}
