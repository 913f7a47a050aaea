package yamldoc

import (
	"regexp"
	"testing"
)

// TestPlainKey: plainKey is the regular expression ^[A-Za-z_][A-Za-z0-9_-]*$ it stands for.
func TestPlainKey(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)
	keys := []string{"", "a", "A", "_", "-", "0", "a0", "a-b", "a_b", "a.b", "a/b", "-a", "9a", "app", "sidecar.istio.io/inject",
		"é", "aé", "a b", "a\n", "kubectl.kubernetes.io/default-container", "z", "Z", "`", "{", "@", "[", "a[", "a:"}
	for c := 0; c < 256; c++ {
		keys = append(keys, string(rune(c)), "a"+string(rune(c)), string([]byte{byte(c)}), "a"+string([]byte{byte(c)}))
	}
	for _, k := range keys {
		if got, want := plainKey(k), re.MatchString(k); got != want {
			t.Errorf("plainKey(%q) = %v, the expression says %v", k, got, want)
		}
	}
}

// TestPathAt: a line names the innermost field that starts on it (a named list's element by its
// name, another list's by its index, a quoted key in brackets, a flow list whole), a line of a literal block its
// field, a line before any field or past the text nothing of its own, and text that is not YAML
// nothing.
func TestPathAt(t *testing.T) {
	const text = `# a comment
metadata:
  annotations:
    sidecar.istio.io/status: '{"a":1}'
spec:
  containers:
  - name: app
    args:
    - --x
    env:
    - name: PROXY_CONFIG
      value: |
        {"a": 1,
         "b": 2}
  ports: [80, 81]
`
	for line, want := range map[int]string{
		1:  "",
		2:  "metadata",
		4:  `metadata.annotations["sidecar.istio.io/status"]`,
		7:  "spec.containers[app].name",
		9:  "spec.containers[app].args[0]",
		11: "spec.containers[app].env[PROXY_CONFIG].name",
		12: "spec.containers[app].env[PROXY_CONFIG].value",
		14: "spec.containers[app].env[PROXY_CONFIG].value",
		15: "spec.ports",
	} {
		if got := PathAt(text, line); got != want {
			t.Errorf("line %d: %q, want %q", line, got, want)
		}
	}
	if got := PathAt("a: [", 1); got != "" {
		t.Errorf("not YAML: %q", got)
	}
}
