package handlers

import (
	"net/http"
	"strings"
)

// handleHealthz says the process is up; it answers from the start, before the engine is ready.
func handleHealthz() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
}

// handleReadyz says whether the engine is ready: the condition requireEngine checks. The link
// store does not decide readiness (the playground works without it), but a store that does not
// answer is named on the answer's second line, and with ?verbose every part's state is listed.
func (s *server) handleReadyz() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		engineLine := "engine: ok"
		store, sharing := s.linkStoreState()
		var b strings.Builder
		switch {
		case s.eng() == nil:
			engineLine = "engine: starting (rendering the default Istio installation)"
			w.WriteHeader(http.StatusServiceUnavailable)
			b.WriteString("starting: rendering the default Istio installation\n")
		case !sharing:
			b.WriteString("ready (sharing is unavailable)\n")
		default:
			b.WriteString("ready\n")
		}
		if _, verbose := r.URL.Query()["verbose"]; verbose {
			b.WriteString(engineLine + "\nlink store: " + store + "\n")
		}
		_, _ = w.Write([]byte(b.String()))
	})
}

// requireEngine answers 503 with Retry-After until the engine is ready (as every error, a page
// or the API's error body: jsonErrors). The handlers behind it use s.eng() without checking.
func (s *server) requireEngine(next http.Handler) http.Handler {
	return s.handler(func(w http.ResponseWriter, r *http.Request) error {
		if s.eng() == nil {
			return errNotReady
		}
		next.ServeHTTP(w, r)
		return nil
	})
}
