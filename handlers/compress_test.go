package handlers

import (
	"compress/flate"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestCompressedAnswers: an answer asked for gzip or deflate comes compressed, and the standard
// library's readers read back exactly the uncompressed answer; without Accept-Encoding it is plain.
func TestCompressedAnswers(t *testing.T) {
	h := newServer(t)
	get := func(enc string) (*http.Response, string) {
		req := httptest.NewRequest(http.MethodGet, "/api/v1/annotations", nil)
		if enc != "" {
			req.Header.Set("Accept-Encoding", enc)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		res := rec.Result()
		b, _ := io.ReadAll(res.Body)
		return res, string(b)
	}
	plainRes, plain := get("")
	if plainRes.Header.Get("Content-Encoding") != "" || !strings.HasPrefix(plain, "[") {
		t.Fatalf("no Accept-Encoding: Content-Encoding %q", plainRes.Header.Get("Content-Encoding"))
	}
	for _, enc := range []string{"gzip", "deflate"} {
		res, body := get(enc)
		if res.Header.Get("Content-Encoding") != enc {
			t.Fatalf("%s: Content-Encoding %q", enc, res.Header.Get("Content-Encoding"))
		}
		var r io.Reader
		if enc == "gzip" {
			zr, err := gzip.NewReader(strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			r = zr
		} else {
			r = flate.NewReader(strings.NewReader(body))
		}
		got, err := io.ReadAll(r)
		if err != nil {
			t.Fatalf("%s: %v", enc, err)
		}
		if string(got) != plain || len(body) >= len(plain) {
			t.Fatalf("%s: %d bytes compressed to %d, read back equal: %v", enc, len(plain), len(body), string(got) == plain)
		}
	}
}
