package handlers

import (
	"fmt"
	"html"
	"net/http"
	"strings"
)

// origin is this server's address: --public-url when it is set, else as the browser reached it:
// https when the connection is TLS, or when a trusted proxy (one of --trusted-proxies) says it
// terminated TLS (X-Forwarded-Proto); the Host the request named. Without trusted proxies the
// header is ignored: anyone can send it.
func (s *server) origin(r *http.Request) string {
	if s.cfg.PublicURL != "" {
		// The operator said where the server is (--public-url): that, not what the client sent.
		return strings.TrimSuffix(s.cfg.PublicURL, "/")
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	} else if p := parseHop(r.RemoteAddr); p.IsValid() && inPrefixes(p, s.cfg.TrustedProxies) &&
		strings.EqualFold(strings.TrimSpace(strings.Split(r.Header.Get("X-Forwarded-Proto"), ",")[0]), "https") {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// embedSnippet is the <iframe> a page author pastes to embed this view (the read-only /embed).
func embedSnippet(origin, embedHref, title string) string {
	return fmt.Sprintf(`<iframe src="%s" title="%s" width="100%%" height="520" loading="lazy" style="border: 1px solid #ccc; border-radius: 6px"></iframe>`,
		html.EscapeString(origin+embedHref), html.EscapeString(title))
}
