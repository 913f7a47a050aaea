package api

// Error is the JSON body of every API error.
type Error struct {
	Error ErrorBody `json:"error"`
}

// ErrorBody is the error itself: the status, the message a person reads and, for an input
// Istio or sidecarlab rejects, the document, line and field it is about (the message then says
// what is wrong, not where).
type ErrorBody struct {
	Status  int    `json:"status"`
	Message string `json:"message"`
	Doc     int    `json:"doc,omitempty"`
	Line    int    `json:"line,omitempty"`
	// Column is where on Line the error is, from 1, when one place on it is (input.Error).
	Column int    `json:"column,omitempty"`
	Field  string `json:"field,omitempty"`
	// Documents lists every rejected document when there are several.
	Documents []InputError `json:"documents,omitempty"`
}

// InputError is one rejected document: where (as input.Error has it) and what is wrong,
// sidecarlab's own sentence in the reader's language, or the parser's or Istio's text as it is.
type InputError struct {
	Doc     int    `json:"doc,omitempty"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}
