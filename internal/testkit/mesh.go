package testkit

import (
	"testing"

	"sigs.k8s.io/yaml"
)

// MeshList is a revision's istio-sidecar-injector and istio ConfigMaps, in istio-system, as
// `kubectl get configmap -o yaml` prints them (a List): the injector config, values and mesh
// config given, and the injector ConfigMap's labels (nil for none).
func MeshList(t testing.TB, revision, injectorConfig, values, mesh string, labels map[string]string) string {
	t.Helper()
	suffix := ""
	if revision != "" {
		suffix = "-" + revision
	}
	meta := func(name string, labels map[string]string) map[string]any {
		m := map[string]any{"name": name, "namespace": "istio-system"}
		if len(labels) > 0 {
			m["labels"] = labels
		}
		return m
	}
	items := []any{
		map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta("istio-sidecar-injector"+suffix, labels),
			"data": map[string]string{"config": injectorConfig, "values": values}},
		map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta("istio"+suffix, nil),
			"data": map[string]string{"mesh": mesh}},
	}
	b, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
