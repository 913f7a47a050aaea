package web

import (
	"slices"
	"strings"
	"testing"
)

func TestPathSegments(t *testing.T) {
	for path, want := range map[string][]string{
		"spec.template.spec.containers[istio-proxy].lifecycle": {"spec.", "template.", "spec.", "containers", "[istio-proxy].", "lifecycle"},
		`metadata.annotations["sidecar.istio.io/proxyCPU"]`:    {"metadata.", "annotations", `["sidecar.`, "istio.", `io/proxyCPU"]`},
		"spec":       {"spec"},
		"[0].a":      {"[0].", "a"},
		"":           {""},
		"a..b[x][y]": {"a.", ".", "b", "[x]", "[y]"},
	} {
		got := pathSegments(path)
		if !slices.Equal(got, want) {
			t.Errorf("pathSegments(%q) = %q, want %q", path, got, want)
		}
		if strings.Join(got, "") != path {
			t.Errorf("pathSegments(%q) loses text: %q", path, got)
		}
	}
}
