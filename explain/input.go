package explain

import (
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

// yamlReasons are go-yaml's reasons and what they mean to a person writing YAML
// (explain.input.yaml.<id>).
var yamlReasons = []struct{ reason, id string }{
	{"mapping values are not allowed in this context", "mapping-values"},
	{"did not find expected key", "expected-key"},
	{"found character that cannot start any token", "cannot-start-token"},
	{"could not find expected ':'", "expected-colon"},
	{"did not find expected node content", "expected-node"},
	{"found unexpected end of stream", "end-of-stream"},
	{"did not find expected ',' or ']'", "expected-bracket"},
	{"did not find expected ',' or '}'", "expected-brace"},
	{"did not find expected '-' indicator", "expected-dash"},
}

// InputText is what e says, in w's language: sidecarlab's own sentence (e.ID, the catalogs'
// input.<ID>) worded with e.Params, or e.Msg as it is where the text is a parser's, a library's or
// Istio's. In English it is e.Msg, exactly. A step's error (Params "step") names its step.
func (w Words) InputText(e *engine.InputError) string {
	step, inStep := e.Params["step"]
	text := e.Msg
	if e.ID != "" {
		text = w.loc().TMap("input."+e.ID, e.Params)
	} else if inStep {
		text = strings.TrimPrefix(text, "step "+step+": ")
	}
	if inStep {
		text = w.loc().T("input.in-step", "step", step) + text
	}
	return text
}

// Input words an input error. Errors that are not about the manifest's text (annotation values,
// install options) are sentences: they are returned whole (with where and what), without details.
func (w Words) Input(e *engine.InputError) InputError {
	where := ""
	if e.Doc > 0 {
		where = w.loc().T("explain.input.doc", "doc", e.Doc)
	}
	if e.Line > 0 {
		where += w.loc().T("explain.input.line", "line", e.Line)
	}
	if e.Field != "manifest" {
		said := *e
		said.Msg = w.InputText(e)
		said.Field = w.FieldText(e.Field)
		return InputError{Summary: said.Error(), Reason: said.Msg}
	}
	if e.ID != "" {
		text := w.InputText(e)
		if where == "" {
			return InputError{Summary: text, Reason: text}
		}
		return InputError{Summary: trimWhere(where) + ": " + text, Reason: text}
	}
	msg := e.Msg
	if m := jsonType.FindStringSubmatch(msg); m != nil {
		words := w.loc().T("explain.input.type", "field", m[2], "want", w.typeWords(m[3]), "got", m[1])
		return InputError{Summary: where + words, Details: msg, Reason: words}
	}
	reason := yamlPrefix.ReplaceAllString(msg, "")
	for _, r := range yamlReasons {
		if reason == r.reason {
			words := w.loc().T("explain.input.yaml." + r.id)
			return InputError{Summary: where + words, Details: msg, Reason: words}
		}
	}
	if reason != msg {
		return InputError{Summary: where + reason, Details: msg, Reason: reason}
	}
	return InputError{Summary: strings.TrimSuffix(where, ": ") + ": " + msg, Reason: msg}
}

// typeWords names a Go type the way a manifest's author thinks of it.
func (w Words) typeWords(t string) string {
	switch {
	case strings.HasPrefix(t, "[]"):
		return w.loc().T("explain.input.kind.list")
	case strings.HasPrefix(t, "map["), strings.Contains(t, "."):
		return w.loc().T("explain.input.kind.map")
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"), strings.HasPrefix(t, "float"):
		return w.loc().T("explain.input.kind.number")
	case t == "bool":
		return w.loc().T("explain.input.kind.bool")
	case t == "string":
		return w.loc().T("explain.input.kind.string")
	}
	return w.loc().T("explain.input.kind.go", "type", t)
}

// trimWhere drops the separator after where's last part ("document 1, " or "line 3: "), for one
// of its own.
func trimWhere(where string) string {
	for _, sep := range []string{": ", ", ", "、"} {
		where = strings.TrimSuffix(where, sep)
	}
	return where
}

// fieldWords are the fields InputError.Field names by a fixed word, by catalog id.
var fieldWords = map[string]string{
	"manifest": "manifest", "kubernetes version": "kubernetes-version", "install": "install",
	"install overlay": "install-overlay", "steps": "steps", "mode": "mode",
	"annotations": "annotations", "annotation": "annotation",
	"your mesh": "own-mesh", "revision": "revision",
}

// FieldText is the field an input error is about, in the reader's words: the engine names it in
// English ("kubernetes version", `annotation "x"`, `install option "a=b"`, `file "f.yaml"`); a
// field this does not know (a form's own, such as v:KEY) is shown as it is.
func (w Words) FieldText(f string) string {
	if id, ok := fieldWords[f]; ok {
		return w.loc().T("explain.field." + id)
	}
	for _, p := range []struct{ prefix, id string }{{"annotation ", "annotation-named"}, {"install option ", "install-option"}, {"file ", "file"}} {
		rest, ok := strings.CutPrefix(f, p.prefix)
		if !ok {
			continue
		}
		if p.id == "annotation-named" {
			if name, field, ok := strings.Cut(rest, " field "); ok {
				return w.loc().T("explain.field.annotation-field", "name", name, "field", field)
			}
		}
		return w.loc().T("explain.field."+p.id, "name", rest)
	}
	return f
}
