package handlers

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/a-h/templ"
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

// TestRenderBuffers: a page is rendered into a buffer used again; what one render left in it
// (a page, a render that failed halfway) never reaches the next answer, and a buffer grown past
// maxRenderBuffer is not kept.
func TestRenderBuffers(t *testing.T) {
	page := func(s string, fail bool) templ.Component {
		return templ.ComponentFunc(func(_ context.Context, w io.Writer) error {
			if _, err := io.WriteString(w, s); err != nil {
				return err
			}
			if fail {
				return errors.New("halfway")
			}
			return nil
		})
	}
	answer := func(c templ.Component) (string, error) {
		rec := httptest.NewRecorder()
		err := render(rec, httptest.NewRequest(http.MethodGet, "/", nil), http.StatusOK, c)
		return rec.Body.String(), err
	}
	large := strings.Repeat("x", maxRenderBuffer+1)
	for i, c := range []struct {
		body string
		fail bool
	}{{"first", false}, {"half", true}, {large, false}, {"second", false}, {"third", false}} {
		got, err := answer(page(c.body, c.fail))
		switch {
		case c.fail && (err == nil || got != ""):
			t.Errorf("render %d: a failed render answered %q (%v)", i, got, err)
		case !c.fail && (err != nil || got != c.body):
			t.Errorf("render %d: answered %d bytes (%v), want %d", i, len(got), err, len(c.body))
		}
	}
	b := renderBuffers.Get().(*bytes.Buffer)
	if b.Cap() > maxRenderBuffer || b.Len() != 0 {
		t.Errorf("a kept buffer holds %d bytes of %d", b.Len(), b.Cap())
	}
}
