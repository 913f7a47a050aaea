package handlers

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/web"

	"github.com/BurntSushi/toml"
	"github.com/PuerkitoBio/goquery"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
	"github.com/sidecarlab/sidecarlab/permalink"
	"github.com/sidecarlab/sidecarlab/wording"
)

// langRequest is req as a reader of lang sends it (Accept-Language; no ?lang=, no cookie).
func langRequest(req *http.Request, lang string) *http.Request {
	req.Header.Set("Accept-Language", lang)
	return req
}

// apiErrorFields decodes an API error body as plain JSON, to see its field names as sent.
func apiErrorFields(t *testing.T, r response) map[string]any {
	t.Helper()
	var body map[string]map[string]any
	if err := json.Unmarshal([]byte(r.body), &body); err != nil {
		t.Fatalf("not JSON: %v\n%.300s", err, r.body)
	}
	e, ok := body["error"]
	if !ok || len(body) != 1 {
		t.Fatalf("the body is not {\"error\": {…}}: %.300s", r.body)
	}
	return e
}

// TestErrorsInTheReadersLanguage: an error page, a 429 and the API's error body say their message
// in the language the request asks for, with the same status and the same JSON field names as in
// English; English is unchanged. Each message is checked against the catalog's words and against
// its English, which it must not be.
func TestErrorsInTheReadersLanguage(t *testing.T) {
	h := newServer(t)
	limited := New(testLogger(), func() Engine { return eng }, testConfig(Config{RatePerMinute: 1}))
	small := New(testLogger(), func() Engine { return eng }, testConfig(Config{MaxBodyBytes: 1000}))
	bigManifest := testkit.Deployment + strings.Repeat("# padding\n", 200)
	type answer struct {
		status int
		msg    string // the error-message on a page, the JSON's message, or the plain text
	}
	page := func(r response) string { return testid(r, "error-message").Text() }
	apiMessage := func(t *testing.T, r response) string {
		t.Helper()
		e := apiErrorFields(t, r)
		if int(e["status"].(float64)) != r.status {
			t.Errorf("body status %v, answer %d", e["status"], r.status)
		}
		msg, _ := e["message"].(string)
		return msg
	}
	apiPost := func(ct, body string) *http.Request {
		req := httptest.NewRequest(http.MethodPost, "/api/v1/inject", strings.NewReader(body))
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		return req
	}
	// notUTF8 is a manifest whose second line is not UTF-8: the form's 422, naming the line.
	notUTF8 := url.Values{"manifest": {"apiVersion: v1\nkind: Pod \xff\n"}}
	cases := []struct {
		name string
		send func(lang string) answer
		want func(l *i18n.Localizer) answer
	}{
		{"404 page",
			func(lang string) answer {
				r := do(t, h, langRequest(httptest.NewRequest(http.MethodGet, "/no/such/page", nil), lang))
				return answer{r.status, page(r)}
			},
			func(l *i18n.Localizer) answer {
				return answer{http.StatusNotFound, l.T("errors.not-found", "Path", "/no/such/page")}
			}},
		{"413 form",
			func(lang string) answer {
				req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(url.Values{"manifest": {strings.Repeat("# padding\n", 300000)}}.Encode()))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				r := do(t, h, langRequest(req, lang))
				return answer{r.status, page(r)}
			},
			func(l *i18n.Localizer) answer {
				return answer{http.StatusRequestEntityTooLarge, l.T("errors.request-too-large", "Limit", "1 MiB")}
			}},
		{"422 form, with its line",
			func(lang string) answer {
				req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(notUTF8.Encode()))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				r := do(t, h, langRequest(req, lang))
				return answer{r.status, page(r)}
			},
			func(l *i18n.Localizer) answer {
				return answer{http.StatusUnprocessableEntity, wording.In(l).InputErrorText(&input.Error{Line: 2, Field: "manifest", Msg: l.T("errors.input.not-utf8")})}
			}},
		{"413 state, in bytes",
			func(lang string) answer {
				r := do(t, small, langRequest(httptest.NewRequest(http.MethodGet, stateLink(t, api.State{Manifest: bigManifest}), nil), lang))
				return answer{r.status, page(r)}
			},
			func(l *i18n.Localizer) answer {
				return answer{http.StatusRequestEntityTooLarge, l.T("errors.state-too-large", "Size", l.T("errors.bytes", "N", len(bigManifest)),
					"Limit", l.T("errors.bytes", "N", 1000), "Flag", "--max-body")}
			}},
		{"400 unreadable link",
			func(lang string) answer {
				r := do(t, h, langRequest(httptest.NewRequest(http.MethodGet, "/?s=!!!", nil), lang))
				return answer{r.status, page(r)}
			},
			func(l *i18n.Localizer) answer {
				return answer{http.StatusBadRequest, l.T("errors.state.unreadable", "Reason", l.T("errors.state.not-base64"))}
			}},
		{"429",
			func(lang string) answer {
				do(t, limited, langRequest(httptest.NewRequest(http.MethodGet, "/api/v1/version", nil), lang))
				r := do(t, limited, langRequest(httptest.NewRequest(http.MethodGet, "/api/v1/version", nil), lang))
				return answer{r.status, apiMessage(t, r)}
			},
			func(l *i18n.Localizer) answer {
				return answer{http.StatusTooManyRequests, l.T("errors.rate.requests")}
			}},
		{"API 400",
			func(lang string) answer {
				r := do(t, h, langRequest(apiPost("application/json", `{"manifest":"kind: Pod"} {}`), lang))
				return answer{r.status, apiMessage(t, r)}
			},
			func(l *i18n.Localizer) answer {
				return answer{http.StatusBadRequest, l.T("errors.api.trailing")}
			}},
		{"API 415",
			func(lang string) answer {
				r := do(t, h, langRequest(apiPost("text/plain", `{}`), lang))
				return answer{r.status, apiMessage(t, r)}
			},
			func(l *i18n.Localizer) answer {
				return answer{http.StatusUnsupportedMediaType, l.T("errors.api.content-type", "Type", "application/json", "Header", "Content-Type: application/json")}
			}},
		{"API 400, a parameter",
			func(lang string) answer {
				req := apiPost("application/json", `{"manifest":`+jsonString(testkit.Deployment)+`}`)
				req.URL.RawQuery = "include=nonsense"
				r := do(t, h, langRequest(req, lang))
				return answer{r.status, apiMessage(t, r)}
			},
			func(l *i18n.Localizer) answer {
				return answer{http.StatusBadRequest, l.T("errors.api.include", "Part", "nonsense", "Parts", strings.Join(apiPartNames(), ", "))}
			}},
	}
	en := i18n.For("en")
	for _, c := range cases {
		t.Run(c.name+"/en", func(t *testing.T) {
			if got, want := c.send(""), c.want(en); got != want {
				t.Fatalf("got %+v\nwant %+v", got, want)
			}
		})
		for _, lang := range []string{"ja", "ko"} {
			t.Run(c.name+"/"+lang, func(t *testing.T) {
				l := i18n.For(lang)
				want := c.want(l)
				if want.msg == c.want(en).msg {
					t.Fatalf("the %s message is the English one: %q", lang, want.msg)
				}
				if got := c.send(lang); got != want {
					t.Fatalf("got %+v\nwant %+v", got, want)
				}
			})
		}
	}
	if m := i18n.Missing(); len(m) > 0 {
		t.Fatalf("messages missing from the catalogs:\n%s", strings.Join(m, "\n"))
	}
}

// apiPartNames are the parts ?include= takes, as the 400 lists them.
func apiPartNames() []string {
	var names []string
	for _, p := range apiParts {
		names = append(names, p.name)
	}
	return names
}

// TestErrorWordsAreLiteral: English stays word for word what it was, and the Japanese and
// Korean are the catalog's, not English: a few messages spelled out.
func TestErrorWordsAreLiteral(t *testing.T) {
	h := newServer(t)
	for _, c := range []struct{ lang, want string }{
		{"", "There is no page at /nowhere."},
		{"en-US,en;q=0.9", "There is no page at /nowhere."},
		{"ja", "/nowhereにページはありません。"},
		{"ko-KR,ko;q=0.9", "/nowhere에는 페이지가 없습니다."},
		{"fr", "There is no page at /nowhere."},
	} {
		r := do(t, h, langRequest(httptest.NewRequest(http.MethodGet, "/nowhere", nil), c.lang))
		if got := testid(r, "error-message").Text(); r.status != http.StatusNotFound || got != c.want {
			t.Errorf("Accept-Language %q: %d %q, want 404 %q", c.lang, r.status, got, c.want)
		}
	}
	// The page's title names the status in the reader's language; a status the catalogs do not
	// name keeps net/http's.
	for _, c := range []struct{ lang, want string }{{"", "404 Not Found"}, {"ja", "404 見つかりません"}, {"ko", "404 찾을 수 없음"}} {
		r := do(t, h, langRequest(httptest.NewRequest(http.MethodGet, "/nowhere", nil), c.lang))
		if got := strings.Join(strings.Fields(r.doc.Find("h1").First().Text()), " "); got != c.want {
			t.Errorf("Accept-Language %q: title %q, want %q", c.lang, got, c.want)
		}
	}
	if got := statusTitle(i18n.For("ja"), http.StatusTeapot); got != http.StatusText(http.StatusTeapot) {
		t.Errorf("an unnamed status: %q", got)
	}
	// Istio's and the parser's own words stay as they are: the API's 422 for a manifest that
	// does not parse carries the parser's message and its line in every language.
	bad := `{"manifest":` + jsonString("apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n   bad: indent\n") + `}`
	var msgs []string
	for _, lang := range []string{"", "ja", "ko"} {
		req := httptest.NewRequest(http.MethodPost, "/api/v1/inject", strings.NewReader(bad))
		req.Header.Set("Content-Type", "application/json")
		r := do(t, h, langRequest(req, lang))
		e := apiErrorFields(t, r)
		if r.status != http.StatusUnprocessableEntity || e["line"] == nil || e["field"] != "manifest" {
			t.Fatalf("%q: %d %.300s", lang, r.status, r.body)
		}
		msgs = append(msgs, e["message"].(string))
	}
	if msgs[0] != msgs[1] || msgs[0] != msgs[2] || !strings.Contains(msgs[0], "mapping values are not allowed") {
		t.Fatalf("the parser's message changed with the language: %q", msgs)
	}
}

// TestByteSizeIn: bytes are said in the reader's language, KiB and MiB as they are; English is
// byteSize's.
func TestByteSizeIn(t *testing.T) {
	for _, c := range []struct {
		lang string
		n    int64
		want string
	}{
		{"en", 1000, "1000 bytes"}, {"en", 1 << 20, "1 MiB"},
		{"ja", 1000, "1000バイト"}, {"ja", 1 << 20, "1 MiB"}, {"ja", 3 << 10, "3 KiB"},
		{"ko", 1000, "1000바이트"}, {"ko", 1 << 20, "1 MiB"},
	} {
		if got := byteSizeIn(i18n.For(c.lang), c.n); got != c.want {
			t.Errorf("%s %d: %q, want %q", c.lang, c.n, got, c.want)
		}
		if c.lang == "en" && web.ByteSize(c.n) != c.want {
			t.Errorf("web.ByteSize(%d) = %q, want %q", c.n, web.ByteSize(c.n), c.want)
		}
	}
}

// errorIDs are the errors.… message ids that the Go files hold as string literals.
func errorIDs(t *testing.T, fset *token.FileSet, files []*ast.File) map[string]token.Position {
	t.Helper()
	ids := map[string]token.Position{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err == nil && strings.HasPrefix(s, "errors.") && !strings.ContainsAny(s, " \n") {
				ids[s] = fset.Position(lit.Pos())
			}
			return true
		})
	}
	return ids
}

// englishIDs are the ids of the English errors catalog, read as TOML: asking the Localizer for
// an id it lacks would record it in i18n.Missing, which other tests require empty.
func englishIDs(t *testing.T) map[string]bool {
	t.Helper()
	var tree map[string]any
	if _, err := toml.DecodeFile(filepath.Join("..", "i18n", "locales", "errors.en.toml"), &tree); err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			sub, isTable := v.(map[string]any)
			if _, plural := sub["other"]; !isTable || plural {
				ids[prefix+k] = true
				continue
			}
			walk(prefix+k+".", sub)
		}
	}
	walk("", tree)
	return ids
}

// missingIDs are the ids the catalog lacks.
func missingIDs(ids map[string]token.Position, catalog map[string]bool) []string {
	var out []string
	for id, pos := range ids {
		if !catalog[id] {
			out = append(out, pos.String()+": "+id)
		}
	}
	slices.Sort(out)
	return out
}

// TestErrorIDsAreInTheCatalog: every errors.… id the handlers package uses is in the English
// catalog (which the i18n package checks the other languages against).
func TestErrorIDsAreInTheCatalog(t *testing.T) {
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	ids := errorIDs(t, fset, files)
	if len(ids) < 40 {
		t.Fatalf("only %d errors.… ids found: the walk misses them", len(ids))
	}
	catalog := englishIDs(t)
	if !catalog["errors.not-found"] || !catalog["errors.state.truncated"] {
		t.Fatalf("the catalog's ids are not read: %d ids", len(catalog))
	}
	if m := missingIDs(ids, catalog); len(m) > 0 {
		t.Fatalf("ids not in errors.en.toml:\n%s", strings.Join(m, "\n"))
	}
	// And the walk does find an id the catalog lacks.
	f, err := parser.ParseFile(fset, "x.go", `package x
var _ = httpError{id: "errors.no-such-message"}`, 0)
	if err != nil {
		t.Fatal(err)
	}
	if m := missingIDs(errorIDs(t, fset, []*ast.File{f}), catalog); len(m) != 1 || !strings.HasSuffix(m[0], "errors.no-such-message") {
		t.Fatalf("an unknown id is not reported: %q", m)
	}
}

// TestCompareLabels: the one-click comparisons' labels, which their address keeps in English,
// are shown in the reader's language; a label a person chose is shown as it is.
func TestCompareLabels(t *testing.T) {
	h := newServer(t)
	st := permalink.Encode(api.State{Version: permalink.Version, Manifest: testkit.Deployment})
	q := url.Values{"a": {st}, "b": {st}, "la": {"classic sidecar"}, "lb": {"classic sidecar, mine"}}
	for _, c := range []struct{ lang, a string }{{"", "classic sidecar"}, {"ja", "従来型サイドカー"}, {"ko", "기존 방식 사이드카"}} {
		r := do(t, h, langRequest(httptest.NewRequest(http.MethodGet, "/compare?"+q.Encode(), nil), c.lang))
		a := testid(r, "side-a").Find("h2").First().Text()
		b := testid(r, "side-b").Find("h2").First().Text()
		if r.status != http.StatusOK || a != c.a || b != "classic sidecar, mine" {
			t.Errorf("Accept-Language %q: %d, labels %q and %q, want %q and the person's own", c.lang, r.status, a, b, c.a)
		}
	}
	if m := i18n.Missing(); len(m) > 0 {
		t.Fatalf("messages missing from the catalogs:\n%s", strings.Join(m, "\n"))
	}
}

// TestCompareLinksIn: the one-click comparisons' link text is in the language asked for, and
// English is what it was.
func TestCompareLinksIn(t *testing.T) {
	docs := []engine.Document{{Kind: "Job", Injectable: true}}
	for _, c := range []struct {
		l    *i18n.Localizer
		want []string
	}{
		{i18n.For("en"), []string{"Compare classic vs native", "Compare without vs with hold", "Compare with ambient"}},
		{i18n.For("ja"), []string{"従来型とネイティブを比較", "holdなしとありを比較", "アンビエントと比較"}},
		{i18n.For("ko"), []string{"기존 방식과 네이티브 비교", "hold 없음과 있음 비교", "앰비언트와 비교"}},
	} {
		var got []string
		for _, link := range compareLinksIn(c.l, api.State{Manifest: jobYAML}, docs) {
			got = append(got, link.Label)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.l.Lang(), got, c.want)
		}
	}
	if got := compareLinks(api.State{Manifest: jobYAML}, docs[:0]); len(got) != 0 {
		t.Errorf("links for no workload: %v", got)
	}
}

// TestEngineErrorsInTheReadersLanguage: the engine's own sentence about the input (here an empty
// manifest, and a Kubernetes version that is not one) is worded in the reader's language on the
// page, and in English as the engine wrote it.
func TestEngineErrorsInTheReadersLanguage(t *testing.T) {
	h := newServer(t)
	for _, c := range []struct {
		form url.Values
		id   string
	}{
		{url.Values{"manifest": {"  \n"}}, "input.manifest-empty"},
		{url.Values{"manifest": {testkit.Deployment}, "mode": {"webhook"}, "kubernetesVersion": {"2.0"}}, "input.kubernetes-version"},
	} {
		for _, lang := range []string{"en", "ja", "ko"} {
			req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(c.form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			r := do(t, h, langRequest(req, lang))
			if r.status == http.StatusSeeOther { // the form's answer is its permalink
				r = do(t, h, langRequest(httptest.NewRequest(http.MethodGet, r.header.Get("Location"), nil), lang))
			}
			want := i18n.For(lang).T(c.id, "versionQ", `"2.0"`)
			if !strings.Contains(r.body, html.EscapeString(want)) {
				t.Errorf("%s %s: status %d, the page lacks %q\n%s", lang, c.id, r.status, want, r.doc.Find(".error-box, .error-line, [role=alert]").Text())
			}
		}
	}
	noMissing(t)
}

// TestCompareHoldSides: "Compare without vs with hold" puts the state itself on the side it is
// on. Without hold, the state is the left side and the right adds hold to the pods' proxy config
// (keeping what that config already set); with hold — by a step or by the mesh's own default —
// the state is the right side and the left turns hold off. No side equals the other.
func TestCompareHoldSides(t *testing.T) {
	h := newServer(t)
	cfg := func(v string) []input.Step { return []input.Step{{Key: "proxy.istio.io/config", Value: v}} }
	meshHold := api.State{Manifest: testkit.Deployment, Settings: engine.Settings{Install: engine.InstallOptions{Set: []string{"meshConfig.defaultConfig.holdApplicationUntilProxyStarts=true"}}}}
	for _, c := range []struct {
		name       string
		st         api.State
		stateSide  string // "a" or "b": where the state itself is
		otherLast  string // the other side's last step's value
		otherLabel string
	}{
		{"no hold", api.State{Manifest: testkit.Deployment, Steps: cfg("concurrency: 2")}, "a", "concurrency: 2\nholdApplicationUntilProxyStarts: true", "with holdApplicationUntilProxyStarts"},
		{"hold by a step", api.State{Manifest: testkit.Deployment, Steps: cfg("concurrency: 2\nholdApplicationUntilProxyStarts: true")}, "b", "concurrency: 2\nholdApplicationUntilProxyStarts: false", "without holdApplicationUntilProxyStarts"},
		{"hold by the mesh", meshHold, "b", "holdApplicationUntilProxyStarts: false", "without holdApplicationUntilProxyStarts"},
	} {
		r := get(t, h, stateLink(t, c.st)+"&tab=lifecycle")
		var href string
		testid(r, "compare-link").Each(func(_ int, s *goquery.Selection) {
			if strings.Contains(s.Text(), "hold") {
				href = s.AttrOr("href", "")
			}
		})
		u, err := url.Parse(href)
		if err != nil || href == "" {
			t.Fatalf("%s: no hold comparison (%q, %v)", c.name, href, err)
		}
		q := u.Query()
		other := map[string]string{"a": "b", "b": "a"}[c.stateSide]
		self, err1 := decodeState(q.Get(c.stateSide))
		o, err2 := decodeState(q.Get(other))
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: %v %v", c.name, err1, err2)
		}
		if permalink.Encode(self) != permalink.Encode(c.st) {
			t.Errorf("%s: side %s is not the state itself: %+v", c.name, c.stateSide, self.Steps)
		}
		if len(o.Steps) != len(c.st.Steps)+1 || o.Steps[len(o.Steps)-1].Value != c.otherLast {
			t.Errorf("%s: side %s's steps %+v, want the state's and one more with %q", c.name, other, o.Steps, c.otherLast)
		}
		if got := q.Get("l" + other); got != c.otherLabel {
			t.Errorf("%s: side %s is labelled %q, want %q", c.name, other, got, c.otherLabel)
		}
	}
}
