package secrets

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"

	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

// variant is one entry of the secret corpus (internal/testkit/secretvariants.yaml).
type variant = testkit.SecretVariant

func loadVariants(t *testing.T) []variant {
	t.Helper()
	vs, err := testkit.SecretVariants()
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) < 60 {
		t.Fatalf("only %d variants", len(vs))
	}
	return vs
}

// settings are the settings a place gives, with a manifest also as the install overlay and as
// a mesh part (both are read as a manifest is): the settings' own paths.
func placeSettings(p testkit.SecretPlace) []Settings {
	var out []Settings
	if p.Set != nil || p.Labels != nil || p.Overlay != "" || p.Mesh != nil {
		s := Settings{Set: p.Set, Labels: p.Labels, Overlay: p.Overlay}
		for _, name := range []string{"injectorConfig", "values", "meshConfig"} {
			if text, ok := p.Mesh[name]; ok {
				s.Mesh = append(s.Mesh, MeshPart{Name: name, Text: text})
			}
		}
		out = append(out, s)
	}
	if p.Manifest != "" {
		out = append(out, Settings{Overlay: p.Manifest}, Settings{Mesh: []MeshPart{{Name: "meshConfig", Text: p.Manifest}}})
	}
	return out
}

// TestVariants: each variant's secret is found wherever it is stored (the manifest, a step, the
// settings), never echoed, and redacted: only its bytes replaced (unless the variant says it
// cannot be: an escape, a continued line), nothing left to find, the manifest still parsing to
// the same tree but for the values that held it. Each near miss is not flagged on the same
// paths and comes back from redaction unchanged.
func TestVariants(t *testing.T) {
	for _, v := range loadVariants(t) {
		t.Run(v.Name, func(t *testing.T) {
			if v.Secret == "" {
				t.Fatal("no secret")
			}
			exact := v.Exact == nil || *v.Exact
			places := 0
			if m := v.Found.Manifest; m != "" {
				places++
				checkManifest(t, v, m, exact)
			}
			if st := v.Found.Step; st != nil {
				places++
				checkStep(t, v, Step{Key: st.Key, Value: st.Value}, exact)
			}
			for _, s := range placeSettings(v.Found) {
				places++
				checkSettings(t, v, s, exact)
			}
			if places == 0 {
				t.Fatal("the variant holds nothing")
			}
			nearPlaces := 0
			if m := v.Near.Manifest; m != "" {
				nearPlaces++
				if fs, n := Scan([]byte(m)); n != 0 {
					t.Errorf("near miss flagged: %+v", fs)
				}
				if red, err := Redact([]byte(m)); err != nil || red != m {
					t.Errorf("near miss redacted (err %v):\n%s", err, red)
				}
			}
			if st := v.Near.Step; st != nil {
				nearPlaces++
				steps := []Step{{Key: st.Key, Value: st.Value}}
				if fs := ScanSteps(steps); len(fs) != 0 {
					t.Errorf("near-miss step flagged: %+v", fs)
				}
				if red := RedactSteps(steps); red[0] != steps[0] {
					t.Errorf("near-miss step redacted: %+v", red)
				}
			}
			for _, s := range placeSettings(v.Near) {
				nearPlaces++
				if fs := ScanSettings(s); len(fs) != 0 {
					t.Errorf("near-miss settings flagged: %+v", fs)
				}
				if red, err := RedactSettings(s); err != nil || !settingsEqual(red, s) {
					t.Errorf("near-miss settings redacted (err %v): %+v", err, red)
				}
			}
			if nearPlaces == 0 {
				t.Fatal("the variant has no near miss")
			}
		})
	}
}

func settingsEqual(a, b Settings) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

func checkFindings(t *testing.T, v variant, where string, fs []Finding) {
	t.Helper()
	if len(fs) == 0 {
		t.Errorf("%s: nothing found", where)
		return
	}
	if v.Kind != "" && !slices.ContainsFunc(fs, func(f Finding) bool { return f.Kind == Kind(v.Kind) }) {
		t.Errorf("%s: no %s finding: %+v", where, v.Kind, fs)
	}
	for _, f := range fs {
		if strings.Contains(f.Excerpt+f.Path, v.Secret) {
			t.Errorf("%s: a finding shows the secret: %+v", where, f)
		}
	}
}

func checkManifest(t *testing.T, v variant, in string, exact bool) {
	t.Helper()
	var orig yaml.Node
	if err := yaml.Unmarshal([]byte(in), &orig); err != nil {
		t.Fatalf("the variant does not parse: %v", err)
	}
	if !strings.Contains(in, v.Secret) && !holds(&orig, v.Secret) {
		t.Fatalf("the variant does not hold its secret")
	}
	fs, _ := Scan([]byte(in))
	checkFindings(t, v, "manifest", fs)
	red, err := Redact([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.ReplaceAll(in, v.Secret, Redacted); exact && red != want {
		t.Errorf("Redact changed more than the secret's bytes:\n%s\nwant\n%s", red, want)
	}
	if strings.Contains(red, v.Secret) {
		t.Errorf("redacted, the secret is left:\n%s", red)
	}
	var got yaml.Node
	if err := yaml.Unmarshal([]byte(red), &got); err != nil {
		t.Fatalf("redacted, it does not parse: %v\n%s", err, red)
	}
	if holds(&got, v.Secret) {
		t.Errorf("redacted, a value still decodes to the secret:\n%s", red)
	}
	if d := sameBut(&orig, &got, v.Secret); d != "" {
		t.Errorf("redacted, the manifest reads differently: %s\n%s", d, red)
	}
	if fs, n := Scan([]byte(red)); n != 0 {
		t.Errorf("redacted, findings are left: %+v\n%s", fs, red)
	}
}

// holds says whether a scalar (as YAML decodes it) or a comment under n holds s.
func holds(n *yaml.Node, s string) bool {
	if strings.Contains(n.Value+n.HeadComment+n.LineComment+n.FootComment, s) {
		return true
	}
	return slices.ContainsFunc(n.Content, func(c *yaml.Node) bool { return holds(c, s) })
}

// sameBut says how got differs from want other than in the values that held secret, which
// must be Redacted or their value with secret replaced ("" when it does not).
func sameBut(want, got *yaml.Node, secret string) string {
	if want.Kind != got.Kind || len(want.Content) != len(got.Content) {
		return "the shape of " + want.Value + " changed"
	}
	if want.Kind == yaml.ScalarNode && want.Value != got.Value {
		if !strings.Contains(want.Value, secret) || (got.Value != Redacted && got.Value != strings.ReplaceAll(want.Value, secret, Redacted)) {
			return want.Value + " became " + got.Value
		}
	}
	for i := range want.Content {
		if d := sameBut(want.Content[i], got.Content[i], secret); d != "" {
			return d
		}
	}
	return ""
}

func checkStep(t *testing.T, v variant, st Step, exact bool) {
	t.Helper()
	steps := []Step{{Key: "sidecar.istio.io/proxyCPU", Value: "100m"}, st}
	fs := ScanSteps(steps)
	checkFindings(t, v, "step", fs)
	for _, f := range fs {
		if f.Step != 2 {
			t.Errorf("a finding in step %d, want 2: %+v", f.Step, f)
		}
	}
	red := RedactSteps(steps)
	if red[0] != steps[0] {
		t.Errorf("the step without a secret was redacted: %+v", red[0])
	}
	got := red[1].Value
	if strings.Contains(got, v.Secret) {
		t.Errorf("redacted, the step keeps the secret: %q", got)
	}
	if exact && got != Redacted && got != strings.ReplaceAll(st.Value, v.Secret, Redacted) {
		t.Errorf("redacted step %q, want %q or the secret's bytes replaced", got, Redacted)
	}
	if fs := ScanSteps(red); len(fs) != 0 {
		t.Errorf("redacted, step findings are left: %+v", fs)
	}
}

func checkSettings(t *testing.T, v variant, s Settings, exact bool) {
	t.Helper()
	fs := ScanSettings(s)
	checkFindings(t, v, "settings", fs)
	for _, f := range fs {
		if f.Setting == "" {
			t.Errorf("a settings finding names no setting: %+v", f)
		}
	}
	red, err := RedactSettings(s)
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(red)
	if strings.Contains(string(js), v.Secret) {
		t.Errorf("redacted, the settings keep the secret: %s", js)
	}
	if exact {
		if red.Overlay != strings.ReplaceAll(s.Overlay, v.Secret, Redacted) {
			t.Errorf("redacted overlay:\n%s", red.Overlay)
		}
		for i, p := range red.Mesh {
			if p.Text != strings.ReplaceAll(s.Mesh[i].Text, v.Secret, Redacted) {
				t.Errorf("redacted mesh part %s:\n%s", p.Name, p.Text)
			}
		}
	}
	if fs := ScanSettings(red); len(fs) != 0 {
		t.Errorf("redacted, settings findings are left: %+v", fs)
	}
}
