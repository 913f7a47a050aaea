package engine

import (
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"istio.io/istio/pkg/kube/inject"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

// objectMetaBefore is what prepareChunk did before objectMeta: Istio's reader, then, for a kind it
// does not know, the whole document parsed again for its type and name.
func objectMetaBefore(raw []byte) (runtime.Object, typeAndName, error) {
	obj, err := inject.FromRawToObject(raw)
	if runtime.IsNotRegisteredError(err) {
		var tm typeAndName
		if metaErr := yaml.Unmarshal(raw, &tm); metaErr != nil {
			return nil, tm, metaErr
		}
		return nil, tm, err
	}
	return obj, typeAndName{}, err
}

// sameAsBefore reports how objectMeta's answer for raw differs from objectMetaBefore's: the same
// object, the same error, and for a kind Istio's reader does not know the same type and name.
func sameAsBefore(t *testing.T, name string, raw []byte) {
	t.Helper()
	wantObj, wantMeta, wantErr := objectMetaBefore(raw)
	obj, meta, err := chunk{raw: raw}.objectMeta()
	if (wantErr == nil) != (err == nil) || (err != nil && err.Error() != wantErr.Error()) {
		t.Errorf("%s: error %v, want %v", name, err, wantErr)
		return
	}
	if runtime.IsNotRegisteredError(err) != runtime.IsNotRegisteredError(wantErr) {
		t.Errorf("%s: not registered: %v, want %v", name, runtime.IsNotRegisteredError(err), runtime.IsNotRegisteredError(wantErr))
	}
	if runtime.IsNotRegisteredError(wantErr) {
		if diff := cmp.Diff(wantMeta, meta); diff != "" {
			t.Errorf("%s: type and name (-want +got):\n%s", name, diff)
		}
	}
	if !reflect.DeepEqual(wantObj, obj) {
		t.Errorf("%s: object %#v, want %#v", name, obj, wantObj)
	}
}

// objectMetaCases are documents on every path of objectMeta.
var objectMetaCases = map[string]string{
	"deployment":               "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: a\n  namespace: b\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        image: i\n",
	"crd":                      "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: xs.example.com\nspec:\n  group: example.com\n",
	"custom resource":          "apiVersion: example.com/v1\nkind: X\nmetadata: {name: x, namespace: y}\nspec: {a: [1, 2]}\n",
	"json":                     `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "m"}, "data": {"a": "b"}}`,
	"no kind":                  "metadata:\n  name: a\n",
	"empty":                    "",
	"a comment":                "# nothing\n",
	"a list":                   "- a\n- b\n",
	"a scalar":                 "just text\n",
	"not YAML":                 "a: [b\n",
	"metadata a scalar":        "apiVersion: example.com/v1\nkind: X\nmetadata: 5\n",
	"metadata a scalar, known": "apiVersion: v1\nkind: Pod\nmetadata: 5\n",
	"name a number":            "apiVersion: example.com/v1\nkind: X\nmetadata:\n  name: 5\n",
	"name a number, known":     "apiVersion: v1\nkind: Pod\nmetadata:\n  name: 5\n",
	"kind a list":              "apiVersion: v1\nkind: [Pod]\n",
	"bad apiVersion":           "apiVersion: a/b/c\nkind: Pod\nmetadata:\n  name: p\n",
	"known, bad field":         "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers: 5\n",
	"unknown, odd spec":        "apiVersion: example.com/v1\nkind: X\nmetadata:\n  name: p\nspec:\n  containers: 5\n",
	"duplicate metadata":       "apiVersion: example.com/v1\nkind: X\nmetadata:\n  name: one\nmetadata:\n  name: two\n",
	"anchors":                  "apiVersion: example.com/v1\nkind: X\nmetadata: &m\n  name: a\nspec: *m\n",
	"list kind":                "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: p\n",
	"kind with quotes":         "apiVersion: \"v1\"\nkind: 'Pod'\nmetadata:\n  name: \"p\\\"q\"\n",
	"unversioned status":       "apiVersion: v1\nkind: Status\nmetadata: {}\n",
}

// TestObjectMeta: objectMeta answers as Istio's reader followed by a second parse for the type
// and name did, on every document of Istio's corpus and ours, on Istio's CustomResourceDefinitions
// and on documents that take each of its paths.
func TestObjectMeta(t *testing.T) {
	for name, doc := range objectMetaCases {
		sameAsBefore(t, name, []byte(doc))
	}
	files := corpusManifests(t)
	files = append(files, filepath.Join(testkit.IstioDir(t), "manifests/charts/base/files/crd-all.gen.yaml"))
	n := 0
	for _, f := range files {
		chunks, _ := splitDocuments(readFile(t, f))
		for i, c := range chunks {
			sameAsBefore(t, fmt.Sprintf("%s#%d", filepath.Base(f), i), c.raw)
			n++
		}
	}
	if n < 150 {
		t.Errorf("%d documents read, want Istio's corpus, ours and Istio's CRDs", n)
	}
}

// FuzzObjectMeta: on any document, objectMeta answers as before.
func FuzzObjectMeta(f *testing.F) {
	for _, doc := range objectMetaCases {
		f.Add(doc)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		sameAsBefore(t, "fuzzed", []byte(doc))
	})
}
