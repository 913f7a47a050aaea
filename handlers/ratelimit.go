package handlers

import (
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/go-chi/httprate"
)

// This file holds the rate limits per client (reads and link-store writes apart, probes exempt),
// and who the client is behind a trusted proxy, which they key on. Cross-site writes are refused
// in headers.go.

// rateLimit limits requests per client (clientAddr's) to perMinute, with a 429 that says what
// was limited (the message id, errors.rate.…) in the request's language, as a page or, on the
// API, as its JSON error (refuse); a negative perMinute is no limit. One limiter serves every
// route it wraps.
func (s *server) rateLimit(perMinute int, id string) func(http.Handler) http.Handler {
	if perMinute < 0 {
		return func(next http.Handler) http.Handler { return next }
	}
	key := func(r *http.Request) (string, error) { return s.clientKey(r), nil }
	opts := []httprate.Option{httprate.WithKeyFuncs(key),
		httprate.WithLimitHandler(func(w http.ResponseWriter, r *http.Request) {
			s.refuse(w, r, httpError{status: http.StatusTooManyRequests, id: id, retryAfter: "60"})
		})}
	if s.cfg.rateCounter != nil {
		opts = append(opts, httprate.WithLimitCounter(s.cfg.rateCounter()))
	}
	return httprate.NewRateLimiter(perMinute, time.Minute, opts...).Handler
}

// clientKey is the rate limits' key for the client: its address, an IPv6 one cut to its /64
// (one host usually has the whole /64).
func (s *server) clientKey(r *http.Request) string {
	a := clientAddr(r, s.cfg.TrustedProxies)
	if !a.IsValid() {
		return r.RemoteAddr
	}
	return httprate.CanonicalizeIP(a.String())
}

// clientAddr is the address of the client that sent r. It is the peer, unless the peer is one of
// the trusted proxies: then it is the rightmost address in X-Forwarded-For (or, when there is
// none, in Forwarded's for=) that is not a trusted proxy, since only the hops our own proxies
// appended can be believed — everything to the left of them came from the client. Without
// trusted proxies the headers are ignored: anyone can send them.
func clientAddr(r *http.Request, trusted []netip.Prefix) netip.Addr {
	peer := parseHop(r.RemoteAddr)
	if !peer.IsValid() || !inPrefixes(peer, trusted) {
		return peer
	}
	hops := forwardedHops(r.Header)
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		a := parseHop(hops[i])
		if !a.IsValid() {
			// Not an address ("unknown", an obfuscated name): the last trusted hop is all we know.
			return client
		}
		client = a
		if !inPrefixes(a, trusted) {
			return a
		}
	}
	return client
}

// forwardedHops lists the hops a request passed, leftmost first: X-Forwarded-For's, or, when no
// X-Forwarded-For was sent, the for= of each Forwarded element.
func forwardedHops(h http.Header) []string {
	var hops []string
	if xff := h.Values("X-Forwarded-For"); len(xff) > 0 {
		for _, v := range xff {
			for _, hop := range strings.Split(v, ",") {
				hops = append(hops, strings.TrimSpace(hop))
			}
		}
		return hops
	}
	for _, v := range h.Values("Forwarded") {
		for _, elem := range strings.Split(v, ",") {
			hop := ""
			for _, pair := range strings.Split(elem, ";") {
				k, val, ok := strings.Cut(strings.TrimSpace(pair), "=")
				if ok && strings.EqualFold(k, "for") {
					hop = strings.Trim(val, `"`)
				}
			}
			hops = append(hops, hop)
		}
	}
	return hops
}

// parseHop reads an address as a hop gives it: "192.0.2.1", "192.0.2.1:4711", "2001:db8::1",
// "[2001:db8::1]:4711"; anything else is the invalid Addr.
func parseHop(s string) netip.Addr {
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap()
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap()
	}
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		if a, err := netip.ParseAddr(s[1 : len(s)-1]); err == nil {
			return a.Unmap()
		}
	}
	return netip.Addr{}
}

func inPrefixes(a netip.Addr, ps []netip.Prefix) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// ParseTrustedProxies reads --trusted-proxies: comma-separated CIDRs or single addresses.
func ParseTrustedProxies(list string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if !strings.Contains(f, "/") {
			a, err := netip.ParseAddr(f)
			if err != nil {
				return nil, err
			}
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			return nil, err
		}
		if p.Addr().Is4In6() && p.Bits() >= 96 {
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}
