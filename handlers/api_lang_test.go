package handlers

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/web"

	"github.com/google/go-cmp/cmp"

	"github.com/sidecarlab/sidecarlab/api"
)

// inJapanese is whether s has a kana or a kanji.
func inJapanese(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool {
		return unicode.In(r, unicode.Hiragana, unicode.Katakana, unicode.Han)
	}) >= 0
}

// TestAPILanguageRule: the API's data is language-free and only its sentences follow the
// reader. The same request in English and in Japanese gives the same answer once the sentences
// are set aside — outputs and diffs included, with a line long enough to be cut, and an error's
// document, line and field — and the findings', lifecycles' and errors' messages are Japanese
// (Istio's own text stays as it is, in a sentence of ours).
func TestAPILanguageRule(t *testing.T) {
	h := newServer(t)
	long := strings.Repeat("x", web.MaxShownLine+100)
	manifest := strings.Replace(jobYAML, "  template:\n", "  template:\n    metadata:\n      annotations:\n        note: "+long+"\n", 1)
	post := func(lang string, req api.InjectRequest) (int, any) {
		t.Helper()
		b, _ := json.Marshal(req)
		r := httptest.NewRequest(http.MethodPost, "/api/v1/inject?include=output,timeline,findings,lifecycles,batch,admission,changes,unified", strings.NewReader(string(b)))
		r.Header.Set("Content-Type", "application/json")
		res := do(t, h, langRequest(r, lang))
		var v any
		if err := json.Unmarshal([]byte(res.body), &v); err != nil {
			t.Fatalf("%s: %v\n%.300s", lang, err, res.body)
		}
		return res.status, v
	}
	for _, c := range []struct {
		name   string
		req    api.InjectRequest
		status int
		worded []string // sentences that must be Japanese
	}{
		{"an answer", api.InjectRequest{Manifest: manifest}, http.StatusOK,
			[]string{".findings[0].message", ".lifecycles[0].start[0].what", ".lifecycles[0].verdicts[0].question"}},
		{"sidecarlab's own error", api.InjectRequest{Manifest: "  \n"}, http.StatusUnprocessableEntity,
			[]string{".error.message"}},
		{"Istio's error in a step", api.InjectRequest{Manifest: manifest, Steps: []input.Step{{Key: "sidecar.istio.io/proxyCPU", Value: "lots"}}}, http.StatusUnprocessableEntity,
			[]string{".error.message"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			enStatus, en := post("en", c.req)
			jaStatus, ja := post("ja", c.req)
			if enStatus != c.status || jaStatus != c.status {
				t.Fatalf("status %d in English, %d in Japanese; want %d", enStatus, jaStatus, c.status)
			}
			enWords, jaWords := api.SetSentencesAside(en), api.SetSentencesAside(ja)
			if d := cmp.Diff(en, ja); d != "" {
				t.Errorf("the data changed with the language (-en +ja):\n%s", d)
			}
			if d := cmp.Diff(slices.Sorted(maps.Keys(enWords)), slices.Sorted(maps.Keys(jaWords))); d != "" {
				t.Errorf("the sentences differ in where they are (-en +ja):\n%s", d)
			}
			for _, p := range c.worded {
				e, _ := enWords[p].(string)
				j, _ := jaWords[p].(string)
				if e == "" || j == e || !inJapanese(j) {
					t.Errorf("%s: %q in Japanese, %q in English", p, j, e)
				}
			}
		})
	}
}
