package handlers

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/PuerkitoBio/goquery"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

// TestLanguageNegotiation: the page's language follows ?lang=, then the remembered choice, then
// Accept-Language; every page says its answer varies by them; a static file does not.
func TestLanguageNegotiation(t *testing.T) {
	h := newServer(t)
	for _, c := range []struct {
		target, cookie, accept, want string
	}{
		{"/", "", "", "en"},
		{"/", "", "ja,en;q=0.8", "ja"},
		{"/", "", "ko-KR", "ko"},
		{"/", "", "fr", "en"},
		{"/", "ko", "ja", "ko"},
		{"/?lang=ja", "ko", "en", "ja"},
		{"/?lang=xx", "", "ko", "ko"},
		{"/no-such-page", "", "ja", "ja"},
	} {
		req := httptest.NewRequest(http.MethodGet, c.target, nil)
		if c.cookie != "" {
			req.AddCookie(&http.Cookie{Name: langCookie, Value: c.cookie})
		}
		if c.accept != "" {
			req.Header.Set("Accept-Language", c.accept)
		}
		r := do(t, h, req)
		if got := r.doc.Find("html").AttrOr("lang", ""); got != c.want {
			t.Errorf("%s cookie=%q Accept-Language=%q: <html lang=%q>, want %q", c.target, c.cookie, c.accept, got, c.want)
		}
		if got := r.doc.Find("#lang-select option[selected]").AttrOr("value", ""); got != c.want {
			t.Errorf("%s: the switcher shows %q, want %q", c.target, got, c.want)
		}
		if vary := strings.Join(r.header.Values("Vary"), ", "); !strings.Contains(vary, "Accept-Language") || !strings.Contains(vary, "Cookie") {
			t.Errorf("%s: Vary %q", c.target, vary)
		}
	}
	r := get(t, h, "/static/app.css")
	if vary := strings.Join(r.header.Values("Vary"), ", "); strings.Contains(vary, "Accept-Language") {
		t.Errorf("a static file varies by language: %q", vary)
	}
	// The API's human text is negotiated too, so its answers vary.
	api := do(t, h, httptest.NewRequest(http.MethodGet, "/api/v1/version", nil))
	if vary := strings.Join(api.header.Values("Vary"), ", "); !strings.Contains(vary, "Accept-Language") {
		t.Errorf("the API's Vary %q", vary)
	}
}

// TestLanguageSwitcher: the switcher's POST remembers the choice in a cookie and returns to the
// page it came from (only ever a page of this site), without a ?lang= that would override it.
func TestLanguageSwitcher(t *testing.T) {
	h := newServer(t)
	page := get(t, h, "/?lang=ko&x=1")
	if got := page.doc.Find(`form.lang input[name="back"]`).AttrOr("value", ""); got != "/?x=1" {
		t.Errorf("the switcher returns to %q, want /?x=1", got)
	}
	post := func(form url.Values) response {
		req := httptest.NewRequest(http.MethodPost, "/lang", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		return do(t, h, req)
	}
	r := post(url.Values{"lang": {"ja"}, "back": {"/?s=abc"}})
	if r.status != http.StatusSeeOther || r.header.Get("Location") != "/?s=abc" {
		t.Fatalf("status %d, Location %q", r.status, r.header.Get("Location"))
	}
	cookie := r.header.Get("Set-Cookie")
	for _, want := range []string{"lang=ja", "Path=/", "Max-Age=31536000", "HttpOnly", "SameSite=Lax"} {
		if !strings.Contains(cookie, want) {
			t.Errorf("Set-Cookie %q lacks %s", cookie, want)
		}
	}
	for _, back := range []string{"//evil.example/", "https://evil.example/", "/\\evil.example", "/./\\evil.example", "/a/../\\evil.example", "/x\\y", "javascript:alert(1)", "", "/x\r\nSet-Cookie: a=b", strings.Repeat("/a", maxBack)} {
		r := post(url.Values{"lang": {"ko"}, "back": {back}})
		if r.status != http.StatusSeeOther || r.header.Get("Location") != "/" {
			t.Errorf("back %.40q: status %d, Location %q, want /", back, r.status, r.header.Get("Location"))
		}
	}
	if r := post(url.Values{"lang": {"de"}}); r.status != http.StatusUnprocessableEntity || r.header.Get("Set-Cookie") != "" {
		t.Errorf("an unknown language: status %d, Set-Cookie %q", r.status, r.header.Get("Set-Cookie"))
	}
	if missing := i18n.Missing(); len(missing) != 0 {
		t.Errorf("messages missing from the catalogs: %q", missing)
	}
}

// TestLanguageByAddressCarries: a language chosen by the address (?lang=ja) stays with the page:
// every link and form of this site on it carries the ?lang= (a GET form as a field), and so does
// the redirect after a form's POST; the permalink, which is for sharing, stays language-free. A
// page reached without ?lang=, or with a code sidecarlab does not speak, carries nothing.
func TestLanguageByAddressCarries(t *testing.T) {
	h := newServer(t)
	st := api.State{Manifest: testkit.Deployment, Steps: []input.Step{
		{Key: "sidecar.istio.io/proxyCPU", Value: "200m"},
		{Key: "proxy.istio.io/config", Value: "holdApplicationUntilProxyStarts: true"},
	}}
	link := stateLink(t, st)

	// carried lists the page's addresses on this site (links, forms' actions, buttons'
	// formactions) that must carry the page's language, and says which carry lang=want.
	carried := func(r response, want string) (with, without []string) {
		r.doc.Find("[href], [action], [formaction]").Each(func(_ int, s *goquery.Selection) {
			for _, attr := range []string{"href", "action", "formaction"} {
				u, ok := s.Attr(attr)
				if !ok || !strings.HasPrefix(u, "/") || strings.HasPrefix(u, "/static/") || u == "/lang" {
					continue
				}
				if id := s.AttrOr("data-testid", ""); id == "permalink" || id == "short-link" {
					continue
				}
				if attr == "action" && s.AttrOr("method", "") == "get" {
					// A GET form's action loses its query: the form carries the language as a field.
					if s.Find(`input[name="lang"]`).AttrOr("value", "") == want && want != "" {
						with = append(with, u)
					} else {
						without = append(without, u)
					}
					continue
				}
				p, err := url.Parse(u)
				if err != nil {
					t.Fatalf("%s=%q: %v", attr, u, err)
				}
				if want != "" && p.Query().Get("lang") == want {
					with = append(with, u)
				} else if p.Query().Has("lang") {
					t.Errorf("%s=%q carries a language; want %q", attr, u, want)
				} else {
					without = append(without, u)
				}
			}
		})
		return with, without
	}

	r := get(t, h, link+"&lang=ja")
	if got := r.doc.Find("html").AttrOr("lang", ""); got != "ja" {
		t.Fatalf("<html lang=%q>, want ja", got)
	}
	with, without := carried(r, "ja")
	if len(without) > 0 {
		t.Errorf("?lang=ja: %d of the page's addresses lose the language: %q", len(without), without)
	}
	if len(with) < 10 { // tabs, steps, lab, present, compare, downloads, the forms
		t.Errorf("?lang=ja: only %d addresses carry it: %q", len(with), with)
	}
	for what, u := range map[string]string{
		"the permalink":      testid(r, "permalink").AttrOr("href", ""),
		"the form's address": r.doc.Find("#playground").AttrOr("data-permalink", ""),
	} {
		if p, err := url.Parse(u); err != nil || p.Query().Has("lang") || !strings.HasPrefix(u, "/?s=") {
			t.Errorf("%s %q: want a language-free link to the state", what, u)
		}
	}

	// The form's POST, as a browser without the script sends it (to the action it was given).
	action := r.doc.Find("#playground").AttrOr("action", "")
	form := url.Values{"manifest": {testkit.Deployment}, "mode": {"kube-inject"}, "add": {"sidecar.istio.io/proxyMemory"}, "v:sidecar.istio.io/proxyMemory": {"256Mi"}}
	req := httptest.NewRequest(http.MethodPost, action, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	p := do(t, h, req)
	loc := p.header.Get("Location")
	if p.status != http.StatusSeeOther || !strings.HasPrefix(loc, "/?s=") || !strings.HasSuffix(loc, "&lang=ja") {
		t.Fatalf("POST %s answered %d to %q, want 303 to a permalink with &lang=ja", action, p.status, loc)
	}
	if got := get(t, h, loc).doc.Find("html").AttrOr("lang", ""); got != "ja" {
		t.Errorf("after the POST the page is in %q, want ja", got)
	}

	// Without a language in the address, or with one sidecarlab does not speak, nothing carries one.
	for _, target := range []string{link, link + "&lang=xx"} {
		r := get(t, h, target)
		with, without := carried(r, "")
		if len(with) > 0 || len(without) < 10 {
			t.Errorf("%s: %d addresses carry a language, %d do not", target, len(with), len(without))
		}
		if n := r.doc.Find(`input[name="lang"]`).Length(); n != 0 {
			t.Errorf("%s: %d forms carry a language", target, n)
		}
	}
}
