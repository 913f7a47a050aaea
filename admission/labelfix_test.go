package admission

import (
	"errors"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestLabelInsteadOfAnnotation: the annotation moves to the pod template's labels in the
// documents that have it without the label; the others stay byte for byte; nothing to move is
// an error.
func TestLabelInsteadOfAnnotation(t *testing.T) {
	svc := "apiVersion: v1\nkind: Service\nmetadata:\n  name: s   # a comment\nspec:\n  ports: [{port: 80}]\n"
	deploy := `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels:
        app: web # the app
      annotations:
        sidecar.istio.io/inject: "true"
    spec:
      containers:
      - name: web
        image: nginx
`
	pod := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations: {sidecar.istio.io/inject: \"true\", a: b}\nspec:\n  containers: [{name: a, image: nginx}]\n"
	labelled := strings.Replace(deploy, "app: web # the app", "app: web\n        sidecar.istio.io/inject: \"true\"", 1)
	in := svc + "---\n" + deploy + "---\n" + pod + "---\n" + labelled
	out, err := LabelInsteadOfAnnotation([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(string(out), "---\n")
	if len(docs) != 4 || docs[0] != svc || docs[3] != labelled {
		t.Fatalf("the untouched documents changed:\n%s", out)
	}
	check := func(doc string, path ...string) {
		t.Helper()
		var m map[string]any
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatal(err)
		}
		meta := m
		for _, k := range path {
			meta = meta[k].(map[string]any)
		}
		labels, _ := meta["labels"].(map[string]any)
		anns, _ := meta["annotations"].(map[string]any)
		if labels["sidecar.istio.io/inject"] != "true" || anns["sidecar.istio.io/inject"] != nil {
			t.Errorf("labels %v, annotations %v", labels, anns)
		}
	}
	check(docs[1], "spec", "template", "metadata")
	check(docs[2], "metadata")
	if !strings.Contains(docs[1], "# the app") || strings.Contains(docs[1], "annotations") {
		t.Errorf("the comment should stay and the empty annotations go:\n%s", docs[1])
	}
	if !strings.Contains(docs[2], "a: b") {
		t.Errorf("the Pod's other annotation is gone:\n%s", docs[2])
	}
	// The result reads as the same workloads, with the label.
	if _, err := LabelInsteadOfAnnotation(out); !errors.Is(err, ErrNothingToMove) {
		t.Fatalf("twice: %v", err)
	}
	if _, err := LabelInsteadOfAnnotation([]byte(svc)); !errors.Is(err, ErrNothingToMove) {
		t.Fatalf("nothing to move: %v", err)
	}
	falseAnn := strings.Replace(deploy, `sidecar.istio.io/inject: "true"`, `sidecar.istio.io/inject: "false"`, 1)
	if _, err := LabelInsteadOfAnnotation([]byte(falseAnn)); !errors.Is(err, ErrNothingToMove) {
		t.Fatalf("an annotation saying false: %v", err)
	}
}
