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
