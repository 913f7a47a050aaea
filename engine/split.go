package engine

import (
	"errors"

	"github.com/sidecarlab/sidecarlab/engine/yamldoc"
)

// chunk is one YAML document as istioctl's reader sees it, with where it starts.
type chunk struct {
	raw []byte
	// text is raw as a string, made once: every row of a timeline keeps it as its documents' input.
	text string
	line int // 1-based line of the chunk's first line in the whole input
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
		return out, &InputError{Doc: se.Doc, Line: se.Line, Field: "manifest", Msg: se.Error()}
	}
	return out, err
}
