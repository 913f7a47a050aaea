package handlers

import (
	"crypto/rand"
	"encoding/base64"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/a-h/templ"
	"github.com/go-chi/chi/v5/middleware"
	kflate "github.com/klauspost/compress/flate"
	kgzip "github.com/klauspost/compress/gzip"

	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/web"
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

// langCookie remembers the reader's choice of language (the switcher's), for a year; no account.
const langCookie = "lang"

// maxBack bounds the address the switcher returns to, which the page echoes: a longer one (a
// long ?s= link) returns to the playground's start instead.
const maxBack = 16 << 10

// negotiateLanguage chooses each request's language (i18n.Negotiate: ?lang=, then the cookie,
// then Accept-Language) and hands its Localizer to everything below in the context, with the
// language the address chose, if any (web.WithURLLang). Every answer
// but a static file's depends on it, and says so, so that no cache serves one reader's language
// to another.
func negotiateLanguage(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/static/") {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Add("Vary", "Accept-Language, Cookie")
		l := requestLocalizer(r)
		ctx := i18n.NewContext(r.Context(), l)
		if code := queryLang(r); code != "" && l.Lang() == code {
			// A language chosen by the address stays for the page's links and forms.
			ctx = web.WithURLLang(ctx, code)
		}
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			ctx = web.WithBack(ctx, backTo(r.URL))
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// requestLocalizer is the Localizer of the language r asks for (i18n.Negotiate).
func requestLocalizer(r *http.Request) *i18n.Localizer {
	var cookie string
	if c, err := r.Cookie(langCookie); err == nil {
		cookie = c.Value
	}
	return i18n.For(i18n.Negotiate(queryLang(r), cookie, r.Header.Get("Accept-Language")))
}

// queryLang is the request's ?lang=, or "" (the query parsed only when it may hold one).
func queryLang(r *http.Request) string {
	if !strings.Contains(r.URL.RawQuery, "lang=") {
		return ""
	}
	return r.URL.Query().Get("lang")
}

// backTo is the address the language switcher returns to: this page's, without a ?lang= (which
// would win over the new choice).
func backTo(u *url.URL) string {
	q := u.Query()
	if q.Has("lang") {
		q.Del("lang")
		u = &url.URL{Path: u.Path, RawQuery: q.Encode()}
	}
	back := u.RequestURI()
	if len(back) > maxBack {
		return "/"
	}
	return back
}

// handleLanguage is the switcher's POST: it remembers the language chosen and returns to the
// page it was chosen on (an address on this site only).
func (s *server) handleLanguage() http.Handler {
	return s.handler(func(w http.ResponseWriter, r *http.Request) error {
		if err := r.ParseForm(); err != nil {
			return httpError{status: http.StatusBadRequest, id: "errors.lang.form"}
		}
		code := r.PostForm.Get("lang")
		if i18n.For(code).Lang() != code {
			return httpError{status: http.StatusUnprocessableEntity, id: "errors.lang.unknown", args: []any{"Codes", strings.Join(i18n.Codes, ", "), "Code", quoteShort(code)}}
		}
		http.SetCookie(w, &http.Cookie{Name: langCookie, Value: code, Path: "/", MaxAge: int(365 * 24 * time.Hour / time.Second),
			SameSite: http.SameSiteLaxMode, HttpOnly: true, Secure: r.TLS != nil})
		http.Redirect(w, r, localPath(r.PostForm.Get("back")), http.StatusSeeOther)
		return nil
	})
}

// localPath is back if it is a path on this site, else the playground: never another host (an
// open redirect). A backslash anywhere is refused: browsers read it as a slash, and
// http.Redirect cleans "/./\evil.example" into "/\evil.example", which they follow to
// //evil.example.
func localPath(back string) string {
	if len(back) > maxBack || !strings.HasPrefix(back, "/") || strings.HasPrefix(back, "//") ||
		strings.ContainsAny(back, "\\\r\n\t") {
		return "/"
	}
	u, err := url.Parse(back)
	if err != nil || u.Host != "" || u.Scheme != "" {
		return "/"
	}
	return back
}

func quoteShort(s string) string {
	if len(s) > 16 {
		s = s[:16] + "…"
	}
	return `"` + strings.ToValidUTF8(s, "?") + `"`
}
