package engine

import (
	"encoding/json"
	"errors"
	"reflect"

	"istio.io/istio/pkg/kube/inject"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/engine/yamldoc"
)

// chunk is one YAML document as istioctl's reader sees it, with where it starts.
type chunk struct {
	raw []byte
	// text is raw as a string, made once: every row of a timeline keeps it as its documents' input.
	text string
	line int // 1-based line of the chunk's first line in the whole input
	// parsed is the document as Istio's reader made it (inject.FromRawToObject), kept by a
	// timeline's row 0 for the rows after it; nil when it was not read before (see object).
	parsed runtime.Object
}

// object is the document as Istio's reader makes it of raw: a copy of parsed, when the document
// was read before (the same object, without reading the YAML again), else read.
func (c chunk) object() (runtime.Object, error) {
	if c.parsed != nil {
		return c.parsed.DeepCopyObject(), nil
	}
	return inject.FromRawToObject(c.raw)
}

// splitDocuments cuts a manifest into documents the way istioctl does (see yamldoc.Split).
func splitDocuments(in []byte) ([]chunk, error) {
	docs, err := yamldoc.Split(in)
	out := make([]chunk, len(docs))
	for i, d := range docs {
		out[i] = chunk{raw: d.Raw, text: string(d.Raw), line: d.Line}
	}
	var se *yamldoc.SeparatorError
	if errors.As(err, &se) {
		return out, &input.Error{Doc: se.Doc, Line: se.Line, Field: "manifest", Msg: se.Error()}
	}
	return out, err
}

// typeAndName is what a document is listed by: its apiVersion, kind, name and namespace (and
// its labels, which a Namespace document gives the Cluster view).
type typeAndName struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        struct {
		Name      string            `json:"name"`
		Namespace string            `json:"namespace"`
		Labels    map[string]string `json:"labels"`
	} `json:"metadata"`
}

// objectMeta is what object gives — inject.FromRawToObject's object or error — with, when
// Istio's reader does not know the document's kind (the error is a not-registered one), the
// document's type and name. It parses the YAML as often as Istio's reader does: once for a kind it
// does not know, twice for one it does. Reading the name after Istio's reader failed on the kind
// parsed a CustomResourceDefinition (often 50–100 KB) whole a second time, which istioctl does
// not: a third of `inject`'s time on a manifest of CRDs.
//
// The type and name are read first (where FromRawToObject reads the type alone), the kind is
// looked up by giving FromRawToObject a document of the type alone, and a known kind is decoded
// into a new object of the type it made, as FromRawToObject decodes into the one its scheme makes.
// Where the type and name cannot be read, or the lookup fails otherwise, FromRawToObject reads
// the document itself, so the object and the error are always its own (TestObjectMeta, FuzzObjectMeta).
func (c chunk) objectMeta() (runtime.Object, typeAndName, error) {
	if c.parsed != nil {
		obj, err := c.object()
		return obj, typeAndName{}, err
	}
	var tm typeAndName
	if metaErr := yaml.Unmarshal(c.raw, &tm); metaErr != nil {
		obj, err := inject.FromRawToObject(c.raw)
		if runtime.IsNotRegisteredError(err) {
			// Reading the name would have failed so (prepareChunk).
			return nil, tm, metaErr
		}
		return obj, typeAndName{}, err
	}
	typeOnly, err := json.Marshal(tm.TypeMeta)
	if err != nil {
		obj, err := inject.FromRawToObject(c.raw)
		return obj, tm, err
	}
	blank, err := inject.FromRawToObject(typeOnly)
	if runtime.IsNotRegisteredError(err) {
		return nil, tm, err
	}
	if err != nil {
		obj, err := inject.FromRawToObject(c.raw)
		return obj, tm, err
	}
	t := reflect.TypeOf(blank)
	if t.Kind() != reflect.Pointer {
		obj, err := inject.FromRawToObject(c.raw)
		return obj, tm, err
	}
	obj, ok := reflect.New(t.Elem()).Interface().(runtime.Object)
	if !ok {
		obj, err := inject.FromRawToObject(c.raw)
		return obj, tm, err
	}
	if err := yaml.Unmarshal(c.raw, obj); err != nil {
		return nil, tm, err
	}
	return obj, tm, nil
}
