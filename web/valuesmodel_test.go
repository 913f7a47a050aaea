package web

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sidecarlab/sidecarlab/i18n"
)

// TestShowValue: values read as YAML; strings that would read as another type are quoted, others
// are not; JSON in a string is decoded and says so; long values fold; sizes stay sizes.
func TestShowValue(t *testing.T) {
	long := map[string]any{"name": "istio-proxy"}
	for _, k := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		long[k] = k
	}
	cases := []struct {
		name    string
		v       any
		omitted int
		want    Value
	}{
		{"plain string", "200m", 0, Value{Text: "200m"}},
		{"a string that reads as a bool is quoted", "false", 0, Value{Text: `"false"`}},
		{"a string that reads as a number is quoted", "8080", 0, Value{Text: `"8080"`}},
		{"a number is not", float64(8080), 0, Value{Text: "8080"}},
		{"JSON in a string", "{\"concurrency\":2,\"terminationDrainDuration\":\"30s\"}\n", 0,
			Value{Text: "concurrency: 2\nterminationDrainDuration: 30s", Block: true, Lines: 2, Note: "JSON in a string, shown as YAML"}},
		{"empty JSON object in a string", "{}\n", 0, Value{Text: "{}", Note: "JSON in a string, shown as YAML"}},
		{"not JSON", "{not json", 0, Value{Text: "'{not json'"}},
		{"a map", map[string]any{"postStart": map[string]any{"exec": map[string]any{"command": []any{"pilot-agent", "wait"}}}}, 0,
			Value{Text: "postStart:\n  exec:\n    command:\n    - pilot-agent\n    - wait", Block: true, Lines: 5}},
		{"JSON nested in a map", map[string]any{"sidecar.istio.io/status": `{"containers":["istio-proxy"]}`}, 0,
			Value{Text: "sidecar.istio.io/status:\n  containers:\n  - istio-proxy", Block: true, Lines: 3, Note: "JSON in strings shown as YAML"}},
		{"a long map folds", long, 0, Value{Text: "a: a\nb: b\nc: c\nd: d\ne: e\nf: f\ng: g\nname: istio-proxy", Block: true, Fold: true, Lines: 8, Name: "istio-proxy"}},
		{"an empty map", map[string]any{}, 0, Value{Text: "{}"}},
		{"left out for size", nil, 20000, Value{Text: "(20000 bytes of JSON, too large or too deeply nested to show here: see the YAML)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if d := cmp.Diff(c.want, ShowValue(c.v, c.omitted)); d != "" {
				t.Fatalf("(-want +got)\n%s", d)
			}
		})
	}
	// Huge values are cut: a line at maxValue characters, a block at maxBlockLines lines.
	if got := ShowValue(strings.Repeat("x", 1000), 0).Text; !strings.HasSuffix(got, "… (600 more characters: see the injected YAML)") {
		t.Errorf("long line: %q", got[len(got)-60:])
	}
	many := make([]any, 500)
	for i := range many {
		many[i] = "v"
	}
	if got := ShowValue(many, 0).Text; strings.Count(got, "\n") != maxBlockLines || !strings.HasSuffix(got, "… (420 more lines: see the injected YAML)") {
		t.Errorf("long block ends %q", got[len(got)-60:])
	}
	// A long map (a whole container): its largest fields give way, not the ones after them.
	env := make([]any, 60)
	for i := range env {
		env[i] = map[string]any{"name": fmt.Sprintf("E%d", i), "value": "v"}
	}
	container := map[string]any{"args": []any{"proxy", "sidecar"}, "env": env, "image": "proxyv2", "name": "istio-proxy",
		"resources": map[string]any{"requests": map[string]any{"cpu": "100m"}}, "volumeMounts": env[:30]}
	got := ShowValue(container, 0).Text
	for _, want := range []string{"args:\n- proxy\n- sidecar\n", "env:\n  … (120 more lines: see the injected YAML)\n", "image: proxyv2\n", "resources:\n  requests:\n    cpu: 100m\n", "volumeMounts:\n- name: E0"} {
		if !strings.Contains(got, want) {
			t.Errorf("a long container: %q is not shown whole in\n%s", want, got)
		}
	}
	if n := strings.Count(got, "\n") + 1; n > maxBlockLines {
		t.Errorf("a long container is shown in %d lines, more than %d", n, maxBlockLines)
	}
	// One that fits is shown whole.
	container["env"] = env[:3]
	if got := ShowValue(container, 0).Text; strings.Contains(got, "more lines") || !strings.Contains(got, "name: E2") {
		t.Errorf("a container that fits is cut:\n%s", got)
	}
}

// TestShowValueIn: the field diff's notes on a value in Japanese and Korean (a long value cut, a
// value too large to show, JSON in a string); a short plain value has none.
func TestShowValueIn(t *testing.T) {
	ja, ko := i18n.For("ja"), i18n.For("ko")
	if got := ShowValueIn(ja, strings.Repeat("x", 1000), 0).Text; !strings.HasSuffix(got, "…（残り600文字。注入後YAMLタブを参照してください）") {
		t.Errorf("ja long value: %q", got[maxValue:])
	}
	if got := ShowValueIn(ko, nil, 2048).Text; got != "(2 KiB 크기의 JSON입니다. 너무 크거나 너무 깊이 중첩되어 여기에 표시할 수 없습니다. YAML을 참조하십시오)" {
		t.Errorf("ko omitted: %q", got)
	}
	if got := ShowValueIn(ja, `{"a":1}`, 0); got.Note != "文字列内のJSONをYAMLで表示しています" || got.Text != "a: 1" {
		t.Errorf("ja JSON in a string: %+v", got)
	}
	if got := ShowValueIn(ja, "200m", 0); got.Note != "" || got.Text != "200m" {
		t.Errorf("ja plain value: %+v", got)
	}
	if missing := i18n.Missing(); len(missing) != 0 {
		t.Errorf("messages missing from the catalogs: %q", missing)
	}
}
