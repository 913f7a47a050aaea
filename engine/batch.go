package engine

import (
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/sidecarlab/sidecarlab/engine/lifecycle"
)

// BatchRow is one workload of a batch: what injection did to it, in the columns the lab reads.
type BatchRow struct {
	Doc       int    `json:"doc"`
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
	// Result is the document's Status; Reason says why.
	Result string `json:"result"`
	Reason string `json:"reason,omitempty"`
	// Proxy is where istio-proxy is: "containers", "initContainers" or "".
	Proxy      string `json:"proxy,omitempty"`
	ProxyFirst bool   `json:"proxyFirst"`
	PostStart  string `json:"postStart,omitempty"`
	PreStop    string `json:"preStop,omitempty"`
	Requests   string `json:"requests,omitempty"`
	Limits     string `json:"limits,omitempty"`
	// Exclusions are istio-init's redirection arguments ("-o 3306 -d 15090,15021,15020").
	Exclusions  string `json:"exclusions,omitempty"`
	ProxyConfig string `json:"proxyConfig,omitempty"`
	// Pitfalls are the ids of the checks that fired for this workload.
	Pitfalls []string `json:"pitfalls,omitempty"`
	Capacity Capacity `json:"capacity"`
	// Ambient says whether the workload's pods, created without a sidecar in the request's
	// namespace, join ambient ("yes" or "no"), and AmbientRule by which rule (engine/ambient's
	// Rule ids); both empty when ambient is not in play or the document has no pods. The engine
	// knows no CNI agent: package ambient fills them (CNI.FillBatch) from the row's Pod.
	Ambient     string `json:"ambient,omitempty"`
	AmbientRule string `json:"ambientRule,omitempty"`
	// ZtunnelShare is the workload's share of ztunnel's requests on the cluster's nodes when it
	// joins ambient ("cpu=67m memory=171Mi"; ZtunnelShare.Fill), to set against its sidecars'
	// ("total requests").
	ZtunnelShare string `json:"ztunnelShare,omitempty"`
	// pod is the workload's pod as it is created without a sidecar: the input's pod template
	// (annotation steps applied) in the document's namespace; pods how many (podCount).
	pod  *corev1.Pod
	pods int
}

// Pod is the workload's pod as it is created without a sidecar (its pod template as written,
// annotation steps applied, in the document's namespace); nil for a document without pods.
// Callers must not change it.
func (r *BatchRow) Pod() *corev1.Pod { return r.pod }

// SetAmbient fills the row's ambient columns ("yes" or "no" and the rule, or "" and "" when
// ambient is not in play) and lets go of its pod, which only they read.
func (r *BatchRow) SetAmbient(answer lifecycle.Answer, rule string) {
	r.Ambient, r.AmbientRule, r.pod = string(answer), rule, nil
}

// setWritten keeps what the row's ambient columns read of the workload as written (d's input):
// the pod it creates without a sidecar, in the document's namespace, and how many (podCount).
// A document without a pod template leaves both unset.
func (r *BatchRow) setWritten(d Document) {
	in, _, ok := d.objects()
	if !ok {
		return
	}
	_, tmpl, spec, ok := podParts(in)
	if !ok {
		return
	}
	r.pod = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: d.Name, Namespace: d.Namespace, Labels: tmpl.Labels, Annotations: tmpl.Annotations}, Spec: *spec}
	r.pods = podCount(in)
}

// Capacity is the sidecar's share of a workload's resources: istio-proxy's injected requests and
// limits times the number of pods.
type Capacity struct {
	// Replicas is the number of pods the workload asks for (spec.replicas, a Job's parallelism);
	// 0 when the spec does not say (a DaemonSet runs one per node).
	Replicas    int    `json:"replicas"`
	RequestsCPU string `json:"requestsCPU,omitempty"`
	RequestsMem string `json:"requestsMemory,omitempty"`
	LimitsCPU   string `json:"limitsCPU,omitempty"`
	LimitsMem   string `json:"limitsMemory,omitempty"`
	perPod      corev1.ResourceRequirements
}

// For returns the totals for n pods.
func (c Capacity) For(n int) Capacity {
	out := Capacity{Replicas: n, perPod: c.perPod}
	mul := func(l corev1.ResourceList, r corev1.ResourceName, bin bool) string {
		q, ok := l[r]
		if !ok {
			return ""
		}
		if bin {
			return memText(q.Value() * int64(n))
		}
		// CPU in cores, or millicores below a whole core: "200", "4000", "400m".
		return cpuText(q.MilliValue() * int64(n))
	}
	out.RequestsCPU = mul(c.perPod.Requests, corev1.ResourceCPU, false)
	out.RequestsMem = mul(c.perPod.Requests, corev1.ResourceMemory, true)
	out.LimitsCPU = mul(c.perPod.Limits, corev1.ResourceCPU, false)
	out.LimitsMem = mul(c.perPod.Limits, corev1.ResourceMemory, true)
	return out
}

// Batch makes one row per document of a row of results, with the findings of that row.
func Batch(docs []Document, findings []Finding) []BatchRow {
	rows := make([]BatchRow, 0, len(docs))
	for _, d := range docs {
		status, reason := d.Status()
		r := BatchRow{Doc: d.Index, Kind: d.Kind, Name: d.Name, Namespace: d.Namespace, Result: string(status), Reason: reason}
		for _, f := range findings {
			if f.Doc == d.Index {
				r.Pitfalls = append(r.Pitfalls, string(f.Check))
			}
		}
		if _, obj, ok := d.objects(); ok && status == StatusInjected {
			fillRow(&r, obj)
		}
		r.setWritten(d)
		rows = append(rows, r)
	}
	return rows
}

func fillRow(r *BatchRow, obj runtime.Object) {
	_, _, spec, ok := podParts(obj)
	if !ok {
		return
	}
	proxy, native, idx := lifecycle.ProxyContainer(spec)
	if proxy == nil {
		return
	}
	r.Proxy = "containers"
	if native {
		r.Proxy = "initContainers"
	}
	r.ProxyFirst = !native && idx == 0
	r.PostStart, r.PreStop = lifecycle.PostStart(*proxy), lifecycle.PreStop(*proxy)
	r.Requests, r.Limits = resourceText(proxy.Resources.Requests), resourceText(proxy.Resources.Limits)
	for _, e := range proxy.Env {
		if e.Name == "PROXY_CONFIG" {
			r.ProxyConfig = strings.TrimSpace(e.Value)
		}
	}
	for _, c := range spec.InitContainers {
		if c.Name == "istio-init" {
			r.Exclusions = iptablesArgs(c.Args)
		}
	}
	replicas, known := replicasOf(obj)
	if !known {
		// A DaemonSet runs a pod per node: the totals are per pod, Replicas 0 says "per node".
		r.Capacity = Capacity{perPod: proxy.Resources}.For(1)
		r.Capacity.Replicas = 0
		return
	}
	r.Capacity = Capacity{perPod: proxy.Resources}.For(replicas)
}

// BatchTotal is what the sidecars of a whole batch ask for: istio-proxy's requests and limits
// summed over every injected workload's pods ("2,000 pods × the sidecar's requests = 200
// cores"). A workload that runs a pod per node (a DaemonSet) has no pod count in its spec: it is
// counted in PerNode and left out of the sums.
type BatchTotal struct {
	// Workloads and Pods are the injected workloads and their pods, summed.
	Workloads, Pods int
	// PerNode counts the workloads with a pod per node, not in the sums.
	PerNode     int
	RequestsCPU string `json:"requestsCPU,omitempty"`
	RequestsMem string `json:"requestsMemory,omitempty"`
	LimitsCPU   string `json:"limitsCPU,omitempty"`
	LimitsMem   string `json:"limitsMemory,omitempty"`
	// Ztunnel is, when the batch's workloads join ambient, what ztunnel asks for on the
	// cluster's nodes and how many pods share it; the caller sets it (NewZtunnelShare).
	Ztunnel *ZtunnelShare `json:"ztunnel,omitempty"`
}

// Total sums the batch's sidecars.
func Total(rows []BatchRow) BatchTotal {
	var t BatchTotal
	// Millicores and bytes, and whether any row had each.
	var sums [4]int64
	var seen [4]bool
	for _, r := range rows {
		if r.Proxy == "" {
			continue
		}
		t.Workloads++
		if r.Capacity.Replicas == 0 {
			t.PerNode++
			continue
		}
		n := int64(r.Capacity.Replicas)
		t.Pods += int(n)
		pp := r.Capacity.perPod
		for i, q := range []struct {
			l    corev1.ResourceList
			name corev1.ResourceName
		}{{pp.Requests, corev1.ResourceCPU}, {pp.Requests, corev1.ResourceMemory}, {pp.Limits, corev1.ResourceCPU}, {pp.Limits, corev1.ResourceMemory}} {
			v, ok := q.l[q.name]
			if !ok {
				continue
			}
			seen[i] = true
			if q.name == corev1.ResourceCPU {
				sums[i] += v.MilliValue() * n
			} else {
				sums[i] += v.Value() * n
			}
		}
	}
	text := func(i int) string {
		switch {
		case !seen[i]:
			return ""
		case i%2 == 0:
			return cpuText(sums[i])
		}
		return memText(sums[i])
	}
	t.RequestsCPU, t.RequestsMem, t.LimitsCPU, t.LimitsMem = text(0), text(1), text(2), text(3)
	return t
}

// cpuText and memText write every quantity sidecarlab computes — a row's pods × the sidecar's
// requests or limits, the batch's totals, the lifecycle view's capacity — so that the table's
// cells and its totals read alike: exactly, in the largest unit the value is a whole number of
// thousandths of, as a person writes it and as resource.ParseQuantity reads it. A sum of rows
// written in cores and Gi is in cores and Gi too ("201.2", "251.5Gi"), where Quantity.String
// falls back to the largest unit it is a whole number of ("201200m", "257536Mi").

// cpuText is millicores as a person writes CPU: cores from one core up ("200", "201.2",
// "1.25"), millicores below ("250m").
func cpuText(milli int64) string {
	if milli < 0 {
		return "-" + cpuText(-milli)
	}
	if milli < 1000 {
		return strconv.FormatInt(milli, 10) + "m"
	}
	return decimalText(uint64(milli/1000), uint64(milli%1000))
}

// binaryUnits are memory's units, a power of 1024 apart.
var binaryUnits = []string{"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"}

// memText is bytes in the largest binary unit they reach and are a whole number of thousandths
// of ("384Mi", "2000Gi", "251.5Gi", "2Ti"), or in bytes when no unit has them exactly.
func memText(b int64) string {
	if b < 0 {
		return "-" + memText(-b)
	}
	for u := len(binaryUnits) - 1; u > 0; u-- {
		size := uint64(1) << (10 * u)
		if uint64(b) < size {
			continue
		}
		whole, rest := uint64(b)/size, uint64(b)%size
		// Thousandths of the unit: rest×1000 may not fit in 64 bits (Ei), so in 128.
		hi, lo := bits.Mul64(rest, 1000)
		if milli, rem := bits.Div64(hi, lo, size); rem == 0 {
			return decimalText(whole, milli) + binaryUnits[u]
		}
	}
	return strconv.FormatInt(b, 10)
}

// decimalText is whole and thousandths as a decimal without trailing zeros: "201.2", "3".
func decimalText(whole, milli uint64) string {
	s := strconv.FormatUint(whole, 10)
	if milli == 0 {
		return s
	}
	return s + "." + strings.TrimRight(fmt.Sprintf("%03d", milli), "0")
}

// PerPod is istio-proxy's own requests and limits.
func (c Capacity) PerPod() corev1.ResourceRequirements { return c.perPod }

func resourceText(l corev1.ResourceList) string {
	var r Resources
	if q, ok := l[corev1.ResourceCPU]; ok {
		r.CPU = q.String()
	}
	if q, ok := l[corev1.ResourceMemory]; ok {
		r.Memory = q.String()
	}
	return r.String()
}

// iptablesArgs keeps istio-iptables' redirection flags: which traffic is, or is not, captured.
func iptablesArgs(args []string) string {
	keep := map[string]bool{"-i": true, "-x": true, "-b": true, "-d": true, "-o": true, "-q": true, "-c": true}
	var out []string
	for i := 0; i < len(args); i++ {
		if keep[args[i]] && i+1 < len(args) {
			if v := args[i+1]; v != "" {
				out = append(out, args[i]+" "+v)
			}
			i++
		}
	}
	return strings.Join(out, " ")
}

// podCount is how many pods a workload with a pod template runs: its replicas (a Job's
// parallelism), -1 for one a node (a DaemonSet).
func podCount(obj runtime.Object) int {
	if n, known := replicasOf(obj); known {
		return n
	}
	return -1
}

func replicasOf(obj runtime.Object) (int, bool) {
	one := func(p *int32) int {
		if p == nil {
			return 1
		}
		return int(*p)
	}
	switch v := obj.(type) {
	case *corev1.Pod:
		return 1, true
	case *appsv1.Deployment:
		return one(v.Spec.Replicas), true
	case *appsv1.StatefulSet:
		return one(v.Spec.Replicas), true
	case *appsv1.ReplicaSet:
		return one(v.Spec.Replicas), true
	case *corev1.ReplicationController:
		return one(v.Spec.Replicas), true
	case *batchv1.Job:
		return one(v.Spec.Parallelism), true
	case *batchv1.CronJob:
		return one(v.Spec.JobTemplate.Spec.Parallelism), true
	case *appsv1.DaemonSet:
		return 0, false
	}
	return 1, true
}

// BatchColumn is one column of the batch table: the one definition the page's table, the CLI's,
// and the CSV and Markdown files of package report share. Name is its header in the CLI's table
// and the files (the page titles it in the reader's language); ID is the page's, in a link's
// cols=; Cell writes a row's cell; Read reads a file's cell back into a row.
type BatchColumn struct {
	Name, ID string
	Cell     func(r BatchRow) string
	Read     func(r *BatchRow, v string)
}

// batchColumns are the batch table's columns, in order.
var batchColumns = []BatchColumn{
	{"doc", "doc", func(r BatchRow) string { return strconv.Itoa(r.Doc) }, func(r *BatchRow, v string) { r.Doc, _ = strconv.Atoi(v) }},
	{"kind", "kind", func(r BatchRow) string { return r.Kind }, func(r *BatchRow, v string) { r.Kind = v }},
	{"name", "name", func(r BatchRow) string { return r.Name }, func(r *BatchRow, v string) { r.Name = v }},
	{"namespace", "namespace", func(r BatchRow) string { return r.Namespace }, func(r *BatchRow, v string) { r.Namespace = v }},
	{"result", "result", func(r BatchRow) string { return r.Result }, func(r *BatchRow, v string) { r.Result = v }},
	{"reason", "reason", func(r BatchRow) string { return r.Reason }, func(r *BatchRow, v string) { r.Reason = v }},
	{"proxy", "proxy", func(r BatchRow) string { return r.Proxy }, func(r *BatchRow, v string) { r.Proxy = v }},
	{"proxy first", "proxy-first", func(r BatchRow) string {
		switch {
		case r.Proxy == "":
			return ""
		case r.ProxyFirst:
			return string(lifecycle.Yes)
		}
		return string(lifecycle.No)
	}, func(r *BatchRow, v string) { r.ProxyFirst = lifecycle.Answer(v) == lifecycle.Yes }},
	{"postStart", "poststart", func(r BatchRow) string { return r.PostStart }, func(r *BatchRow, v string) { r.PostStart = v }},
	{"preStop", "prestop", func(r BatchRow) string { return r.PreStop }, func(r *BatchRow, v string) { r.PreStop = v }},
	{"requests", "requests", func(r BatchRow) string { return r.Requests }, func(r *BatchRow, v string) { r.Requests = v }},
	{"limits", "limits", func(r BatchRow) string { return r.Limits }, func(r *BatchRow, v string) { r.Limits = v }},
	{"istio-init", "istio-init", func(r BatchRow) string { return r.Exclusions }, func(r *BatchRow, v string) { r.Exclusions = v }},
	{"PROXY_CONFIG", "proxy-config", func(r BatchRow) string { return r.ProxyConfig }, func(r *BatchRow, v string) { r.ProxyConfig = v }},
	{"pitfalls", "pitfalls", func(r BatchRow) string { return strings.Join(r.Pitfalls, " ") }, func(r *BatchRow, v string) {
		if v != "" {
			r.Pitfalls = strings.Split(v, " ")
		}
	}},
	{"replicas", "replicas", func(r BatchRow) string {
		switch {
		case r.Proxy == "":
			return ""
		case r.Capacity.Replicas == 0:
			return "per node"
		}
		return strconv.Itoa(r.Capacity.Replicas)
	}, func(r *BatchRow, v string) { r.Capacity.Replicas, _ = strconv.Atoi(v) }},
	{"total requests", "total-requests", func(r BatchRow) string {
		return Resources{r.Capacity.RequestsCPU, r.Capacity.RequestsMem}.String()
	}, func(r *BatchRow, v string) {
		p := ParseResources(v)
		r.Capacity.RequestsCPU, r.Capacity.RequestsMem = p.CPU, p.Memory
	}},
	{"total limits", "total-limits", func(r BatchRow) string {
		return Resources{r.Capacity.LimitsCPU, r.Capacity.LimitsMem}.String()
	}, func(r *BatchRow, v string) {
		p := ParseResources(v)
		r.Capacity.LimitsCPU, r.Capacity.LimitsMem = p.CPU, p.Memory
	}},
	{"joins ambient", "ambient", func(r BatchRow) string { return r.Ambient }, func(r *BatchRow, v string) { r.Ambient = v }},
	{"ztunnel share", "ztunnel-share", func(r BatchRow) string { return r.ZtunnelShare }, func(r *BatchRow, v string) { r.ZtunnelShare = v }},
}

// BatchColumns are the batch table's columns, in order: the page's and the CLI's tables, and
// the CSV and Markdown files package report writes.
func BatchColumns() []BatchColumn { return slices.Clone(batchColumns) }

// BatchColumnNames are the columns' names (BatchColumn.Name), in order.
func BatchColumnNames() []string {
	out := make([]string, len(batchColumns))
	for i, c := range batchColumns {
		out[i] = c.Name
	}
	return out
}

// Cells are the row's values under BatchColumns.
func (r BatchRow) Cells() []string {
	out := make([]string, len(batchColumns))
	for i, c := range batchColumns {
		out[i] = c.Cell(r)
	}
	return out
}

// Resources are a CPU and a memory quantity as Kubernetes writes them ("100m", "128Mi"), either
// empty (not set). Their text (String) is the one every edge shows and the batch table's
// downloads carry; ParseResources reads it back.
type Resources struct{ CPU, Memory string }

// String is "cpu=100m memory=128Mi", a quantity not set left out: "" for neither.
func (r Resources) String() string {
	var parts []string
	if r.CPU != "" {
		parts = append(parts, "cpu="+r.CPU)
	}
	if r.Memory != "" {
		parts = append(parts, "memory="+r.Memory)
	}
	return strings.Join(parts, " ")
}

// ParseResources reads String's text back ("cpu=… memory=…", either may be missing).
func ParseResources(s string) Resources {
	var r Resources
	for _, kv := range strings.Fields(s) {
		switch k, q, _ := strings.Cut(kv, "="); k {
		case "cpu":
			r.CPU = q
		case "memory":
			r.Memory = q
		}
	}
	return r
}
