package ambient

import (
	"cmp"

	"github.com/sidecarlab/sidecarlab/engine/lifecycle"

	"github.com/sidecarlab/sidecarlab/engine"
)

// FillBatch fills the batch rows' ambient column: whether each workload's pods, created without
// a sidecar, join ambient under c (nil: the installation has no CNI agent), and by which rule.
// A workload's namespace is its own, else ns's, else "default"; its labels are ns's (when ns is
// that namespace or names none) under those a Namespace document of the manifest gives it
// (docs, engine.NamespaceLabels). As admission says it, it says it only when ambient is in
// play: c has ambient on, or the pod or its namespace carries istio.io/dataplane-mode. A row
// without pods is left empty.
func (c *CNI) FillBatch(rows []engine.BatchRow, ns engine.Namespace, docs map[string]map[string]string) {
	for i := range rows {
		c.FillRow(&rows[i], ns, docs)
	}
}

// FillRow fills one row's ambient column, as FillBatch does.
func (c *CNI) FillRow(r *engine.BatchRow, ns engine.Namespace, docs map[string]map[string]string) {
	pod := r.Pod()
	if pod == nil {
		return
	}
	p := *pod
	p.Namespace = cmp.Or(p.Namespace, ns.Name, "default")
	labels := ns.LabelsOf(p.Namespace, docs)
	if !(c != nil && c.Enabled) && !Labelled(&p, labels) {
		r.SetAmbient("", "")
		return
	}
	e, err := c.Enrol(&p, labels)
	if err != nil {
		e = Enrolment{Rule: RuleAgentError}
	}
	answer := lifecycle.No
	if e.Joins {
		answer = lifecycle.Yes
	}
	r.SetAmbient(answer, string(e.Rule))
}

// InstallCNI is the installation's CNI agent settings, nil when it has no agent (or there is no
// installation).
func InstallCNI(in *engine.Install) (*CNI, error) {
	if in == nil {
		return nil, nil
	}
	data := in.CNI()
	if data == nil {
		return nil, nil
	}
	c, err := CNIFromConfigMap(data)
	if err != nil {
		return nil, err
	}
	return &c, nil
}
