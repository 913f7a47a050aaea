package handlers

import (
	"crypto/rand"
	"encoding/base64"
	"io"
	"net/http"

	"github.com/a-h/templ"
	"github.com/go-chi/chi/v5/middleware"
	kflate "github.com/klauspost/compress/flate"
	kgzip "github.com/klauspost/compress/gzip"
)

// compressor compresses answers at the fastest level, with klauspost/compress's gzip and deflate
// (the same formats, about twice as fast as the standard library's at level 1: compressing is a
// large part of a toggle's answer).
func compressor() *middleware.Compressor {
	c := middleware.NewCompressor(1, "text/html", "text/css", "application/javascript", "text/javascript", "application/json", "image/svg+xml", "application/yaml")
	c.SetEncoder("gzip", func(w io.Writer, level int) io.Writer {
		gw, _ := kgzip.NewWriterLevel(w, level)
		return gw
	})
	c.SetEncoder("deflate", func(w io.Writer, level int) io.Writer {
		fw, _ := kflate.NewWriter(w, level)
		return fw
	})
	return c
}

// securityHeaders sets the same headers on every response: a Content-Security-Policy that allows
// nothing from elsewhere, no inline script at all, and inline style only by this response's
// nonce (the editor's generated stylesheet); no framing (the embed route lifts that); no sniffing;
// no referrer beyond this origin.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b [16]byte
		_, _ = rand.Read(b[:])
		nonce := base64.RawStdEncoding.EncodeToString(b[:])
		h := w.Header()
		h.Set("Content-Security-Policy", csp(nonce, "'none'"))
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		next.ServeHTTP(w, r.WithContext(templ.WithNonce(r.Context(), nonce)))
	})
}

// csp is the policy with the response's nonce and who may frame it.
func csp(nonce, frameAncestors string) string {
	return "default-src 'self'; script-src 'self'; style-src 'self' 'nonce-" + nonce + "'; img-src 'self' data:; " +
		"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors " + frameAncestors
}

// errCrossSite answers a state-changing request that a browser sent from another site's page.
var errCrossSite = httpError{status: http.StatusForbidden, id: "errors.cross-site"}

// refuseCrossSite refuses every state-changing request (POST: the form, /share, the API) that a
// browser sent from another origin, with net/http's CrossOriginProtection: Sec-Fetch-Site must
// be same-origin or none — same-site is refused too, since a sibling subdomain is often someone
// else's (shared hosting, preview deployments) — and where a browser sends no Sec-Fetch-Site,
// Origin, when present, must name this host. A request with neither header (curl, a script)
// is not a browser acting for someone else and passes; so do the page's own forms and fetches.
func (s *server) refuseCrossSite(next http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := cop.Check(r); err != nil {
			s.refuse(w, r, errCrossSite)
			return
		}
		next.ServeHTTP(w, r)
	})
}
