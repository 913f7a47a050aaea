package engine

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	"github.com/sidecarlab/sidecarlab/engine/diff"
	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/engine/lifecycle"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

const sidesManifest = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 4
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: web, image: nginx}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {ports: [{port: 80}]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: once}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: work, image: busybox}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers:
      - {name: agent, image: busybox}
`

// chartValue is the value at path (dots) of a values.yaml of the pinned Istio's charts, read
// from the module cache, under the charts' _internal_defaults_do_not_set.
func chartValue(t *testing.T, chart, path string) resource.Quantity {
	t.Helper()
	var v any
	if err := yaml.Unmarshal(readFile(t, filepath.Join(testkit.IstioDir(t), "manifests/charts", chart, "values.yaml")), &v); err != nil {
		t.Fatal(err)
	}
	for _, seg := range append([]string{"_internal_defaults_do_not_set"}, strings.Split(path, ".")...) {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("%s: no %s", chart, path)
		}
		v = m[seg]
	}
	q, err := resource.ParseQuantity(strings.TrimSpace(strings.Trim(yamlScalar(v), `"`)))
	if err != nil {
		t.Fatalf("%s %s: %v", chart, path, err)
	}
	return q
}

func yamlScalar(v any) string {
	b, _ := yaml.Marshal(v)
	return string(b)
}

// times is q × n.
func times(q resource.Quantity, n int64) resource.Quantity {
	if q.Format == resource.DecimalSI {
		return *resource.NewMilliQuantity(q.MilliValue()*n, resource.DecimalSI)
	}
	return *resource.NewQuantity(q.Value()*n, resource.BinarySI)
}

// sameQuantity fails unless got, a quantity as the comparison writes it, equals want.
func sameQuantity(t *testing.T, what, got string, want resource.Quantity) {
	t.Helper()
	q, err := resource.ParseQuantity(got)
	if err != nil || q.Cmp(want) != 0 {
		t.Errorf("%s = %q, want %s (%v)", what, got, want.String(), err)
	}
}

func TestAmbientSides(t *testing.T) {
	e := testEngine(t)
	sides, err := e.AmbientSides(context.Background(), []byte(sidesManifest), nil, Settings{}, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(sides.Workloads) != 3 {
		t.Fatalf("%d workloads, want the Deployment, the Job and the DaemonSet (the Service has no pod)", len(sides.Workloads))
	}
	web, job, ds := sides.Workloads[0], sides.Workloads[1], sides.Workloads[2]
	// The sidecar side is the ambient profile's: CNI on, so istio-validation and no istio-init.
	if !strings.Contains(web.Sidecar, "name: istio-validation") || strings.Contains(web.Sidecar, "name: istio-init") {
		t.Errorf("the sidecar side is not injected with CNI on:\n%s", web.Sidecar)
	}
	if strings.Contains(web.Ambient, "istio") {
		t.Errorf("the ambient side is not the workload as written:\n%s", web.Ambient)
	}
	paths := map[string]diff.ChangeKind{}
	for _, c := range web.Changes {
		paths[c.Path] = c.Kind
	}
	for _, p := range []string{"spec.template.spec.containers[istio-proxy]", "spec.template.spec.initContainers[istio-validation]"} {
		if _, ok := paths[p]; !ok {
			t.Errorf("the diff has no %s: %v", p, paths)
		}
	}
	if web.SidecarLifecycle == nil || web.AmbientLifecycle == nil || web.AmbientLifecycle.Ready != "1/1" || web.SidecarLifecycle.Ready != "2/2" {
		t.Errorf("lifecycles: %+v / %+v", web.SidecarLifecycle, web.AmbientLifecycle)
	}
	if job.AmbientLifecycle == nil || verdictOf(job.AmbientLifecycle, "job-completes") != "yes" {
		t.Errorf("the Job as written does not complete: %+v", job.AmbientLifecycle)
	}
	if job.SidecarLifecycle == nil || verdictOf(job.SidecarLifecycle, "job-completes") != "no" {
		t.Errorf("the Job with kube-inject's classic sidecar completes: %+v", job.SidecarLifecycle)
	}

	// The numbers are the charts': the sidecar's requests × pods, ztunnel's × nodes, a waypoint's.
	proxyCPU, proxyMem := chartValue(t, "istio-control/istio-discovery", "global.proxy.resources.requests.cpu"), chartValue(t, "istio-control/istio-discovery", "global.proxy.resources.requests.memory")
	if web.Capacity.Replicas != 4 || ds.Capacity.Replicas != 5 || !ds.PerNode || job.Capacity.Replicas != 1 {
		t.Errorf("pods: web %d, DaemonSet %d (per node %v), Job %d; want 4, 5 (the nodes), 1", web.Capacity.Replicas, ds.Capacity.Replicas, ds.PerNode, job.Capacity.Replicas)
	}
	sameQuantity(t, "web's sidecars' CPU", web.Capacity.RequestsCPU, times(proxyCPU, 4))
	c := sides.Capacity
	if c.Nodes != 5 || c.Pods != 10 {
		t.Errorf("nodes %d pods %d, want 5 and 10", c.Nodes, c.Pods)
	}
	sameQuantity(t, "sidecars' CPU", c.SidecarsCPU, times(proxyCPU, 10))
	sameQuantity(t, "sidecars' memory", c.SidecarsMemory, times(proxyMem, 10))
	zCPU, zMem := chartValue(t, "ztunnel", "resources.requests.cpu"), chartValue(t, "ztunnel", "resources.requests.memory")
	sameQuantity(t, "ztunnel's CPU", c.ZtunnelCPU, zCPU)
	sameQuantity(t, "ztunnel's memory", c.ZtunnelMemory, zMem)
	sameQuantity(t, "ztunnels' CPU", c.ZtunnelsCPU, times(zCPU, 5))
	sameQuantity(t, "ztunnels' memory", c.ZtunnelsMemory, times(zMem, 5))
	sameQuantity(t, "a waypoint's CPU", c.WaypointCPU, chartValue(t, "istio-control/istio-discovery", "global.waypoint.resources.requests.cpu"))
	sameQuantity(t, "a waypoint's memory", c.WaypointMemory, chartValue(t, "istio-control/istio-discovery", "global.waypoint.resources.requests.memory"))
}

// TestAmbientSidesInstall: the numbers follow the installation, not a constant: set ztunnel's and
// the waypoint's requests and they change; take ztunnel out and it has none.
func TestAmbientSidesInstall(t *testing.T) {
	e := testEngine(t)
	s := Settings{Install: InstallOptions{Set: []string{"values.ztunnel.resources.requests.cpu=300m", "values.global.waypoint.resources.requests.memory=256Mi"}}}
	sides, err := e.AmbientSides(context.Background(), []byte(sidesManifest), nil, s, 2)
	if err != nil {
		t.Fatal(err)
	}
	if c := sides.Capacity; c.ZtunnelCPU != "300m" || c.ZtunnelsCPU != "600m" || c.WaypointMemory != "256Mi" {
		t.Errorf("set requests not followed: %+v", c)
	}
	if got := sides.Settings.Install.Set; got[len(got)-1] != AmbientProfile {
		t.Errorf("the sidecar side's options %v do not end with the ambient profile", got)
	}
	s.Install.Set = []string{"components.ztunnel.enabled=false"}
	if sides, err = e.AmbientSides(context.Background(), []byte(sidesManifest), nil, s, 2); err != nil {
		t.Fatal(err)
	}
	if c := sides.Capacity; c.ZtunnelCPU != "" || c.ZtunnelsMemory != "" {
		t.Errorf("an installation without ztunnel has ztunnel's requests: %+v", c)
	}
}

func TestAmbientSidesRefuses(t *testing.T) {
	e := testEngine(t)
	for _, tc := range []struct {
		name  string
		s     Settings
		nodes int
		id    string
	}{
		{"no nodes", Settings{}, 0, "ambient-nodes"},
		{"too many nodes", Settings{}, MaxAmbientNodes + 1, "ambient-nodes"},
		{"own mesh", Settings{Install: InstallOptions{Mesh: OwnMesh{MeshConfig: "defaultConfig: {}"}}}, 3, "ambient-own-mesh"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.AmbientSides(context.Background(), []byte(sidesManifest), nil, tc.s, tc.nodes)
			var ie *input.Error
			if !errors.As(err, &ie) || ie.ID != tc.id {
				t.Fatalf("err = %v, want input error %s", err, tc.id)
			}
		})
	}
	for _, n := range []int{1, MaxAmbientNodes} {
		if _, err := e.AmbientSides(context.Background(), []byte(sidesManifest), nil, Settings{}, n); err != nil {
			t.Errorf("%d nodes: %v", n, err)
		}
	}
}

func verdictOf(l *lifecycle.Lifecycle, id string) string {
	for _, v := range l.Verdicts {
		if v.ID == id {
			return string(v.Answer)
		}
	}
	return ""
}

// TestAmbientSidesSkipListItems: a List is no workload of the ambient view, so its items are not
// injected for it (issue 40: a List of a thousand Pods took seconds to show nothing); the
// documents after it keep their index and line, with "\r\n" line ends too, and a manifest
// without a List is injected as written.
func TestAmbientSidesSkipListItems(t *testing.T) {
	e := testEngine(t)
	for _, c := range []struct{ name, sep string }{{"\\n", "\n"}, {"\\r\\n", "\r\n"}} {
		t.Run(c.name, func(t *testing.T) {
			m := strings.ReplaceAll(testkit.PodList(100)+"---\n"+testkit.Deployment, "\n", c.sep)
			before := e.Stats().Injections
			sides, err := e.AmbientSides(context.Background(), []byte(m), nil, Settings{}, 3)
			if err != nil {
				t.Fatal(err)
			}
			if n := e.Stats().Injections - before; n > 2 {
				t.Fatalf("%d objects injected for two documents, one a List of 100 Pods: its items were injected", n)
			}
			if len(sides.Workloads) != 1 || sides.Workloads[0].Doc != 2 || sides.Workloads[0].Name != "web" || sides.Workloads[0].Status != StatusInjected {
				t.Fatalf("workloads %+v, want the Deployment, document 2, injected", sides.Workloads)
			}
			tl, err := e.Timeline(context.Background(), []byte(m), nil, Settings{})
			if err != nil {
				t.Fatal(err)
			}
			if d := tl.Steps[0].Documents[1]; d.Line != 105 || sides.Workloads[0].Doc != d.Index {
				t.Fatalf("the Deployment is document %d on line %d as written, want 2 on 105", d.Index, d.Line)
			}
		})
	}
	if got := string(withoutListItems([]byte(sidesManifest))); got != sidesManifest {
		t.Fatal("a manifest without a List was changed")
	}
}
