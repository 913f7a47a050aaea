package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/a-h/templ"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/permalink"
	"github.com/sidecarlab/sidecarlab/web"
	"github.com/sidecarlab/sidecarlab/wording"
)

// httpError is an error with the status and the message a person should see — a catalog id
// (errors.…) and its parameters as pairs, worded in the reader's language where the answer is
// written — and for a 503 how many seconds to wait before trying again (Retry-After; "1" when
// not set). A parameter that is a msgRef is itself a message, worded in the same language.
type httpError struct {
	status     int
	id         string
	args       []any
	retryAfter string
}

// Error is the message in English, for logs and the tests.
func (e httpError) Error() string { return e.in(i18n.For(i18n.Default)) }

// in words the message in l's language.
func (e httpError) in(l *i18n.Localizer) string { return words(l, e.id, e.args) }

// msgRef is a parameter that is a message of its own (an id), worded in the reader's language.
type msgRef string

// byteCount is a parameter that is a size, said in the reader's language (byteSizeIn).
type byteCount int64

// words words id with its parameters, a msgRef or a byteCount among them worded first.
func words(l *i18n.Localizer, id string, args []any) string {
	if len(args) == 0 {
		return l.T(id)
	}
	worded := make([]any, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case msgRef:
			a = l.T(string(v))
		case byteCount:
			a = byteSizeIn(l, int64(v))
		case permalink.Bytes:
			a = byteSizeIn(l, int64(v))
		}
		worded[i] = a
	}
	return l.T(id, worded...)
}

var errNotReady = httpError{status: http.StatusServiceUnavailable, id: "errors.not-ready"}

// classify maps an error to a status and a message that is safe to show, in the request's
// language, and the input error whose document, line and field the API's error body carries, if
// there is one. Unexpected errors are logged and shown as "internal error" — never their text.
func (s *server) classify(r *http.Request, err error) (int, string, *input.Error) {
	l := i18n.FromContext(r.Context())
	var he httpError
	var ie *input.Error
	var bs permalink.Error
	var mbe *http.MaxBytesError
	var de documentErrors
	switch {
	case errors.As(err, &de):
		return http.StatusUnprocessableEntity, wording.In(l).InputErrorText(de[0]), de[0]
	case errors.As(err, &he):
		return he.status, he.in(l), nil
	case errors.As(err, &ie):
		return http.StatusUnprocessableEntity, wording.In(l).InputErrorText(ie), ie
	case errors.As(err, &bs):
		return http.StatusBadRequest, stateErrorIn(l, bs), nil
	case errors.As(err, &mbe):
		return http.StatusRequestEntityTooLarge, l.T("errors.request-too-large", "Limit", byteSizeIn(l, mbe.Limit)), nil
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable, l.T("errors.too-slow"), nil
	case errors.Is(err, r.Context().Err()) && r.Context().Err() != nil:
		return statusClientClosedRequest, "request cancelled", nil // never shown: nobody is there
	default:
		s.log.ErrorContext(r.Context(), "internal error", "err", err, "path", r.URL.Path, "request_id", middleware.GetReqID(r.Context()))
		return http.StatusInternalServerError, l.T("errors.internal"), nil
	}
}

// statusClientClosedRequest is nginx's 499: the client went away before the answer was ready.
// Nothing is written for it, since nobody is there to read it.
const statusClientClosedRequest = 499

// appHandler is the one shape of a handler: a function that writes the answer or returns an
// error, and ServeHTTP, which turns that error into the error page or the API's error body (as
// golang/pkgsite's errorHandler). classify decides the status and what may be shown, jsonErrors
// whether it is a page or JSON.
type appHandler struct {
	s  *server
	fn func(http.ResponseWriter, *http.Request) error
}

// jsonErrors is how every error of r is shown — a handler's, a middleware's refusal, a path no
// route has: on the API's paths, the API's error body ({"error": {…}}); on every other path, the
// error page.
func jsonErrors(r *http.Request) bool {
	return strings.HasPrefix(r.URL.Path, "/api/")
}

// refuse answers r with err as an appHandler would: for middleware that refuses a request
// before any handler runs.
func (s *server) refuse(w http.ResponseWriter, r *http.Request, err error) {
	s.handler(func(http.ResponseWriter, *http.Request) error { return err }).ServeHTTP(w, r)
}

// handler makes an appHandler of fn.
func (s *server) handler(fn func(http.ResponseWriter, *http.Request) error) appHandler {
	return appHandler{s: s, fn: fn}
}

// ServeHTTP runs the handler and answers its error, if any. Nothing is answered for a client
// that went away.
func (h appHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	err := h.fn(w, r)
	if err == nil {
		return
	}
	status, msg, ie := h.s.classify(r, err)
	if status == statusClientClosedRequest {
		return
	}
	retry := ""
	if status == http.StatusServiceUnavailable {
		retry = "1"
	}
	if he := (httpError{}); errors.As(err, &he) && he.retryAfter != "" {
		retry = he.retryAfter
	}
	if retry != "" {
		w.Header().Set("Retry-After", retry)
	}
	if jsonErrors(r) {
		body := api.ErrorBody{Status: status, Message: msg}
		// An input error's where is data (doc, line, field); its message says what, in the
		// reader's language.
		words := wording.For(r.Context())
		if ie != nil {
			body.Message, body.Doc, body.Line, body.Column, body.Field = words.InputText(ie), ie.Doc, ie.Line, ie.Column, ie.Field
		}
		var de documentErrors
		if errors.As(err, &de) && len(de) > 1 {
			for _, e := range de {
				body.Documents = append(body.Documents, api.InputError{Doc: e.Doc, Line: e.Line, Column: e.Column, Field: e.Field, Message: words.InputText(e)})
			}
		}
		// The body is plain data, so only the write can fail, and then the client is gone.
		_ = writeJSON(w, status, api.Error{Error: body})
		return
	}
	// The page is rendered even when the request's context has ended (it timed out): the person
	// gets the page, with their form, not bare text.
	rr := r.WithContext(context.WithoutCancel(r.Context()))
	l := i18n.FromContext(r.Context())
	var page templ.Component
	if r.Header.Get(partialHeader) != "" {
		// The page script's request: only the error, which it shows beside the editor it keeps.
		page = web.ActionError(status, statusTitle(l, status), msg)
	} else {
		var wf withForm
		var form *web.Form
		if errors.As(err, &wf) && status != http.StatusRequestEntityTooLarge {
			form = &wf.form
		}
		// A state refused for its size is never echoed (a 5 KB link inflates to 4 MiB): a form
		// posted says the Back button still has its text, a link that its address still holds it.
		// Nor is any form over maxEchoBytes (a 3.5 KB link inflates to 529 KB): only its
		// beginning is shown, with the same note.
		back := ""
		var excerpt *web.Excerpt
		if form != nil && formBytes(form) > maxEchoBytes {
			excerpt = echoExcerpt(l, form.Manifest)
			form = nil
			back = "page.error.noteBack"
			if r.Method != http.MethodPost {
				back = "page.error.noteLinkKept"
			}
		}
		if form == nil && status == http.StatusRequestEntityTooLarge {
			back = "page.error.noteBack"
			if r.Method != http.MethodPost {
				back = "page.error.noteLink"
			}
		}
		page = web.ErrorPageWith(status, statusTitle(l, status), msg, form, back, excerpt, versionLine())
	}
	if rerr := render(w, rr, status, page); rerr != nil {
		http.Error(w, msg, status)
	}
}

// statusTitles name the statuses the handlers answer with, for the error page's title; English
// is net/http's StatusText.
var statusTitles = map[int]string{
	http.StatusBadRequest:            "errors.status.bad-request",
	http.StatusForbidden:             "errors.status.forbidden",
	http.StatusNotFound:              "errors.status.not-found",
	http.StatusMethodNotAllowed:      "errors.status.method",
	http.StatusTooManyRequests:       "errors.status.too-many",
	http.StatusRequestEntityTooLarge: "errors.status.too-large",
	http.StatusUnsupportedMediaType:  "errors.status.media-type",
	http.StatusUnprocessableEntity:   "errors.status.unprocessable",
	http.StatusInternalServerError:   "errors.status.internal",
	http.StatusServiceUnavailable:    "errors.status.unavailable",
	http.StatusInsufficientStorage:   "errors.status.storage",
}

// statusTitle is the status's name in l's language; net/http's for one the catalogs lack.
func statusTitle(l *i18n.Localizer, status int) string {
	if id, ok := statusTitles[status]; ok {
		return l.T(id)
	}
	return http.StatusText(status)
}

// withForm is an error of a request whose state could not be shown (too slow, too large, the
// server busy), with the form that holds that state, so the error page keeps what the person
// typed in an editor.
// maxEchoBytes bounds what an error page gives back of a person's form: up to it, the whole form
// in an editor that posts it again; past it, its first excerptBytes to read (echoExcerpt), and a
// note that says where the whole text still is.
const (
	maxEchoBytes = 64 << 10
	excerptBytes = 2 << 10
)

// formBytes is how much of the person's input f carries.
func formBytes(f *web.Form) int {
	return len(f.Manifest) + len(f.StepsJSON) + len(f.Set) + len(f.Overlay) + len(f.Mesh) + len(f.MeshConfigMaps)
}

// echoExcerpt is the first excerptBytes of a manifest (at a line's end when one is near), and a
// heading that says how much of it that is.
func echoExcerpt(l *i18n.Localizer, manifest string) *web.Excerpt {
	n := min(len(manifest), excerptBytes)
	for n > 0 && n < len(manifest) && !utf8.RuneStart(manifest[n]) {
		n--
	}
	if nl := strings.LastIndexByte(manifest[:n], '\n'); nl > n/2 {
		n = nl + 1
	}
	return &web.Excerpt{Heading: l.T("page.error.excerpt", "Shown", byteSizeIn(l, int64(n)), "Size", byteSizeIn(l, int64(len(manifest)))), Text: manifest[:n]}
}

type withForm struct {
	err  error
	form web.Form
}

func (e withForm) Error() string { return e.err.Error() }
func (e withForm) Unwrap() error { return e.err }

// writeJSON writes v as the answer's indented JSON with the status. It writes nothing when v
// cannot be encoded, so the caller's returned error still gets a clean error body.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, err = w.Write(append(b, '\n'))
	return err
}

func (s *server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		next.ServeHTTP(ww, r)
		s.log.LogAttrs(r.Context(), slog.LevelInfo, "request",
			slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.Int("status", ww.Status()), slog.Int("bytes", ww.BytesWritten()),
			slog.Duration("duration", time.Since(start)), slog.String("request_id", middleware.GetReqID(r.Context())))
	})
}

func (s *server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.ErrorContext(r.Context(), "panic", "value", v, "path", r.URL.Path)
				// Before negotiateLanguage: the language is chosen here from the request itself.
				http.Error(w, requestLocalizer(r).T("errors.internal"), http.StatusInternalServerError)
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// byteSizeIn is byteSize in l's language: MiB and KiB are the same in every language, bytes
// are not.
func byteSizeIn(l *i18n.Localizer, n int64) string {
	if n%(1<<10) == 0 && n >= 1<<10 {
		return web.ByteSize(n)
	}
	return l.T("errors.bytes", "N", n)
}

// renderBuffers are render's buffers, used again: growing a new one to a page's size is most of
// what rendering allocates. One that grew beyond maxRenderBuffer (a large page) is let go, so
// the pool holds no more than that a buffer.
var renderBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxRenderBuffer = 256 << 10

// render writes a component after it rendered completely, so a failure is still a clean error.
func render(w http.ResponseWriter, r *http.Request, status int, c templ.Component) error {
	buf := renderBuffers.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= maxRenderBuffer {
			buf.Reset()
			renderBuffers.Put(buf)
		}
	}()
	if err := c.Render(r.Context(), buf); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, err := w.Write(buf.Bytes())
	return err
}

// itoa is n in decimal.
func itoa(n int64) string { return strconv.FormatInt(n, 10) }
