package explain

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/sidecarlab/sidecarlab/engine"
)

// InputError is an input error in words: Summary says what is wrong once, where, and what to
// check; Details is the parser's (or Istio's) own text, for a "details" toggle. The engine's
// error keeps the exact text; this is only how the page says it.
type InputError struct {
	Summary, Details string
	// Reason is the summary without where (for a marker that already sits on the line).
	Reason string
}

var (
	// yamlPrefix is what sigs.k8s.io/yaml and go-yaml put before the reason: the conversion's
	// name and a line relative to the document (the error's Line is the whole input's).
	yamlPrefix = regexp.MustCompile(`^(error converting YAML to JSON: )?yaml: (line \d+: )?`)
	// jsonType is a typed decode's complaint: the field and the type it wanted.
	jsonType = regexp.MustCompile(`cannot unmarshal (\w+) into Go struct field \w+\.([\w.]+) of type (\S+)`)
)

// yamlReasons are go-yaml's reasons and what they mean to a person writing YAML.
var yamlReasons = []struct{ reason, words string }{
	{"mapping values are not allowed in this context", "a mapping value is not allowed here — check the indentation"},
	{"did not find expected key", "a key was expected here — check the indentation and the '-' of list items"},
	{"found character that cannot start any token", "this character cannot start a value — YAML does not allow tabs for indentation"},
	{"could not find expected ':'", "a key is missing its ':'"},
	{"did not find expected node content", "a value is missing or unfinished"},
	{"found unexpected end of stream", "the text ends inside a value — an opening quote or bracket is never closed"},
	{"did not find expected ',' or ']'", "a [ list is not closed with ]"},
	{"did not find expected ',' or '}'", "a { map is not closed with }"},
	{"did not find expected '-' indicator", "a list item is missing its '-' — check the indentation"},
}

// Input words an input error. Errors that are not about the manifest's text (annotation values,
// install options) are already sentences: they are returned as they are, without details.
func (w Words) Input(e *engine.InputError) InputError {
	where := ""
	if e.Doc > 0 {
		where = fmt.Sprintf("document %d, ", e.Doc)
	}
	if e.Line > 0 {
		where += fmt.Sprintf("line %d: ", e.Line)
	}
	if e.Field != "manifest" {
		return InputError{Summary: e.Error(), Reason: e.Msg}
	}
	msg := e.Msg
	if m := jsonType.FindStringSubmatch(msg); m != nil {
		words := fmt.Sprintf("%s must be %s, not a %s", m[2], typeWords(m[3]), m[1])
		return InputError{Summary: where + words, Details: msg, Reason: words}
	}
	reason := yamlPrefix.ReplaceAllString(msg, "")
	for _, r := range yamlReasons {
		if reason == r.reason {
			return InputError{Summary: where + r.words, Details: msg, Reason: r.words}
		}
	}
	if reason != msg {
		return InputError{Summary: where + reason, Details: msg, Reason: reason}
	}
	return InputError{Summary: strings.TrimSuffix(where, ": ") + ": " + msg, Reason: msg}
}

// typeWords names a Go type the way a manifest's author thinks of it.
func typeWords(t string) string {
	switch {
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "map["), strings.Contains(t, "."):
		return "a map (fields)"
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"), strings.HasPrefix(t, "float"):
		return "a number"
	case t == "bool":
		return "true or false"
	case t == "string":
		return "a string"
	}
	return "a " + t
}
