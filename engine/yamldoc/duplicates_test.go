package yamldoc

import (
	"reflect"
	"testing"
)

// TestDuplicateKeys: keys written twice in one mapping, at any depth (a list item by its name or
// position, an annotation's quoted key), with the last value, which the reader keeps and where
// the path is located; the same key in two mappings is no duplicate, nor is text that is not
// YAML.
func TestDuplicateKeys(t *testing.T) {
	const text = `apiVersion: apps/v1
kind: Deployment
spec:
  replicas: 1
  replicas: 3
  template:
    metadata:
      annotations:
        sidecar.istio.io/inject: "true"
        sidecar.istio.io/inject: "false"
    spec:
      containers:
      - name: app
        image: nginx
        image: nginx:1.27
        image: nginx:1.28
      - ports: []
        ports:
        - containerPort: 80
      - name: other
        image: nginx
`
	want := []Duplicate{
		{Path: "spec.replicas", Lines: []int{4, 5}, Kept: "3", Scalar: true},
		{Path: `spec.template.metadata.annotations["sidecar.istio.io/inject"]`, Lines: []int{9, 10}, Kept: "false", Scalar: true},
		{Path: "spec.template.spec.containers[app].image", Lines: []int{14, 15, 16}, Kept: "nginx:1.28", Scalar: true},
		{Path: "spec.template.spec.containers[1].ports", Lines: []int{17, 18}},
	}
	if got := DuplicateKeys(text); !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	// The path is found where the reader takes its value: the last key.
	for _, d := range want {
		if l := Locate(text, d.Path); l.Line != d.Lines[len(d.Lines)-1] {
			t.Errorf("%s located on line %d, want %d", d.Path, l.Line, d.Lines[len(d.Lines)-1])
		}
	}
	for _, none := range []string{"a: 1\nb:\n  a: 2\n", "a: [\n", ""} {
		if got := DuplicateKeys(none); len(got) != 0 {
			t.Errorf("%q: %+v", none, got)
		}
	}
}
