package handlers

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/secrets"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
	"github.com/sidecarlab/sidecarlab/permalink"
	"github.com/sidecarlab/sidecarlab/web"
)

// countingLinks counts the writes a store sees.
type countingLinks struct {
	*memLinks
	puts atomic.Int32
}

func (c *countingLinks) Put(ctx context.Context, l Link) (string, error) {
	c.puts.Add(1)
	return c.memLinks.Put(ctx, l)
}

// secretYAML is a Deployment with a password in an env value, and a Secret.
const secretYAML = testkit.Deployment + `        env:
        - name: DB_PASSWORD
          value: hunter2hunter2
---
apiVersion: v1
kind: Secret
metadata:
  name: db
stringData:
  password: correct-horse-battery
`

func serverConfig(t *testing.T, cfg Config) http.Handler {
	t.Helper()
	newServer(t)
	return New(slog.New(slog.NewTextHandler(io.Discard, nil)), func() Engine { return eng }, testConfig(cfg))
}

func postShareAPI(t *testing.T, h http.Handler, body any, header http.Header) response {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, "/api/v1/share", strings.NewReader(string(b)))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header[k] = v
	}
	return do(t, h, req)
}

func storedState(t *testing.T, h http.Handler, id string) api.State {
	t.Helper()
	r := get(t, h, "/api/v1/links/"+id)
	if r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Fatalf("links/%s: %d %s", id, r.status, r.body)
	}
	var st api.State
	if err := json.Unmarshal([]byte(r.body), &st); err != nil {
		t.Fatal(err)
	}
	return st
}

func TestAPIShare(t *testing.T) {
	links := &countingLinks{memLinks: newMemLinks()}
	h := serverConfig(t, Config{Links: links})
	hostile := http.Header{"X-Forwarded-Host": {"evil.example"}}
	req := api.ShareRequest{InjectRequest: api.InjectRequest{Manifest: testkit.Deployment, Steps: []input.Step{{Key: "sidecar.istio.io/proxyCPU", Value: "200m"}}}}

	r := postShareAPI(t, h, req, hostile)
	var a api.ShareResponse
	if r.status != http.StatusCreated || json.Unmarshal([]byte(r.body), &a) != nil || a.ID == "" || a.URL != "/s/"+a.ID {
		t.Fatalf("share: %d %s", r.status, r.body)
	}
	// The same state, the same id — and the same id as the form's Share of it.
	r = postShareAPI(t, h, req, nil)
	var b api.ShareResponse
	if json.Unmarshal([]byte(r.body), &b) != nil || b.ID != a.ID {
		t.Fatalf("same state, ids %q and %q", a.ID, b.ID)
	}
	if loc := share(t, h, testkit.Deployment, `[{"key":"sidecar.istio.io/proxyCPU","value":"200m"}]`); loc != a.URL {
		t.Fatalf("the form shares it as %s, the API as %s", loc, a.URL)
	}
	if st := storedState(t, h, a.ID); st.Manifest != testkit.Deployment || len(st.Steps) != 1 || st.Istio != engine.Version().Istio || st.Version != permalink.Version {
		t.Fatalf("stored state: %+v", st)
	}
	if r := get(t, h, a.URL); r.status != http.StatusOK {
		t.Fatalf("%s: %d", a.URL, r.status)
	}

	t.Run("secrets are listed and not stored", func(t *testing.T) {
		before := links.puts.Load()
		r := postShareAPI(t, h, api.ShareRequest{InjectRequest: api.InjectRequest{Manifest: secretYAML}}, nil)
		var resp api.SecretsResponse
		if r.status != http.StatusUnprocessableEntity || json.Unmarshal([]byte(r.body), &resp) != nil {
			t.Fatalf("%d %s", r.status, r.body)
		}
		if links.puts.Load() != before {
			t.Fatal("the store was written before the person chose")
		}
		var kinds []string
		for _, f := range resp.Secrets {
			kinds = append(kinds, string(f.Kind))
		}
		if strings.Join(kinds, ",") != "env-name,secret-document,data-value" || resp.Total != 3 || resp.Error.Status != 422 ||
			!strings.Contains(resp.Error.Message, `"redact": true`) || resp.Secrets[0].Message == "" || resp.Secrets[0].Line != 19 {
			t.Fatalf("422 body: %s", r.body)
		}
		if strings.Contains(r.body, "hunter2") || strings.Contains(r.body, "correct-horse") {
			t.Fatalf("the 422 echoes a secret: %s", r.body)
		}
	})
	t.Run("redact stores the redacted state", func(t *testing.T) {
		r := postShareAPI(t, h, api.ShareRequest{InjectRequest: api.InjectRequest{Manifest: secretYAML}, Redact: true}, nil)
		var resp api.ShareResponse
		if r.status != http.StatusCreated || json.Unmarshal([]byte(r.body), &resp) != nil {
			t.Fatalf("%d %s", r.status, r.body)
		}
		st := storedState(t, h, resp.ID)
		want, _ := secrets.Redact([]byte(secretYAML))
		if st.Manifest != want || strings.Contains(st.Manifest, "hunter2") || !strings.Contains(st.Manifest, "value: <redacted>") {
			t.Fatalf("stored manifest:\n%s", st.Manifest)
		}
	})
	t.Run("allowSecrets stores it as it is", func(t *testing.T) {
		r := postShareAPI(t, h, api.ShareRequest{InjectRequest: api.InjectRequest{Manifest: secretYAML}, AllowSecrets: true}, nil)
		var resp api.ShareResponse
		if r.status != http.StatusCreated || json.Unmarshal([]byte(r.body), &resp) != nil {
			t.Fatalf("%d %s", r.status, r.body)
		}
		if st := storedState(t, h, resp.ID); st.Manifest != secretYAML {
			t.Fatalf("stored manifest:\n%s", st.Manifest)
		}
	})

	before := links.puts.Load()
	for _, c := range []struct {
		name, contentType, body string
		header                  http.Header
		status                  int
		want                    string
	}{
		{"both flags", "application/json", `{"manifest":"kind: Pod\n","redact":true,"allowSecrets":true}`, nil, 400, "not both"},
		{"not JSON", "application/json", `{`, nil, 400, "not valid JSON"},
		{"unknown field", "application/json", `{"manifest":"x","bogus":1}`, nil, 400, "bogus"},
		{"a form", "application/x-www-form-urlencoded", `manifest=x`, nil, 415, "application/json"},
		{"nothing to share", "application/json", `{"manifest":"hello: world\n"}`, nil, 422, "no Kubernetes object"},
		{"cross-site", "application/json", `{"manifest":"kind: Pod\n"}`, http.Header{"Sec-Fetch-Site": {"cross-site"}}, 403, "error"},
	} {
		req := httptest.NewRequest(http.MethodPost, "/api/v1/share", strings.NewReader(c.body))
		req.Header.Set("Content-Type", c.contentType)
		for k, v := range c.header {
			req.Header[k] = v
		}
		r := do(t, h, req)
		if r.status != c.status || !strings.Contains(r.body, c.want) || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
			t.Errorf("%s: %d %s %s", c.name, r.status, r.header.Get("Content-Type"), r.body)
		}
	}
	// An unknown field's name is echoed, bounded.
	long := `{"manifest":"x","` + strings.Repeat("x", 100_000) + `":1}`
	lr := httptest.NewRequest(http.MethodPost, "/api/v1/share", strings.NewReader(long))
	lr.Header.Set("Content-Type", "application/json")
	if r := do(t, h, lr); r.status != http.StatusBadRequest || len(r.body) > 1000 || !strings.Contains(r.body, "unknown field") {
		t.Errorf("a long unknown field: %d, %d bytes", r.status, len(r.body))
	}
	if links.puts.Load() != before {
		t.Error("a refused share wrote to the store")
	}
	for _, id := range []string{"0000000000000000", "..%2F..%2Fetc"} {
		if r := get(t, h, "/api/v1/links/"+id); r.status != http.StatusNotFound || !strings.Contains(r.body, `"status": 404`) {
			t.Errorf("links/%s: %d %s", id, r.status, r.body)
		}
	}
}

// TestAPIShareURL: the link's address comes from --public-url, never from the request.
func TestAPIShareURL(t *testing.T) {
	req := api.ShareRequest{InjectRequest: api.InjectRequest{Manifest: testkit.Deployment}}
	h := serverConfig(t, Config{Links: newMemLinks(), PublicURL: "https://lab.example.com/"})
	for _, hdr := range []http.Header{nil, {"X-Forwarded-Host": {"evil.example"}, "Forwarded": {"host=evil.example"}}} {
		b, _ := json.Marshal(req)
		r := httptest.NewRequest(http.MethodPost, "/api/v1/share", strings.NewReader(string(b)))
		r.Host = "evil.example"
		r.Header.Set("Content-Type", "application/json")
		for k, v := range hdr {
			r.Header[k] = v
		}
		resp := do(t, h, r)
		var got api.ShareResponse
		if resp.status != http.StatusCreated || json.Unmarshal([]byte(resp.body), &got) != nil ||
			got.URL != "https://lab.example.com/s/"+got.ID || strings.Contains(resp.body, "evil") {
			t.Fatalf("%d %s", resp.status, resp.body)
		}
	}
	// Without a public URL the answer is the path, whatever the Host.
	h = serverConfig(t, Config{Links: newMemLinks()})
	b, _ := json.Marshal(req)
	r := httptest.NewRequest(http.MethodPost, "/api/v1/share", strings.NewReader(string(b)))
	r.Host = "evil.example"
	r.Header.Set("Content-Type", "application/json")
	if resp := do(t, h, r); resp.status != http.StatusCreated || strings.Contains(resp.body, "evil") || !strings.Contains(resp.body, `"url": "/s/`) {
		t.Fatalf("%d %s", resp.status, resp.body)
	}
}

func TestAPIShareOffAndLimited(t *testing.T) {
	// No store: sharing is off, in the API's words.
	h := serverConfig(t, Config{})
	if r := postShareAPI(t, h, api.ShareRequest{InjectRequest: api.InjectRequest{Manifest: testkit.Deployment}}, nil); r.status != http.StatusNotFound || !strings.Contains(r.body, "Sharing is off") {
		t.Errorf("no store: %d %s", r.status, r.body)
	}
	if r := get(t, h, "/api/v1/links/0000000000000000"); r.status != http.StatusNotFound || !strings.Contains(r.body, "Sharing is off") {
		t.Errorf("no store, links: %d %s", r.status, r.body)
	}
	// The API's shares count against the write limit, with the form's.
	h = serverConfig(t, Config{Links: newMemLinks(), WriteRatePerMinute: 1})
	if r := postShareAPI(t, h, api.ShareRequest{InjectRequest: api.InjectRequest{Manifest: testkit.Deployment}}, nil); r.status != http.StatusCreated {
		t.Fatalf("first share: %d %s", r.status, r.body)
	}
	fr := httptest.NewRequest(http.MethodPost, "/share", strings.NewReader(url.Values{"manifest": {testkit.Deployment}}.Encode()))
	fr.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if r := do(t, h, fr); r.status != http.StatusTooManyRequests {
		t.Errorf("a form share after the API's: %d", r.status)
	}
}

// TestShareFormSecrets: the form's Share with secrets lists them (never their values), stores
// nothing, and stores what the person chose.
func TestShareFormSecrets(t *testing.T) {
	links := &countingLinks{memLinks: newMemLinks()}
	h := serverConfig(t, Config{Links: links})
	hostile := strings.Replace(secretYAML, "name: web\n", "name: web # <script>alert(1)</script>\n", 1)
	hostile = strings.Replace(hostile, "        env:\n", "        env:\n        - name: \"<script>alert(2)</script>_TOKEN\"\n          value: abc123\n", 1)
	form := url.Values{"manifest": {hostile}, "steps": {"[]"}, "tab": {"yaml"}}
	r := do(t, h, shareRequest(form))
	if r.status != http.StatusOK || testid(r, "share-secrets").Length() != 1 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if links.puts.Load() != 0 {
		t.Fatal("the store was written before the person chose")
	}
	rows := testid(r, "share-secret")
	if rows.Length() != 4 || !strings.Contains(testid(r, "share-secret-kind").First().Text(), "password, token, key or secret") ||
		!strings.Contains(rows.First().Text(), "<script>alert(2)</script>_TOKEN: <redacted>") {
		t.Fatalf("%d rows: %s", rows.Length(), rows.Text())
	}
	if list := testid(r, "share-secrets-list").Text(); strings.Contains(list, "hunter2") || strings.Contains(list, "correct-horse") || !strings.Contains(list, "DB_PASSWORD: <redacted>") {
		t.Fatalf("the list: %s", list)
	}
	if strings.Contains(r.body, "<script>alert") || r.doc.Find(`script:not([src]):not(#i18n-js[type="application/json"])`).Length() != 0 {
		t.Fatal("the manifest comes back unescaped")
	}
	// The buttons post the same state again with the choice; Cancel goes back to the view.
	f := testid(r, "share-secrets-form")
	if f.AttrOr("action", "") != "/share" || testid(r, "share-redact").AttrOr("value", "") != "redact" || testid(r, "share-as-is").AttrOr("value", "") != "allow" {
		t.Fatal("the choice's form")
	}
	if got := f.Find(`input[name="manifest"]`).AttrOr("value", ""); got != form.Get("manifest") {
		t.Fatalf("the form carries %q", got)
	}
	if c := testid(r, "share-cancel").AttrOr("href", ""); !strings.HasPrefix(c, "/?s=") || !strings.Contains(c, "tab=yaml") {
		t.Fatalf("cancel: %q", c)
	}

	form.Set("secrets", "redact")
	r = do(t, h, shareRequest(form))
	loc := r.header.Get("Location")
	if r.status != http.StatusSeeOther || !strings.HasPrefix(loc, "/s/") || !strings.HasSuffix(loc, "?tab=yaml") {
		t.Fatalf("redact: %d %q", r.status, loc)
	}
	id := strings.TrimSuffix(strings.TrimPrefix(loc, "/s/"), "?tab=yaml")
	if st := storedState(t, h, id); strings.Contains(st.Manifest, "hunter2") || strings.Contains(st.Manifest, "correct-horse") || !strings.Contains(st.Manifest, "# <script>") {
		t.Fatalf("stored:\n%s", st.Manifest)
	}
	// The redacted link's page warns of nothing: nothing is left.
	if r := get(t, h, loc); r.status != http.StatusOK || strings.Contains(testid(r, "banner").Text(), "secret") {
		t.Fatalf("the redacted link: %d %q", r.status, testid(r, "banner").Text())
	}

	form.Set("secrets", "allow")
	r = do(t, h, shareRequest(form))
	if r.status != http.StatusSeeOther {
		t.Fatalf("as is: %d", r.status)
	}
	id = strings.TrimSuffix(strings.TrimPrefix(r.header.Get("Location"), "/s/"), "?tab=yaml")
	if st := storedState(t, h, id); st.Manifest != form.Get("manifest") {
		t.Fatalf("stored:\n%s", st.Manifest)
	}

	before := links.puts.Load()
	form.Set("secrets", "maybe")
	if r := do(t, h, shareRequest(form)); r.status != http.StatusBadRequest || links.puts.Load() != before {
		t.Fatalf("a bad choice: %d", r.status)
	}
	// Without secrets, Share stores at once, as it always did.
	if loc := share(t, h, testkit.Deployment, "[]"); !strings.HasPrefix(loc, "/s/") {
		t.Fatal(loc)
	}
}

// TestPermalinkSecretsWarning: a long link carries the manifest; with secrets in it, the page
// says so, and does not block.
func TestPermalinkSecretsWarning(t *testing.T) {
	h := newServer(t)
	r := get(t, h, stateLink(t, api.State{Istio: engine.Version().Istio, Manifest: secretYAML}))
	if r.status != http.StatusOK || !strings.Contains(testid(r, "banner").Text(), "holds the whole manifest and its annotations, which look like they hold secrets (3 findings)") || testid(r, "results").Length() != 1 {
		t.Fatalf("%d %q", r.status, testid(r, "banner").Text())
	}
	// The page script's update of the same view carries it too.
	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(url.Values{"manifest": {secretYAML}, "action": {"apply"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set(partialHeader, "1")
	if r := do(t, h, req); !strings.Contains(r.body, "holds the whole manifest and its annotations") {
		t.Fatalf("fragment: %d", r.status)
	}
	r = get(t, h, stateLink(t, api.State{Istio: engine.Version().Istio, Manifest: testkit.Deployment}))
	if r.status != http.StatusOK || testid(r, "banner").Length() != 0 {
		t.Fatalf("a clean link: %d %q", r.status, testid(r, "banner").Text())
	}
}

// TestSecretTotalsBounded: the memo of scans answers as the scan does and never holds more than
// its bound.
func TestSecretTotalsBounded(t *testing.T) {
	var c secretTotals
	for i := range maxSecretTotals + 10 {
		m := testkit.Deployment + "# " + strconv.Itoa(i) + "\n"
		if i%1000 == 0 {
			m = secretYAML + "# " + strconv.Itoa(i) + "\n"
		}
		_, want := secrets.Scan([]byte(m))
		if got := c.total(m); got != want {
			t.Fatalf("%d: total %d, want %d", i, got, want)
		}
		if got := c.total(m); got != want {
			t.Fatalf("%d: remembered %d, want %d", i, got, want)
		}
		if len(c.m) > maxSecretTotals {
			t.Fatalf("%d entries", len(c.m))
		}
	}
}

// TestEmbedSnippetPublicURL: with --public-url the embed snippet's address is it, whatever the
// request's Host says.
func TestEmbedSnippetPublicURL(t *testing.T) {
	h := serverConfig(t, Config{PublicURL: "https://lab.example.com/"})
	req := httptest.NewRequest(http.MethodGet, stateLink(t, api.State{Istio: engine.Version().Istio, Manifest: testkit.Deployment}), nil)
	req.Host = "evil.example"
	r := do(t, h, req)
	if got := testid(r, "embed-snippet").Text(); !strings.HasPrefix(got, `<iframe src="https://lab.example.com/embed?s=`) || strings.Contains(r.body, "evil.example") {
		t.Fatalf("%d: %q", r.status, got)
	}
}

// TestPresetsHaveNoSecrets: the playground's own presets (and so the lab's pages) carry no
// warning: a finding in one is a false positive of the scan.
func TestPresetsHaveNoSecrets(t *testing.T) {
	presets := web.Presets()
	if len(presets) < 5 {
		t.Fatalf("%d presets", len(presets))
	}
	for _, p := range presets {
		if fs, n := secrets.Scan([]byte(p.Manifest)); n > 0 {
			t.Errorf("%s: %+v", p.ID, fs)
		}
	}
}

// TestShareStepSecrets: an annotation step's value is scanned too — by the API, the form and the
// long link's warning — and redacted with the manifest.
func TestShareStepSecrets(t *testing.T) {
	const token = "Zq8vR2mXk4TbW9yLp3NcA7hJ" // made up
	links := &countingLinks{memLinks: newMemLinks()}
	h := serverConfig(t, Config{Links: links})
	steps := []input.Step{{Key: "sidecar.istio.io/proxyCPU", Value: "200m"}, {Key: "example.com/build-token", Value: token}}
	req := api.ShareRequest{InjectRequest: api.InjectRequest{Manifest: testkit.Deployment, Steps: steps}}

	r := postShareAPI(t, h, req, nil)
	var sec api.SecretsResponse
	if r.status != http.StatusUnprocessableEntity || json.Unmarshal([]byte(r.body), &sec) != nil || sec.Total != 1 ||
		sec.Secrets[0].Step != 2 || sec.Secrets[0].Kind != secrets.HighEntropy || strings.Contains(r.body, token) || links.puts.Load() != 0 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	req.Redact = true
	r = postShareAPI(t, h, req, nil)
	var ok api.ShareResponse
	if r.status != http.StatusCreated || json.Unmarshal([]byte(r.body), &ok) != nil {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if st := storedState(t, h, ok.ID); st.Manifest != testkit.Deployment || len(st.Steps) != 2 || st.Steps[0] != steps[0] || st.Steps[1].Value != secrets.Redacted {
		t.Fatalf("stored: %+v", st)
	}

	js, _ := json.Marshal(steps)
	page := do(t, h, shareRequest(url.Values{"manifest": {testkit.Deployment}, "steps": {string(js)}}))
	if page.status != http.StatusOK || testid(page, "share-secret-where").Text() != "annotation step 2" || strings.Contains(testid(page, "share-secrets-list").Text(), token) {
		t.Fatalf("%d %q", page.status, testid(page, "share-secret-where").Text())
	}
	link := get(t, h, stateLink(t, api.State{Istio: engine.Version().Istio, Manifest: testkit.Deployment, Steps: steps}))
	if !strings.Contains(testid(link, "banner").Text(), "(1 finding)") {
		t.Fatalf("long link: %q", testid(link, "banner").Text())
	}
}

// shareRedacted shares req through the API with Redact set and returns the state stored (and
// its JSON), with the link's id.
func shareRedacted(t *testing.T, h http.Handler, req api.ShareRequest) (storedLink, string) {
	t.Helper()
	req.Redact = true
	r := postShareAPI(t, h, req, nil)
	var ok api.ShareResponse
	if r.status != http.StatusCreated || json.Unmarshal([]byte(r.body), &ok) != nil {
		t.Fatalf("redact: %d %s", r.status, r.body)
	}
	st := storedState(t, h, ok.ID)
	js, _ := json.Marshal(st)
	return storedLink{State: st, ID: ok.ID}, string(js)
}

// storedLink is a state stored behind a link, and the link's id.
type storedLink struct {
	api.State
	ID string
}

// TestShareSettingsSecrets: the settings a state carries are scanned too — an install option's
// value, the install overlay, the namespace's labels — by the API, the form and the long link's
// warning, and redacted with the manifest; a state without any is not held up.
func TestShareSettingsSecrets(t *testing.T) {
	const awsKeyID = "AKIAZ52HGXYRN4WBTEST" // made up
	links := &countingLinks{memLinks: newMemLinks()}
	h := serverConfig(t, Config{Links: links})
	settings := engine.Settings{
		Install: engine.InstallOptions{
			Set:     []string{"values.global.proxy.holdApplicationUntilProxyStarts=true", "meshConfig.defaultConfig.proxyMetadata.AWS_ACCESS_KEY_ID=" + awsKeyID},
			Overlay: "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nspec:\n  meshConfig:\n    defaultConfig:\n      proxyMetadata:\n        DB_PASSWORD: hunter2\n",
		},
		Namespace: engine.Namespace{Name: "shop", Labels: map[string]string{"istio-injection": "enabled", "aws": awsKeyID}},
	}
	req := api.ShareRequest{InjectRequest: api.InjectRequest{Manifest: testkit.Deployment, Settings: settings}}
	if r := get(t, h, stateLink(t, api.State{Istio: engine.Version().Istio, Manifest: testkit.Deployment, Settings: settings})); r.status != http.StatusOK {
		t.Fatalf("the settings do not load: %d", r.status)
	}

	r := postShareAPI(t, h, req, nil)
	var sec api.SecretsResponse
	if r.status != http.StatusUnprocessableEntity || json.Unmarshal([]byte(r.body), &sec) != nil || sec.Total != 3 ||
		strings.Contains(r.body, awsKeyID) || strings.Contains(r.body, "hunter2") || links.puts.Load() != 0 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	var where []string
	for _, f := range sec.Secrets {
		where = append(where, f.Setting+"/"+f.Path)
	}
	if want := []string{"install.set/meshConfig.defaultConfig.proxyMetadata.AWS_ACCESS_KEY_ID", "install.overlay/spec.meshConfig.defaultConfig.proxyMetadata.DB_PASSWORD", "namespace.labels/aws"}; !slices.Equal(where, want) {
		t.Fatalf("findings at %q, want %q", where, want)
	}

	st, js := shareRedacted(t, h, req)
	if strings.Contains(js, awsKeyID) || strings.Contains(js, "hunter2") || st.Settings.Install.Set[0] != settings.Install.Set[0] ||
		st.Settings.Namespace.Labels["istio-injection"] != "enabled" || st.Settings.Namespace.Labels["aws"] != "redacted" {
		t.Fatalf("stored: %s", js)
	}
	if page := get(t, h, "/s/"+st.ID); page.status != http.StatusOK {
		t.Fatalf("the redacted link: %d %s", page.status, testid(page, "error").Text())
	}

	page := do(t, h, shareRequest(url.Values{"manifest": {testkit.Deployment}, "set": {strings.Join(settings.Install.Set, "\n")}}))
	if page.status != http.StatusOK || testid(page, "share-secret-where").Text() != "install option 2" || strings.Contains(testid(page, "share-secrets-list").Text(), awsKeyID) {
		t.Fatalf("%d %q", page.status, testid(page, "share-secret-where").Text())
	}
	link := get(t, h, stateLink(t, api.State{Istio: engine.Version().Istio, Manifest: testkit.Deployment, Settings: settings}))
	if !strings.Contains(testid(link, "banner").Text(), "(3 findings)") {
		t.Fatalf("long link: %q", testid(link, "banner").Text())
	}
	settings.Install.Set, settings.Install.Overlay, settings.Namespace.Labels = settings.Install.Set[:1], "", map[string]string{"istio-injection": "enabled"}
	req = api.ShareRequest{InjectRequest: api.InjectRequest{Manifest: testkit.Deployment, Settings: settings}}
	if r := postShareAPI(t, h, req, nil); r.status != http.StatusCreated {
		t.Fatalf("settings without a secret: %d %s", r.status, r.body)
	}
}
