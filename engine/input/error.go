// Package input holds the leaf types every side of sidecarlab shares about what a person gives
// it: a Step (one annotation change) and an Error (a problem with the input, pointing at its
// document, line and field); and a Fault, the failure that is no problem of the input but a bug.
// Of sidecarlab's it imports only the message catalogs (i18n), which word an Error's and a
// Fault's English, so the engine, its feature packages, the CLI and the handlers all can.
package input

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/sidecarlab/sidecarlab/i18n"
)

// Error is a problem with what the user gave us: a manifest that does not parse, an
// annotation value Istio would reject, an install option the charts do not know. It carries
// enough to point at the spot (document, line, field) so a person can fix it; callers turn it
// into a 4xx or a non-zero exit, never a crash.
type Error struct {
	// Doc is the 1-based index of the YAML document, or 0 when the error is not about one.
	Doc int `json:"doc,omitempty"`
	// Line is the 1-based line in the whole input, or 0 when unknown.
	Line int `json:"line,omitempty"`
	// Column is the 1-based column on Line, in characters, where one place on it is the error's
	// (an unclosed quote's quote, a value of the wrong type), or 0.
	Column int `json:"column,omitempty"`
	// Field names what was wrong: an annotation key, an install option, "manifest".
	Field string `json:"field,omitempty"`
	// Msg is someone else's explanation, as they wrote it (a parser's, a library's, Istio's),
	// shown as it is in every language; empty when ID names the sentence. Its JSON ("message")
	// is Text: the English of either.
	Msg string `json:"message"`
	// ID names sidecarlab's own sentence (the catalogs' input.<ID>), worded with Params; empty
	// when Msg is someone else's text.
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

// IsLasting says err is an *Error marked Lasting.
func IsLasting(err error) bool {
	var ie *Error
	return errors.As(err, &ie) && ie.Lasting
}

// Params builds an Error's Params from pairs: Params("count", "3", "max", "2").
func Params(kv ...string) map[string]string {
	m := make(map[string]string, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// Text is what the error says, in English: the English catalog's sentence input.<ID> worded with
// Params, or Msg where the text is someone else's; a step's error (Params "step") names its step.
// The edges word it in the reader's language from the same id and parameters (package wording).
func (e *Error) Text() string {
	en := i18n.For(i18n.Default)
	text := e.Msg
	if e.ID != "" {
		text = en.TMap("input."+e.ID, e.Params)
	}
	if step, ok := e.Params["step"]; ok {
		text = en.T("input.in-step", "step", step) + text
	}
	return text
}

// Error is Text in English after where the error is (document, line, field; each only when
// known), as the catalogs place it.
func (e *Error) Error() string {
	en := i18n.For(i18n.Default)
	var where []string
	if e.Doc > 0 {
		where = append(where, en.T("wording.where.doc", "doc", e.Doc))
	}
	if e.Line > 0 {
		where = append(where, en.T("wording.where.line", "line", e.Line))
	}
	if e.Field != "" {
		where = append(where, e.Field)
	}
	if len(where) == 0 {
		return e.Text()
	}
	return en.T("wording.where.at", "where", strings.Join(where, en.T("wording.where.sep")), "what", e.Text())
}

// MarshalJSON writes the error with its message in English (Text).
func (e *Error) MarshalJSON() ([]byte, error) {
	type plain Error
	p := plain(*e)
	p.Msg = e.Text()
	return json.Marshal(p)
}
