package api

import "github.com/sidecarlab/sidecarlab/engine"

// Error is the JSON body of every API error.
type Error struct {
	Error ErrorBody `json:"error"`
}

// ErrorBody is the error itself: the status, the message a person reads and, for an input
// Istio or sidecarlab rejects, the document, line and field it is about.
type ErrorBody struct {
	Status  int    `json:"status"`
	Message string `json:"message"`
	Doc     int    `json:"doc,omitempty"`
	Line    int    `json:"line,omitempty"`
	Field   string `json:"field,omitempty"`
	// Documents lists every rejected document when there are several.
	Documents []*engine.InputError `json:"documents,omitempty"`
}
