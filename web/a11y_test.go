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

func TestTitleSegments(t *testing.T) {
	for title, want := range map[string][]string{
		"traffic.sidecar.istio.io/excludeOutboundPorts=3306,6379": {"traffic.", "sidecar.", "istio.", "io/", "excludeOutboundPorts=", "3306,", "6379"},
		// Before a space the space is the joint; a value's newlines are spaces on the page.
		"proxy.istio.io/config=concurrency: 2\nholdApplicationUntilProxyStarts: true": {"proxy.", "istio.", "io/", "config=", "concurrency: 2\nholdApplicationUntilProxyStarts: true"},
		// A decimal point is no joint; a dot between a digit and a letter is.
		"sidecar.istio.io/proxyCPU=0.5":  {"sidecar.", "istio.", "io/", "proxyCPU=", "0.5"},
		"a=1.x":                          {"a=", "1.", "x"},
		"Deployment/productpage":         {"Deployment/", "productpage"},
		"remove sidecar.istio.io/inject": {"remove sidecar.", "istio.", "io/", "inject"},
		"x=":                             {"x="},
		"=x":                             {"=", "x"},
		"::":                             {":", ":"},
		"":                               {""},
		"ラベル":                            {"ラベル"},
	} {
		got := titleSegments(title)
		if !slices.Equal(got, want) {
			t.Errorf("titleSegments(%q) = %q, want %q", title, got, want)
		}
		if strings.Join(got, "") != title {
			t.Errorf("titleSegments(%q) loses text: %q", title, got)
		}
	}
}
