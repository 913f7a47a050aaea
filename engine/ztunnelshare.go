package engine

import (
	"context"
	"math/big"

	corev1 "k8s.io/api/core/v1"
)

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
