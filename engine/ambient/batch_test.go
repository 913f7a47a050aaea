package ambient

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sidecarlab/sidecarlab/engine"
)

// batchManifest is a Namespace labelled for ambient, a Deployment in it, one with hostNetwork
// there, one in another namespace, and a Service (no pods).
const batchManifest = `apiVersion: v1
kind: Namespace
metadata:
  name: shop
  labels: {istio.io/dataplane-mode: ambient}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: agent, namespace: shop}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      hostNetwork: true
      containers: [{name: agent, image: nginx}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: db, namespace: data}
spec:
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: db, image: postgres}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  selector: {app: web}
  ports: [{port: 80}]
`

// TestFillBatch: the batch's ambient column says whether each workload's pods join ambient, by
// Istio's selectors under the installation's CNI agent, with the namespace labels of the
// manifest's Namespace and of the request; it is empty where ambient is not in play and for a
// document without pods.
func TestFillBatch(t *testing.T) {
	eng, err := engine.New(context.Background(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	type cell struct{ Ambient, Rule string }
	rowsOf := func(set []string, ns engine.Namespace) []cell {
		t.Helper()
		s := engine.Settings{Install: engine.InstallOptions{Set: set}, Namespace: ns}
		in, err := eng.Inject(context.Background(), []byte(batchManifest), nil, s)
		if err != nil {
			t.Fatal(err)
		}
		install, err := eng.Install(context.Background(), s.Install)
		if err != nil {
			t.Fatal(err)
		}
		cni, err := InstallCNI(install)
		if err != nil {
			t.Fatal(err)
		}
		rows := engine.Batch(in.Documents, in.Findings)
		cni.FillBatch(rows, ns, engine.NamespaceLabels(in.Documents))
		var out []cell
		for _, r := range rows {
			if r.Pod() != nil {
				t.Errorf("row %d keeps its pod after FillBatch", r.Doc)
			}
			out = append(out, cell{r.Ambient, r.AmbientRule})
		}
		return out
	}
	cases := []struct {
		name string
		set  []string
		ns   engine.Namespace
		want []cell
	}{
		{"the ambient profile", []string{"profile=ambient"}, engine.Namespace{},
			[]cell{{}, {"yes", "selector"}, {"no", "host-network"}, {"no", "no-selector"}, {}}},
		{"the ambient profile, the request's namespace labelled too", []string{"profile=ambient"},
			engine.Namespace{Labels: map[string]string{"istio.io/dataplane-mode": "ambient"}},
			[]cell{{}, {"yes", "selector"}, {"no", "host-network"}, {"yes", "selector"}, {}}},
		{"the default profile: labels alone capture nothing", nil, engine.Namespace{},
			[]cell{{}, {"no", "not-installed"}, {"no", "not-installed"}, {}, {}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if d := cmp.Diff(c.want, rowsOf(c.set, c.ns)); d != "" {
				t.Errorf("ambient cells (-want +got):\n%s", d)
			}
		})
	}
}
