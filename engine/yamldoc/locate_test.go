package yamldoc

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// locateDoc has every shape a finding's path walks through: quoted keys with dots and slashes,
// a literal block holding YAML, a one-line JSON value, lists by name and by position, an alias.
const locateDoc = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  annotations:
    sidecar.istio.io/proxyCPU: 300m
spec:
  template:
    metadata:
      annotations:
        "sidecar.istio.io/inject": "yes"
        proxy.istio.io/config: |
          concurrency: 2
          tracing:
            samplingg: 10
          holdApplicationUntilProxyStart: true
        traffic.sidecar.istio.io/excludeOutboundPorts: &ports "1,2"
        example.com/copy: *ports
      labels:
        app: web
    spec:
      containers:
      - name: app
        image: nginx
        args: [--a, --b]
      - name: side
        image: busybox
`

const locateJSONValue = `kind: Pod
metadata:
  annotations:
    proxy.istio.io/config: '{"holdApplicationUntilProxyStart": true}'
spec:
  containers: []
`

// TestLocate: a path's key is found where the input has it (line and column of the key, or of a
// list item's first key), and a path the input lacks points at its nearest ancestor, inexactly.
func TestLocate(t *testing.T) {
	cases := []struct {
		name, doc, path string
		want            Location
	}{
		{"workload annotation with dots and a slash", locateDoc, `metadata.annotations["sidecar.istio.io/proxyCPU"]`, Location{6, 5, true, false}},
		{"quoted key", locateDoc, `spec.template.metadata.annotations["sidecar.istio.io/inject"]`, Location{11, 9, true, false}},
		{"a field inside a literal block", locateDoc, `spec.template.metadata.annotations["proxy.istio.io/config"].holdApplicationUntilProxyStart`, Location{16, 11, true, false}},
		{"a nested field inside a literal block", locateDoc, `spec.template.metadata.annotations["proxy.istio.io/config"].tracing.samplingg`, Location{15, 13, true, false}},
		{"a nested field a literal block lacks", locateDoc, `spec.template.metadata.annotations["proxy.istio.io/config"].tracing.nope`, Location{14, 11, false, true}},
		{"a block field the block lacks", locateDoc, `spec.template.metadata.annotations["proxy.istio.io/config"].nope`, Location{12, 9, false, true}},
		{"a field inside a one-line value", locateJSONValue, `metadata.annotations["proxy.istio.io/config"].holdApplicationUntilProxyStart`, Location{4, 5, false, true}},
		{"an alias", locateDoc, `spec.template.metadata.annotations["example.com/copy"]`, Location{18, 9, true, false}},
		{"a list item by name", locateDoc, `spec.template.spec.containers[side]`, Location{26, 9, true, false}},
		{"a field of a list item by name", locateDoc, `spec.template.spec.containers[side].image`, Location{27, 9, true, false}},
		{"list items by position", locateDoc, `spec.template.spec.containers[0].args[1]`, Location{25, 21, true, false}},
		{"a position past the list's end", locateDoc, `spec.template.spec.containers[0].args[2]`, Location{25, 9, false, false}},
		{"a container injection adds", locateDoc, `spec.template.spec.containers[istio-proxy].lifecycle`, Location{22, 7, false, false}},
		{"a list injection adds", locateDoc, `spec.template.spec.initContainers[istio-proxy]`, Location{21, 5, false, false}},
		{"an annotation a step set", locateDoc, `spec.template.metadata.annotations["sidecar.istio.io/proxyMemory"]`, Location{10, 7, false, false}},
		{"a missing metadata", locateJSONValue, `metadata.labels["sidecar.istio.io/inject"]`, Location{2, 1, false, false}},
		{"the whole document", locateDoc, "", Location{1, 1, true, false}},
		{"not YAML", "a: [", "a", Location{1, 1, false, false}},
		{"JSON", `{"kind": "Pod", "metadata": {"annotations": {"a.istio.io/b": "c"}}}`, `metadata.annotations["a.istio.io/b"]`, Location{1, 46, true, false}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, Locate(c.doc, c.path)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", c.path, diff)
			}
		})
	}
}

// TestLocateLineBreaks: the lines are "\n"-ended, as the documents' first lines and editors
// count them, although YAML also breaks lines at a lone CR, NEL, LS and PS.
func TestLocateLineBreaks(t *testing.T) {
	for _, c := range []struct {
		text, path string
		want       Location
	}{
		{"a: 1\nb: 2\n", "b", Location{2, 1, true, false}},
		{"a: 1\r\nb: 2\r\n", "b", Location{2, 1, true, false}},
		{"x: 0\na: |\r\n  b: 1\r\n", "a.b", Location{3, 3, true, false}},
		// YAML reads a lone CR as a line break: without it the text is one line, and a CR-ended
		// block is no block (the fuzzer's find: line 2 of a one-line text).
		{"a: |\r  b: 1", "a.b", Location{1, 1, false, false}},
		{"a: \"x\ry\"\nb: 2\n", "b", Location{2, 1, true, false}},
		{"---", "0", Location{1, 1, false, true}},
		{"a: 'x\u2028y\u0085z\u2029'\nb: 2\n", "b", Location{2, 1, true, false}},
	} {
		if got := Locate(c.text, c.path); got != c.want {
			t.Errorf("Locate(%q, %q) = %+v, want %+v", c.text, c.path, got, c.want)
		}
	}
	if got := newlineLines("é\r\xffz\r\n"); got != "é \xffz\r\n" {
		t.Errorf("newlineLines: %q (the bytes that are not line breaks must stay)", got)
	}
}

// FuzzLocate: any text and any path give a place inside the text (or its first line), never a
// panic.
func FuzzLocate(f *testing.F) {
	f.Add(locateDoc, `spec.template.metadata.annotations["proxy.istio.io/config"].tracing.samplingg`)
	f.Add(locateDoc, `spec.template.spec.containers[0].args[1]`)
	f.Add("a: |\n  b: 1\n", `a.b`)
	f.Add("a: &x [1]\nb: *x\n", `b[0]`)
	f.Add("a: [", `a["`)
	f.Add("a: |\r  b: 1", `a.b`)
	f.Fuzz(func(t *testing.T, text, path string) {
		l := Locate(text, path)
		lines := strings.Count(text, "\n") + 1
		if l.Line < 1 || l.Line > lines || l.Column < 1 {
			t.Fatalf("%+v outside a text of %d lines", l, lines)
		}
	})
}
