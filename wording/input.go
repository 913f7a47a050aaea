package wording

import (
	"regexp"
	"strings"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/yamldoc"
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
)

// The kinds of an error reading a document (ErrorKind).
const (
	// KindYAML: the text is not YAML (go-yaml's scanner or parser stopped).
	KindYAML = "yaml"
	// KindSchema: YAML, but Kubernetes' decoder cannot read it as the object it says it is (a
	// value of the wrong type, a quantity that is not one).
	KindSchema = "schema"
	// KindIstio: anything else, Istio's own refusals among them.
	KindIstio = "istio"
)

// ErrorKind says what kind of error reading a document e is: KindYAML, KindSchema or KindIstio.
// The reader's messages say it (sigs.k8s.io/yaml's "error converting YAML to JSON", a decode's
// "error unmarshaling JSON"), and Istio's reader passes them on as they are.
func ErrorKind(e *input.Error) string {
	switch {
	case e == nil || e.ID != "":
		return KindIstio
	case strings.HasPrefix(e.Msg, "error converting YAML to JSON:"), strings.HasPrefix(e.Msg, "yaml: "):
		return KindYAML
	case strings.HasPrefix(e.Msg, "error unmarshaling JSON:"), yamldoc.TypeError.MatchString(e.Msg), notObject.MatchString(e.Msg):
		return KindSchema
	}
	return KindIstio
}

// yamlReasons are go-yaml's reasons and what they mean to a person writing YAML
// (wording.input.yaml.<id>).
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
	{"found a tab character that violates indentation", "tab"},
	{"block sequence entries are not allowed in this context", "block-entry"},
}

// notObject is a document that is a scalar or a list where Kubernetes reads an object.
var notObject = regexp.MustCompile(`cannot unmarshal (\w+) into Go value of type \S+`)

// olderTemplate finds what an injection template written for another Istio trips on in this
// Istio's injector: a function it does not have (a parse error, `function "render" not
// defined`), or a field of the template's data it does not give (`can't evaluate field
// EstimatedConcurrency in type *inject.SidecarTemplateData`).
var olderTemplate = regexp.MustCompile(`function "(\w+)" not defined|can't evaluate field (\w+) in type \*inject\.SidecarTemplateData`)

// templateEras are the Istio releases whose injection templates use a function or a field that
// this Istio's injector lacks, as the real meshes of engine/testdata/real-meshes.md show them
// (Istio 1.2.0 to 1.7.8 call render; 1.11.4 to 1.17.x read .EstimatedConcurrency).
var templateEras = map[string]string{"render": "1.2–1.7", "EstimatedConcurrency": "1.11–1.17"}

// olderTemplateWords say, for an error of a template written for another Istio, what it uses
// that this Istio's injector lacks and which Istio's templates use it; "" for any other error.
func (w Words) olderTemplateWords(msg string) string {
	m := olderTemplate.FindStringSubmatch(msg)
	if m == nil {
		return ""
	}
	istio := engine.Version().Istio
	name, id := m[1], "wording.input.template.function"
	if name == "" {
		name, id = m[2], "wording.input.template.field"
	}
	if era, ok := templateEras[name]; ok {
		return w.loc().T(id+"-era", "name", name, "era", era, "istio", istio)
	}
	return w.loc().T(id, "name", name, "istio", istio)
}

// InputText is what e says, in w's language: sidecarlab's own sentence (e.ID, the catalogs'
// input.<ID>) worded with e.Params, or e.Msg as it is where the text is a parser's, a library's or
// Istio's. In English it is e.Text(), exactly. A step's error (Params "step") names its step.
func (w Words) InputText(e *input.Error) string {
	step, inStep := e.Params["step"]
	text := e.Msg
	if e.ID != "" {
		text = w.loc().TMap("input."+e.ID, e.Params)
	}
	if inStep {
		text = w.loc().T("input.in-step", "step", step) + text
	}
	return text
}

// InputErrorText is an input error in w's language, as the API, the pages and the CLI say it:
// where it is (document, line, field), then what (InputText). In English it is e.Error(),
// exactly.
func (w Words) InputErrorText(e *input.Error) string {
	return w.at(w.where(e.Doc, e.Line, 0, e.Field), w.InputText(e))
}

// FaultText is a fault in w's language: the catalogs' errors.fault.<ID> worded with f.Params,
// then the error under it (an input error worded, any other as it is). In English it is
// f.Error(), exactly.
func (w Words) FaultText(f *input.Fault) string {
	text := w.loc().TMap("errors.fault."+f.ID, f.Params)
	if f.Err != nil {
		text += ": " + w.errorText(f.Err)
	}
	return text
}

// where is a place in the input in w's language ("document 2, line 9, annotation "x""), each
// part only when it is known; "" when none is.
func (w Words) where(doc, line, column int, field string) string {
	var parts []string
	if doc > 0 {
		parts = append(parts, w.loc().T("wording.where.doc", "doc", doc))
	}
	switch {
	case line > 0 && column > 0:
		parts = append(parts, w.loc().T("wording.where.line-column", "line", line, "column", column))
	case line > 0:
		parts = append(parts, w.loc().T("wording.where.line", "line", line))
	}
	if field != "" {
		parts = append(parts, w.FieldText(field))
	}
	return strings.Join(parts, w.loc().T("wording.where.sep"))
}

// at puts what after where ("document 2, line 9: what"), or is what alone when where is "".
func (w Words) at(where, what string) string {
	if where == "" {
		return what
	}
	return w.loc().T("wording.where.at", "where", where, "what", what)
}

// At is what at a place in the input (document doc, line line, field; each only when known),
// worded as an input error's place is: for what is said about a place outside this package
// (a page's marker, a settings field's error), so that the place reads the same everywhere.
// field is as FieldText takes it; text it does not know, such as a field's name already in the
// reader's language, is kept as it is.
func (w Words) At(doc, line, column int, field, what string) string {
	return w.at(w.where(doc, line, column, field), what)
}

// Input words an input error. Errors that are not about the manifest's text (annotation values,
// install options) are sentences: they are returned whole (with where and what), without details.
// An error in the manifest is placed by document and line alone: the page shows it beside it.
func (w Words) Input(e *input.Error) InputError {
	if words := w.olderTemplateWords(e.Msg); words != "" && e.ID == "" {
		where := w.where(e.Doc, e.Line, e.Column, e.Field)
		return InputError{Summary: w.at(where, words), Details: e.Msg, Reason: words}
	}
	if e.Field != "manifest" {
		return InputError{Summary: w.InputErrorText(e), Reason: w.InputText(e)}
	}
	where := w.where(e.Doc, e.Line, e.Column, "")
	if e.ID != "" {
		text := w.InputText(e)
		return InputError{Summary: w.at(where, text), Reason: text}
	}
	msg := e.Msg
	worded := func(words string) InputError {
		return InputError{Summary: w.at(where, words), Details: msg, Reason: words}
	}
	if m := yamldoc.TypeError.FindStringSubmatch(msg); m != nil {
		return worded(w.loc().T("wording.input.type", "field", m[2], "want", w.typeWords(m[3]), "got", w.jsonWords(m[1])))
	}
	if m := yamldoc.UnknownAnchor.FindStringSubmatch(msg); m != nil {
		return worded(w.loc().T("wording.input.yaml.unknown-anchor", "anchor", m[1]))
	}
	if notObject.MatchString(msg) {
		return worded(w.loc().T("wording.input.not-object"))
	}
	if strings.Contains(msg, yamldoc.QuantityMessage) {
		return worded(w.loc().T("wording.input.quantity"))
	}
	reason := yamlPrefix.ReplaceAllString(msg, "")
	for _, r := range yamlReasons {
		if reason == r.reason {
			return worded(w.loc().T("wording.input.yaml." + r.id))
		}
	}
	if reason != msg {
		return worded(reason)
	}
	return InputError{Summary: w.at(where, msg), Reason: msg}
}

// jsonWords names the JSON type a decode found (encoding/json's words) the way typeWords names
// what it wanted.
func (w Words) jsonWords(t string) string {
	id, ok := map[string]string{"string": "string", "number": "number", "bool": "bool", "object": "map", "array": "list"}[t]
	if !ok {
		return t
	}
	return w.loc().T("wording.input.kind." + id)
}

// typeWords names a Go type the way a manifest's author thinks of it.
func (w Words) typeWords(t string) string {
	switch {
	case strings.HasPrefix(t, "[]"):
		return w.loc().T("wording.input.kind.list")
	case strings.HasPrefix(t, "map["), strings.Contains(t, "."):
		return w.loc().T("wording.input.kind.map")
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"), strings.HasPrefix(t, "float"):
		return w.loc().T("wording.input.kind.number")
	case t == "bool":
		return w.loc().T("wording.input.kind.bool")
	case t == "string":
		return w.loc().T("wording.input.kind.string")
	}
	return w.loc().T("wording.input.kind.go", "type", t)
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
		return w.loc().T("wording.field." + id)
	}
	for _, p := range []struct{ prefix, id string }{{"annotation ", "annotation-named"}, {"install option ", "install-option"}, {"file ", "file"}} {
		rest, ok := strings.CutPrefix(f, p.prefix)
		if !ok {
			continue
		}
		if p.id == "annotation-named" {
			if name, field, ok := strings.Cut(rest, " field "); ok {
				return w.loc().T("wording.field.annotation-field", "name", name, "field", field)
			}
		}
		return w.loc().T("wording.field."+p.id, "name", rest)
	}
	return f
}
