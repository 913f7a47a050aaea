package handlers

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/i18n"
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
