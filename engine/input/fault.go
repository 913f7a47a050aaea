package input

import "github.com/sidecarlab/sidecarlab/i18n"

// Fault is a failure that is a bug if it ever happens, not a problem with the input: an
// invariant of Istio's charts or of its webhook's answer broken, the isolated worker's protocol
// broken, an argument no caller passes. It is worded like an Error, from an id (the catalogs'
// errors.fault.<ID>) and parameters, after the error under it when there is one: the server
// logs it in English and answers 500; the CLI prints it in its language (package wording).
type Fault struct {
	// ID names the sentence: the catalogs' errors.fault.<ID>.
	ID string
	// Params are the values the sentence names, as text; a name ending in Q is the value
	// already quoted.
	Params map[string]string
	// Err is the failure under it (a decoder's, Istio's), or nil.
	Err error
}

// Error is the fault in English, then the error under it.
func (f *Fault) Error() string {
	text := i18n.For(i18n.Default).TMap("errors.fault."+f.ID, f.Params)
	if f.Err != nil {
		text += ": " + f.Err.Error()
	}
	return text
}

// Unwrap is the error under the fault.
func (f *Fault) Unwrap() error { return f.Err }
