package explain

import (
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine"
)

// TestInputWords: a YAML or typing error of the manifest is said once, in words, with where it
// is; the parser's text is kept as details. Other errors pass as they are.
func TestInputWords(t *testing.T) {
	cases := []struct {
		e              engine.InputError
		summary, avoid string
	}{
		{engine.InputError{Doc: 1, Line: 13, Field: "manifest", Msg: "error converting YAML to JSON: yaml: line 5: mapping values are not allowed in this context"},
			"document 1, line 13: a mapping value is not allowed here — check the indentation", "converting"},
		{engine.InputError{Doc: 2, Line: 4, Field: "manifest", Msg: "error converting YAML to JSON: yaml: line 4: found character that cannot start any token"},
			"document 2, line 4: this character cannot start a value — YAML does not allow tabs", "token"},
		{engine.InputError{Doc: 1, Line: 1, Field: "manifest", Msg: "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal number into Go struct field PodSpec.spec.containers of type []v1.Container"},
			"document 1, line 1: spec.containers must be a list, not a number", "Go struct"},
		{engine.InputError{Doc: 1, Line: 2, Field: "manifest", Msg: "error converting YAML to JSON: yaml: line 2: something new"},
			"document 1, line 2: something new", "converting"},
	}
	for _, c := range cases {
		got := English.Input(&c.e)
		if !strings.HasPrefix(got.Summary, c.summary) || strings.Contains(got.Summary, c.avoid) {
			t.Errorf("%q: summary %q, want it to start with %q and not say %q", c.e.Msg, got.Summary, c.summary, c.avoid)
		}
		if got.Details != c.e.Msg {
			t.Errorf("%q: details %q, want the parser's text", c.e.Msg, got.Details)
		}
		if strings.Count(got.Summary, "line") > 1 {
			t.Errorf("%q: the line is said more than once: %q", c.e.Msg, got.Summary)
		}
	}
	// Not about the manifest's text: unchanged, no details.
	other := engine.InputError{Field: `annotation "sidecar.istio.io/proxyCPU"`, Msg: `invalid value "x"`}
	if got := English.Input(&other); got.Summary != other.Error() || got.Details != "" {
		t.Errorf("an annotation error: %+v", got)
	}
}
