package diff

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/sidecarlab/sidecarlab/i18n"
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
			for _, ch := range Values(decode(t, c.a), decode(t, c.b)) {
				got = append(got, ch.Line(i18n.For(i18n.Default).T))
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

func TestIptablesFlagNames(t *testing.T) {
	var got []string
	for _, ch := range Values(decode(t, "a: [istio-iptables, -p, '1']"), decode(t, "a: [istio-iptables, -p, '1', -o, '2', --redirect-dns]")) {
		got = append(got, ch.Flag+" "+ch.FlagName)
	}
	want := []string{"-o istio-local-outbound-ports-exclude", "--redirect-dns redirect-dns"}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("(-want +got)\n%s", d)
	}
}
