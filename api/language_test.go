package api

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSetSentencesAside: sentence fields holding text are set aside by their path; the same names
// holding data (a fix with steps) are walked into, and every other field stays.
func TestSetSentencesAside(t *testing.T) {
	var v any
	if err := json.Unmarshal([]byte(`{"findings":[{"check":"c","message":"m","fix":{"text":"t","steps":[{"key":"k"}]}}],
		"reasons":{"injectReasons":["a","b"]},"error":{"status":422,"message":"e","line":3}}`), &v); err != nil {
		t.Fatal(err)
	}
	words := SetSentencesAside(v)
	wantWords := map[string]any{".findings[0].message": "m", ".findings[0].fix.text": "t", ".reasons.injectReasons": []any{"a", "b"}, ".error.message": "e"}
	if d := cmp.Diff(wantWords, words); d != "" {
		t.Errorf("sentences (-want +got):\n%s", d)
	}
	var want any
	_ = json.Unmarshal([]byte(`{"findings":[{"check":"c","fix":{"steps":[{"key":"k"}]}}],"reasons":{},"error":{"status":422,"line":3}}`), &want)
	if d := cmp.Diff(want, v); d != "" {
		t.Errorf("data (-want +got):\n%s", d)
	}
}
