package engine

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

func decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := yaml.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestDiffValues(t *testing.T) {
	cases := []struct {
		name, a, b string
		want       []string
	}{
		{"equal", "a: 1", "a: 1", nil},
		{"map key added, removed, changed", "a: 1\nb: 2\nc: x", "a: 1\nc: z\nd: [1]",
			[]string{"- b: 2", "~ c: x → z", "+ d: [1]"}},
		{"odd keys are quoted", "annotations: {}", "annotations: {sidecar.istio.io/status: x}",
			[]string{`+ annotations["sidecar.istio.io/status"]: x`}},
		{"named list by name", "containers: [{name: app, image: a}, {name: sc, image: s}]", "containers: [{name: app, image: b}, {name: sc, image: s}]",
			[]string{"~ containers[app].image: a → b"}},
		{"named element added and removed", "env: [{name: A, value: '1'}]", "env: [{name: B, value: '1'}]",
			[]string{`- env[A]: {"name":"A","value":"1"}`, `+ env[B]: {"name":"B","value":"1"}`}},
		{"put first reads as one move", "c: [{name: a}, {name: b}, {name: p}]", "c: [{name: p}, {name: a}, {name: b}]",
			[]string{"↕ c[p]: moved from position 3 to 1"}},
		{"two swapped: the one put first moved", "c: [{name: app}, {name: p}]", "c: [{name: p}, {name: app}]",
			[]string{"↕ c[p]: moved from position 2 to 1"}},
		{"move to a sibling list keeps field diffs", "spec: {containers: [{name: app}, {name: p, image: x}]}", "spec: {containers: [{name: app}], initContainers: [{name: p, image: x, restartPolicy: Always}]}",
			[]string{"↕ spec.initContainers[p]: moved from spec.containers[p]", "+ spec.initContainers[p].restartPolicy: Always"}},
		{"a new named list is added element by element", "spec: {}", "spec: {volumes: [{name: a}, {name: b}]}",
			[]string{`+ spec.volumes[a]: {"name":"a"}`, `+ spec.volumes[b]: {"name":"b"}`}},
		{"scalar list insertion", "args: [a, b, z]", "args: [a, b, -o, '1', z]",
			[]string{"+ args[2]: -o", "+ args[3]: 1"}},
		{"scalar list replacement", "args: [a, '1', z]", "args: [a, '2', z]",
			[]string{"~ args[1]: 1 → 2"}},
		{"scalar list removal", "args: [a, b, c]", "args: [a, c]",
			[]string{"- args[1]: b"}},
		{"unnamed maps by position", "ports: [{containerPort: 1}, {containerPort: 2}]", "ports: [{containerPort: 1}]",
			[]string{`- ports[1]: {"containerPort":2}`}},
		{"duplicate names fall back to position", "l: [{name: a, v: 1}, {name: a, v: 2}]", "l: [{name: a, v: 1}, {name: a, v: 3}]",
			[]string{"~ l[1].v: 2 → 3"}},
		{"type change", "a: {b: 1}", "a: [1]", []string{`~ a: {"b":1} → [1]`}},
		{"istio-iptables args by flag", `args: [istio-iptables, -p, "15001", -x, "", -d, "15090", --log_output_level=default:info]`,
			`args: [istio-iptables, -p, "15001", -x, "", -d, "15090,15021", -o, "3306,6379", --log_output_level=default:info, --redirect-dns]`,
			[]string{"~ args[-d]: 15090 → 15090,15021", "+ args[-o]: 3306,6379", "+ args[--redirect-dns]: true"}},
		{"istio-iptables flag removed, order ignored", "args: [istio-iptables, -o, '1', -p, '2']", "args: [istio-iptables, -p, '2']",
			[]string{"- args[-o]: 1"}},
		{"a positional istio-iptables argument stays by position", "args: [istio-iptables, -p, '1', x, y]", "args: [istio-iptables, -p, '1', x, -o, '2', y]",
			[]string{"+ args[4]: -o", "+ args[5]: 2"}},
		{"another command stays by position", "args: [proxy, -o, '1']", "args: [proxy, -o, '2']",
			[]string{"~ args[2]: 1 → 2"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, ch := range DiffValues(decode(t, c.a), decode(t, c.b)) {
				got = append(got, ch.String())
			}
			if d := cmp.Diff(c.want, got); d != "" {
				t.Fatalf("(-want +got)\n%s", d)
			}
		})
	}
}

func TestFormatValue(t *testing.T) {
	cases := map[string]any{
		"x":             "x",
		`""`:            "",
		`"a\nb"`:        "a\nb",
		`" x"`:          " x",
		"1":             float64(1),
		"true":          true,
		"null":          nil,
		`{"a":[1,"b"]}`: map[string]any{"a": []any{float64(1), "b"}},
	}
	for want, v := range cases {
		if got := FormatValue(v); got != want {
			t.Errorf("FormatValue(%#v) = %q, want %q", v, got, want)
		}
	}
}

func TestDiffDocumentsSkipsErrors(t *testing.T) {
	a := []Document{Document{Index: 1}.withOutput("a: 1\n"), Document{Index: 2}.withOutput("a: 1\n")}
	b := []Document{{Index: 1, Error: &InputError{Msg: "x"}}, Document{Index: 2}.withOutput("a: 2\n")}
	got := DiffDocuments(a, b, "k=v")
	if len(got) != 1 || got[0].Doc != 2 || got[0].Cause != "k=v" {
		t.Fatalf("got %+v", got)
	}
}

// TestChangeBounds: a value too large or too deeply nested is left out of the change, with its
// size; an ordinary value is kept. Without the bound, an 18 KB request nesting 9,000 lists in an
// extra field was copied into every answer (and indented into a 162 MB JSON body).
func TestChangeBounds(t *testing.T) {
	e := testEngine(t)
	pod := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: a\n    image: nginx\n"
	cases := []struct {
		name  string
		extra string
		kept  bool
	}{
		{"deep", "x: " + strings.Repeat("[", 9000) + strings.Repeat("]", 9000) + "\n", false},
		{"large", "x: \"" + strings.Repeat("a", 40<<10) + "\"\n", false},
		{"ordinary", "x: [1, 2, {a: b}]\n", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tl, err := e.Timeline(t.Context(), []byte(pod+c.extra), nil, Settings{})
			if err != nil {
				t.Fatal(err)
			}
			var x *Change
			for i, ch := range changesOf(t, tl.Steps[0]) {
				if ch.Path == "x" {
					x = &changesOf(t, tl.Steps[0])[i]
				}
			}
			if x == nil || x.Kind != Removed {
				t.Fatalf("no removal of x among %d changes", len(changesOf(t, tl.Steps[0])))
			}
			if c.kept {
				if x.Old == nil || x.OldBytes != 0 {
					t.Fatalf("an ordinary value was left out: %+v", x)
				}
				return
			}
			if x.Old != nil || x.OldBytes < len(c.extra)/2 {
				t.Fatalf("old value kept or size wrong: old %v, %d bytes", x.Old != nil, x.OldBytes)
			}
			if b, _ := json.MarshalIndent(tl, "", "  "); len(b) > 1<<20 {
				t.Fatalf("the timeline's JSON is %d bytes", len(b))
			}
		})
	}
}

func TestIptablesFlagNames(t *testing.T) {
	var got []string
	for _, ch := range DiffValues(decode(t, "a: [istio-iptables, -p, '1']"), decode(t, "a: [istio-iptables, -p, '1', -o, '2', --redirect-dns]")) {
		got = append(got, ch.Flag+" "+ch.FlagName)
	}
	want := []string{"-o istio-local-outbound-ports-exclude", "--redirect-dns redirect-dns"}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("(-want +got)\n%s", d)
	}
}

// TestChangeCauseBounded: a change names its step with at most maxCauseValue bytes of the value
// (the whole of it is the row's Step); a short value is named whole. Before, a 250,000-byte
// proxyMetadata value was copied into the cause of each of the five fields it set.
func TestChangeCauseBounded(t *testing.T) {
	e := testEngine(t)
	long := "proxyMetadata: {X: " + strings.Repeat("é", 1000) + "}"
	for _, c := range []struct {
		value string
		want  string
	}{
		{"proxyMetadata: {X: z}", "proxy.istio.io/config=proxyMetadata: {X: z}"},
		{long, "proxy.istio.io/config=" + long[:maxCauseValue-1] + "…"}, // é is two bytes: cut at a character's start
	} {
		tl, err := e.Timeline(context.Background(), []byte(labDeployment), []Step{{Key: "proxy.istio.io/config", Value: c.value}}, Settings{})
		if err != nil {
			t.Fatal(err)
		}
		changes, err := tl.Steps[1].Changes(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(changes) == 0 {
			t.Fatal("the step changed nothing")
		}
		for _, ch := range changes {
			if ch.Cause != c.want {
				t.Errorf("%s: cause %.80q…, want %.80q…", ch.Path, ch.Cause, c.want)
			}
		}
	}
}
