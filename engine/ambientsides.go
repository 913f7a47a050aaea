package engine

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"math/big"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/sidecarlab/sidecarlab/engine/diff"
	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/engine/lifecycle"
	"github.com/sidecarlab/sidecarlab/engine/yamldoc"
)

// A sidecar-or-ambient comparison (package ambient builds it on this) puts each workload of a
// manifest, its steps applied, beside itself under the two data planes:
//
//   - the sidecar side: injected by Istio with its ambient profile's installation (AmbientInstall:
//     the CNI node agent on, so the pod gets istio-validation, not istio-init), which is the fair
//     sidecar to set beside ambient: the same installation runs both;
//   - the ambient side: the workload as written. In a namespace labelled for ambient Istio changes
//     nothing at admission (the injection webhooks do not select it and pkg/kube/inject has no
//     ambient branch); everything happens at run time, in the CNI plugin and its node agent.
//
// The engine gives both sides' documents, the field diff from the sidecar side to the ambient
// side, both lifecycles and the capacity; package ambient adds whether the pod joins ambient.

// AmbientProfile is the --set path of Istio's ambient profile.
const AmbientProfile = "profile=ambient"

// DefaultAmbientNodes is the node count a comparison multiplies ztunnel's requests by when the
// reader gives none: a small cluster with one node per zone of a three-zone region.
const DefaultAmbientNodes = 3

// MaxAmbientNodes bounds the node count a reader may give.
const MaxAmbientNodes = 100000

// AmbientInstall is the installation the sidecar side injects with: o with Istio's ambient
// profile, set after o's own paths so that it wins over another profile they name. A mesh of
// the user's own cannot take a profile: it is refused.
func AmbientInstall(o InstallOptions) (InstallOptions, error) {
	if !o.Mesh.IsZero() {
		return o, &input.Error{Field: "your mesh", ID: "ambient-own-mesh"}
	}
	o.Set = append(o.normalizedSet(), AmbientProfile)
	return o, nil
}

// Sides is a manifest, its steps applied, under both data planes.
type Sides struct {
	// Settings are the sidecar side's: the given ones with AmbientInstall's options.
	Settings  Settings        `json:"settings"`
	Install   *Install        `json:"-"`
	Workloads []SideWorkload  `json:"workloads"`
	Capacity  AmbientCapacity `json:"capacity"`
}

// SideWorkload is one document with a pod template, under both data planes.
type SideWorkload struct {
	Doc        int    `json:"doc"`
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	Namespace  string `json:"namespace,omitempty"`
	// Status is what Istio did on the sidecar side (injected, skipped) and Reason why;
	// Error is the document's error (Istio's or the YAML's), when it has one: it then has no
	// sides.
	Status Status `json:"status"`
	Reason string `json:"reason,omitempty"`
	Error  string `json:"error,omitempty"`
	// Sidecar and Ambient are the two sides' documents as istioctl kube-inject prints them.
	Sidecar string `json:"sidecar,omitempty"`
	Ambient string `json:"ambient,omitempty"`
	// Changes are the fields that differ from the sidecar side to the ambient side: what moving
	// the workload to ambient takes out of it.
	Changes []diff.Change `json:"changes"`
	// SidecarLifecycle and AmbientLifecycle are the two pods' lifecycles (the engine's reading
	// of the kubelet, as the lifecycle view gives it).
	SidecarLifecycle *lifecycle.Lifecycle `json:"sidecarLifecycle,omitempty"`
	AmbientLifecycle *lifecycle.Lifecycle `json:"ambientLifecycle,omitempty"`
	// Capacity is istio-proxy's requests and limits times the workload's pods (a DaemonSet's:
	// one per node, Nodes of them); PerNode says the pods are the nodes.
	Capacity Capacity `json:"capacity"`
	PerNode  bool     `json:"perNode,omitempty"`
	// SidecarObject and AmbientObject are the two sides' workloads; AmbientPod is the pod the
	// ambient side's template makes, in its namespace (what the CNI node agent sees).
	SidecarObject runtime.Object `json:"-"`
	AmbientObject runtime.Object `json:"-"`
	AmbientPod    *corev1.Pod    `json:"-"`
	// Annotations are the names of the annotations where Istio reads them and on the pod
	// template (they differ for a CronJob), steps applied, sorted.
	Annotations []string `json:"-"`
}

// AmbientCapacity is what the two data planes ask of the cluster for the manifest's workloads:
// the sidecars' requests over every pod, against ztunnel's on every node and, for a workload
// that needs L7, a waypoint's. Quantities are written as the batch table writes them.
type AmbientCapacity struct {
	Nodes int `json:"nodes"`
	// Pods are the pods that carry a sidecar; SidecarsCPU and SidecarsMemory their istio-proxy
	// requests summed.
	Pods           int    `json:"pods"`
	SidecarsCPU    string `json:"sidecarsCPU,omitempty"`
	SidecarsMemory string `json:"sidecarsMemory,omitempty"`
	// ZtunnelCPU and ZtunnelMemory are one ztunnel's requests, from the ztunnel chart the
	// installation rendered; ZtunnelsCPU and ZtunnelsMemory are them times Nodes. Empty when
	// the installation has no ztunnel.
	ZtunnelCPU     string `json:"ztunnelCPU,omitempty"`
	ZtunnelMemory  string `json:"ztunnelMemory,omitempty"`
	ZtunnelsCPU    string `json:"ztunnelsCPU,omitempty"`
	ZtunnelsMemory string `json:"ztunnelsMemory,omitempty"`
	// WaypointCPU and WaypointMemory are one waypoint's requests, from the installation's
	// values (global.waypoint.resources): what L7 in ambient adds, per waypoint.
	WaypointCPU    string `json:"waypointCPU,omitempty"`
	WaypointMemory string `json:"waypointMemory,omitempty"`
}

// AmbientSides injects the manifest with the ambient profile's installation (AmbientInstall of
// s's options, s's mode) and sets each workload as written beside it. nodes is the cluster's
// node count for ztunnel's share (1 to MaxAmbientNodes).
func (e *Engine) AmbientSides(ctx context.Context, manifest []byte, steps []input.Step, s Settings, nodes int) (*Sides, error) {
	if nodes < 1 || nodes > MaxAmbientNodes {
		return nil, &input.Error{Field: "nodes", ID: "ambient-nodes", Params: input.Params("max", strconv.Itoa(MaxAmbientNodes))}
	}
	o, err := AmbientInstall(s.Install)
	if err != nil {
		return nil, err
	}
	s.Install = o
	// The sides are of workloads: a List is none (its items are not shown, as everywhere), so
	// its items are not injected either.
	tl, err := e.Timeline(ctx, withoutListItems(manifest), steps, s)
	if err != nil {
		return nil, err
	}
	in, err := e.Install(ctx, o)
	if err != nil {
		return nil, err
	}
	out := &Sides{Settings: s, Install: in, Workloads: []SideWorkload{}, Capacity: AmbientCapacity{Nodes: nodes}}
	var pods int
	var sums [2]int64
	var seen [2]bool
	for _, d := range tl.Steps[len(tl.Steps)-1].Documents {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		w, ok, err := sideWorkload(ctx, d, s.Namespace.Name, nodes)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if w.Status == StatusInjected && w.Capacity.Replicas > 0 {
			pods += w.Capacity.Replicas
			for i, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
				if q, ok := w.Capacity.perPod.Requests[r]; ok {
					seen[i] = true
					if r == corev1.ResourceCPU {
						sums[i] += q.MilliValue() * int64(w.Capacity.Replicas)
					} else {
						sums[i] += q.Value() * int64(w.Capacity.Replicas)
					}
				}
			}
		}
		out.Workloads = append(out.Workloads, w)
	}
	c := &out.Capacity
	c.Pods = pods
	if seen[0] {
		c.SidecarsCPU = cpuText(sums[0])
	}
	if seen[1] {
		c.SidecarsMemory = memText(sums[1])
	}
	if z, ok := in.Ztunnel(); ok {
		one, all := Capacity{perPod: z}.For(1), Capacity{perPod: z}.For(nodes)
		c.ZtunnelCPU, c.ZtunnelMemory, c.ZtunnelsCPU, c.ZtunnelsMemory = one.RequestsCPU, one.RequestsMem, all.RequestsCPU, all.RequestsMem
	}
	wp, err := in.WaypointResources()
	if err != nil {
		return nil, err
	}
	one := Capacity{perPod: wp}.For(1)
	c.WaypointCPU, c.WaypointMemory = one.RequestsCPU, one.RequestsMem
	return out, nil
}

// withoutListItems is manifest with each List document's items taken out, every other byte as
// it was and every document on its lines: a List becomes "kind: List" with no items, followed by
// as many empty lines as its items took, so each document keeps its index and line. Istio injects
// a List item by item, and the ambient view, which compares workloads, would inject a List of a
// thousand Pods to show none of them.
func withoutListItems(manifest []byte) []byte {
	docs, err := yamldoc.Split(manifest)
	if err != nil {
		return manifest // it fails on the same error when it runs
	}
	lines := bytes.SplitAfter(manifest, []byte("\n"))
	changed := false
	for _, d := range docs {
		var n yaml.Node
		if !bytes.Contains(d.Raw, []byte("List")) || yaml.Unmarshal(d.Raw, &n) != nil {
			continue
		}
		if items, _ := listItems(&n, 0); items == 0 {
			continue
		}
		first, count := d.Line-1, bytes.Count(d.Raw, []byte("\n"))
		if first+count > len(lines) {
			continue
		}
		empty := []string{"apiVersion: v1\n", "kind: List\n", "items: []\n"}
		if bytes.HasPrefix(d.Raw, []byte("---")) {
			empty = append([]string{"---\n"}, empty...) // the separator that opens it stays
		}
		if count < len(empty) {
			continue
		}
		for i := range count {
			if i < len(empty) {
				lines[first+i] = []byte(empty[i])
			} else {
				lines[first+i] = []byte("\n")
			}
		}
		changed = true
	}
	if !changed {
		return manifest
	}
	return bytes.Join(lines, nil)
}

// sideWorkload is document d of the sidecar side with the same workload as written beside it;
// false for a document without a pod template (a Service, a ConfigMap).
func sideWorkload(ctx context.Context, d Document, namespace string, nodes int) (SideWorkload, bool, error) {
	status, reason := d.Status()
	w := SideWorkload{Doc: d.Index, APIVersion: d.APIVersion, Kind: d.Kind, Name: d.Name, Namespace: d.Namespace, Status: status, Reason: reason, Changes: []diff.Change{}}
	if d.Error != nil {
		w.Error = d.Error.Error()
		return w, true, nil
	}
	in, out, ok := d.objects()
	if !ok {
		return w, false, nil
	}
	read, template, spec, ok := podParts(in)
	if !ok {
		return w, false, nil
	}
	j, err := json.Marshal(in)
	if err != nil {
		return w, false, err
	}
	amb := Document{Index: d.Index, Line: d.Line, Kind: d.Kind, Name: d.Name, Namespace: d.Namespace}.withJSON(j)
	if amb.Error != nil {
		w.Error = amb.Error.Error()
		return w, true, nil
	}
	amb.in, amb.out = in, in
	w.Sidecar, w.Ambient = d.Output(), amb.Output()
	w.SidecarObject, w.AmbientObject = out, in
	if w.Changes, err = DiffDocuments(ctx, []Document{d}, []Document{amb}, ""); err != nil {
		return w, false, err
	}
	if w.Changes == nil {
		w.Changes = []diff.Change{}
	}
	if l, ok := lifecycleOf(d, out); ok {
		w.SidecarLifecycle = &l
	}
	if l, ok := lifecycleOf(amb, in); ok {
		w.AmbientLifecycle = &l
	}
	pod := &corev1.Pod{ObjectMeta: *template.DeepCopy(), Spec: *spec.DeepCopy()}
	pod.Namespace = cmp.Or(d.Namespace, namespace, "default")
	w.AmbientPod = pod
	names := map[string]bool{}
	for _, m := range []*metav1.ObjectMeta{read, template} {
		for k := range m.Annotations {
			names[k] = true
		}
	}
	w.Annotations = sortedKeys(names)
	if _, _, ospec, ok := podParts(out); ok {
		if proxy, _, _ := lifecycle.ProxyContainer(ospec); proxy != nil {
			replicas, known := replicasOf(out)
			if !known {
				replicas, w.PerNode = nodes, true
			}
			w.Capacity = Capacity{perPod: proxy.Resources}.For(replicas)
		}
	}
	return w, true, nil
}

// WaypointResources are a waypoint's resources as the installation's values give them
// (global.waypoint.resources, which the waypoint template of istiod's chart writes into every
// waypoint's Deployment); empty when the values have none.
func (in *Install) WaypointResources() (corev1.ResourceRequirements, error) {
	var r corev1.ResourceRequirements
	var values struct {
		Global struct {
			Waypoint struct {
				Resources json.RawMessage `json:"resources"`
			} `json:"waypoint"`
		} `json:"global"`
	}
	if strings.TrimSpace(in.Values) == "" {
		return r, nil
	}
	if err := json.Unmarshal([]byte(in.Values), &values); err != nil {
		return r, &input.Error{Field: in.Options.partField(in.Options.Mesh.Values), ID: "injector-values", Params: input.Params("error", err.Error())}
	}
	if raw := values.Global.Waypoint.Resources; len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &r); err != nil {
			return r, &input.Error{Field: in.Options.partField(in.Options.Mesh.Values), ID: "injector-values", Params: input.Params("error", err.Error())}
		}
	}
	return r, nil
}

// ZtunnelShare splits ztunnel's requests on a cluster's nodes among the pods of a batch that join
// ambient: ztunnel runs one pod per node and serves every ambient pod on its node, so what it
// asks for is the nodes' fixed cost, not a pod's. A workload's share is that cost × its pods ÷
// every ambient pod of the batch (the pods spread evenly over the nodes): set against its
// sidecars' requests (the "total requests" column), it is what the workload costs in each data
// plane. The batch's rows must all be known for it (NewZtunnelShare) before a share is filled.
type ZtunnelShare struct {
	// Nodes is the node count; Pods the batch's pods that join ambient.
	Nodes, Pods int
	// CPU and Memory are ztunnel's requests times Nodes, written as the batch writes quantities;
	// either is empty when ztunnel's chart asks for none of it.
	CPU, Memory string
	perNode     corev1.ResourceList
}

// NewZtunnelShare is ztunnel's share for rows on nodes nodes (1 to MaxAmbientNodes): rows are
// the batch's, their ambient column filled (package ambient); in the installation's ztunnel
// (Install.Ztunnel). Nil when there is no installation, no ztunnel or no row joins ambient: no
// row has a share.
func NewZtunnelShare(in *Install, rows []BatchRow, nodes int) *ZtunnelShare {
	if in == nil {
		return nil
	}
	z, ok := in.Ztunnel()
	if !ok || nodes < 1 {
		return nil
	}
	s := &ZtunnelShare{Nodes: nodes, perNode: z.Requests}
	for _, r := range rows {
		s.Pods += s.PodsOf(r)
	}
	if s.Pods == 0 {
		return nil
	}
	all := Capacity{perPod: z}.For(nodes)
	s.CPU, s.Memory = all.RequestsCPU, all.RequestsMem
	return s
}

// PodsOf is how many of the batch's ambient pods a row has: its pods when it joins ambient (a
// workload with a pod per node, one a node), else none.
func (s *ZtunnelShare) PodsOf(r BatchRow) int {
	if r.Ambient != "yes" {
		return 0
	}
	if r.pods < 0 {
		return s.Nodes
	}
	return r.pods
}

// Fill sets a row's ztunnel share ("cpu=67m memory=171Mi"): ztunnel's requests on every node ×
// the row's ambient pods ÷ the batch's, CPU to the millicore and memory to the MiB (KiB below
// one). A row that does not join ambient keeps none. A nil s fills nothing.
func (s *ZtunnelShare) Fill(r *BatchRow) {
	if s == nil {
		return
	}
	n := s.PodsOf(*r)
	if n == 0 {
		return
	}
	part := func(name corev1.ResourceName) string {
		q, ok := s.perNode[name]
		if !ok {
			return ""
		}
		v := q.Value()
		if name == corev1.ResourceCPU {
			v = q.MilliValue()
		}
		// v × nodes × n ÷ pods, rounded to the nearest unit: in big integers, as the product
		// of a node count and a pod count may not fit in 64 bits with bytes.
		num := new(big.Int).Mul(big.NewInt(v), big.NewInt(int64(s.Nodes)))
		num.Mul(num, big.NewInt(int64(n)))
		if name == corev1.ResourceCPU {
			return cpuText(roundDiv(num, int64(s.Pods), 1))
		}
		unit := int64(1 << 20)
		if new(big.Int).Quo(num, big.NewInt(int64(s.Pods))).Cmp(big.NewInt(unit)) < 0 {
			unit = 1 << 10
		}
		return memText(roundDiv(num, int64(s.Pods), unit) * unit)
	}
	r.ZtunnelShare = Resources{part(corev1.ResourceCPU), part(corev1.ResourceMemory)}.String()
}

// roundDiv is num ÷ (d × unit) rounded to the nearest whole number.
func roundDiv(num *big.Int, d, unit int64) int64 {
	den := new(big.Int).Mul(big.NewInt(d), big.NewInt(unit))
	q, m := new(big.Int).QuoRem(num, den, new(big.Int))
	if m.Lsh(m, 1).Cmp(den) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	return q.Int64()
}

// Pods are the batch's rows as written, before any document is injected: each with its kind,
// name, namespace, pod and pod count, and nothing else — what needs every row before the first
// is injected (the ztunnel share's count of ambient pods) reads them.
func (b *BatchStream) Pods(ctx context.Context) ([]BatchRow, error) {
	docs, err := b.written(ctx)
	if err != nil {
		return nil, err
	}
	rows := make([]BatchRow, len(docs))
	for i, d := range docs {
		rows[i] = BatchRow{Doc: d.Index, Kind: d.Kind, Name: d.Name, Namespace: d.Namespace}
		rows[i].setWritten(d)
	}
	return rows, nil
}
