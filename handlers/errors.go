package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5/middleware"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/web"
)

// httpError is an error with the status and the message a person should see.
type httpError struct {
	status int
	msg    string
}

func (e httpError) Error() string { return e.msg }

var errNotReady = httpError{status: http.StatusServiceUnavailable, msg: "sidecarlab is starting (rendering the default Istio installation); try again in a second."}

// classify maps an error to a status and a message that is safe to show. Unexpected errors are
// logged and shown as "internal error" — never their text.
func (s *server) classify(r *http.Request, err error) (int, string, *engine.InputError) {
	var he httpError
	var ie *engine.InputError
	var bs badState
	var mbe *http.MaxBytesError
	var de documentErrors
	switch {
	case errors.As(err, &de):
		return http.StatusUnprocessableEntity, de.Error(), de[0]
	case errors.As(err, &he):
		return he.status, he.msg, nil
	case errors.As(err, &ie):
		return http.StatusUnprocessableEntity, ie.Error(), ie
	case errors.As(err, &bs):
		return http.StatusBadRequest, bs.Error(), nil
	case errors.As(err, &mbe):
		return http.StatusRequestEntityTooLarge, "The request is too large: at most " + byteSize(mbe.Limit) + ".", nil
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable, "This took too long and was stopped; try a smaller input.", nil
	case errors.Is(err, r.Context().Err()) && r.Context().Err() != nil:
		return 499, "request cancelled", nil
	default:
		s.log.ErrorContext(r.Context(), "internal error", "err", err, "path", r.URL.Path, "request_id", middleware.GetReqID(r.Context()))
		return http.StatusInternalServerError, "Internal error. It has been logged.", nil
	}
}

// page adapts a handler that returns an error into one that renders the error as a page.
func (s *server) page(h func(http.ResponseWriter, *http.Request) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		err := h(w, r)
		if err == nil {
			return
		}
		status, msg, _ := s.classify(r, err)
		if status == 499 {
			return
		}
		if status == http.StatusServiceUnavailable {
			w.Header().Set("Retry-After", "1")
		}
		if rerr := render(w, r, status, web.ErrorPage(status, http.StatusText(status), msg, versionLine())); rerr != nil {
			http.Error(w, msg, status)
		}
	}
}

// apiError is the JSON body of every API error.
type apiError struct {
	Error apiErrorBody `json:"error"`
}

type apiErrorBody struct {
	Status  int    `json:"status"`
	Message string `json:"message"`
	Doc     int    `json:"doc,omitempty"`
	Line    int    `json:"line,omitempty"`
	Field   string `json:"field,omitempty"`
	// Documents lists every rejected document when there are several.
	Documents []*engine.InputError `json:"documents,omitempty"`
}

// api adapts a handler that returns (value, error) into a JSON endpoint.
func (s *server) api(h func(*http.Request) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, err := h(r)
		if err != nil {
			status, msg, ie := s.classify(r, err)
			if status == 499 {
				return
			}
			if status == http.StatusServiceUnavailable {
				w.Header().Set("Retry-After", "1")
			}
			body := apiErrorBody{Status: status, Message: msg}
			if ie != nil {
				body.Message, body.Doc, body.Line, body.Field = ie.Msg, ie.Doc, ie.Line, ie.Field
			}
			var de documentErrors
			if errors.As(err, &de) && len(de) > 1 {
				body.Documents = de
			}
			writeJSON(w, status, apiError{Error: body})
			return
		}
		writeJSON(w, http.StatusOK, v)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":{"status":500,"message":"Internal error."}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
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
				http.Error(w, "Internal error. It has been logged.", http.StatusInternalServerError)
			}
		}()
		next.ServeHTTP(w, r)
	})
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return itoa(n>>20) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return itoa(n>>10) + " KiB"
	}
	return itoa(n) + " bytes"
}
