package engine

import (
	"errors"

	"istio.io/istio/pkg/kube/inject"
	"k8s.io/apimachinery/pkg/runtime"

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
