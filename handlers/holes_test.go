package handlers

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

// TestFormIsUTF8: bytes that are not UTF-8 in any form field or uploaded file are a 422 that
// names the field or file and the line. Before, all but three fields (and every file) were
// silently turned into U+FFFD by the permalink's JSON.
func TestFormIsUTF8(t *testing.T) {
	h := newServer(t)
	bad := "kind: Pod\nmetadata: {name: \xff\xfe}\n"
	for _, field := range []string{"set", "kubernetesVersion", "v:sidecar.istio.io/proxyCPU"} {
		form := url.Values{"manifest": {testkit.Deployment}, field: {"ok\n" + bad}}
		if field == "v:sidecar.istio.io/proxyCPU" {
			form.Set("add", "sidecar.istio.io/proxyCPU")
		}
		r := do(t, h, formRequest(form))
		if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, "UTF-8") || !strings.Contains(r.body, "line 3") {
			t.Errorf("field %s: status %d, want 422 naming UTF-8 and line 3: %.300s", field, r.status, r.body)
		}
	}
	upload := func(name, body string) response {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		fw, _ := mw.CreateFormFile("files", name)
		_, _ = fw.Write([]byte(body))
		_ = mw.WriteField("action", "upload")
		_ = mw.Close()
		req := httptest.NewRequest(http.MethodPost, "/", &buf)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		return do(t, h, req)
	}
	if r := upload("latin1.yaml", "# café in Latin-1: caf\xe9\n"+testkit.Deployment); r.status != http.StatusUnprocessableEntity ||
		!strings.Contains(r.body, "latin1.yaml") || !strings.Contains(r.body, "line 1") {
		t.Errorf("a Latin-1 upload: status %d, want 422 naming the file and line: %.300s", r.status, r.body)
	}
	if r := upload("ok.yaml", testkit.Deployment); r.status != http.StatusSeeOther {
		t.Errorf("a UTF-8 upload: %d", r.status)
	}
	if r := do(t, h, formRequest(url.Values{"manifest": {testkit.Deployment}, "set": {"values.global.proxy.holdApplicationUntilProxyStarts=true"}})); r.status != http.StatusSeeOther {
		t.Errorf("a UTF-8 form: %d", r.status)
	}
}

// TestRawOutputsOfARejectedState: the raw outputs of a state Istio rejects answer the same 422 as
// the page, with the document and line, never an empty 200.
func TestRawOutputsOfARejectedState(t *testing.T) {
	h := newServer(t)
	link := stateLink(t, api.State{Manifest: "a: [\n"})
	if r := get(t, h, link); r.status != http.StatusUnprocessableEntity {
		t.Fatalf("the page: %d", r.status)
	}
	for _, path := range []string{"/injected.yaml", "/diff.txt", "/repro.tar.gz", "/download"} {
		r := get(t, h, strings.Replace(link, "/?", path+"?", 1))
		if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.body, "document 1") {
			t.Errorf("%s: status %d, want 422 naming the document: %.200s", path, r.status, r.body)
		}
	}
	// state.json is the state itself, readable whatever Istio makes of it; an accepted state's
	// raw outputs are 200.
	if r := get(t, h, strings.Replace(link, "/?", "/state.json?", 1)); r.status != http.StatusOK {
		t.Errorf("state.json: %d", r.status)
	}
	if r := get(t, h, strings.Replace(stateLink(t, api.State{Manifest: testkit.Deployment}), "/?", "/injected.yaml?", 1)); r.status != http.StatusOK || r.body == "" {
		t.Errorf("an accepted state's injected.yaml: %d", r.status)
	}
}

// TestTruncatedLink: a long link whose tail was cut says so and points to the short link,
// instead of "it is not deflate-compressed"; a link that is garbage from the start does not.
func TestTruncatedLink(t *testing.T) {
	h := newServer(t)
	link := stateLink(t, api.State{Manifest: testkit.Deployment})
	for _, cut := range []int{10, 11, 40} {
		r := get(t, h, link[:len(link)-cut])
		if r.status != http.StatusBadRequest || !strings.Contains(r.body, "truncated") || !strings.Contains(r.body, "short link") {
			t.Errorf("cut by %d: status %d, want 400 saying the link is truncated: %.300s", cut, r.status, r.body)
		}
	}
	if r := get(t, h, "/?s=bm90LWRlZmxhdGUtYXQtYWxs"); r.status != http.StatusBadRequest || strings.Contains(r.body, "truncated") {
		t.Errorf("a link that is not a state: status %d: %.300s", r.status, r.body)
	}
}
