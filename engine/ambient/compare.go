package ambient

import (
	"context"
	"maps"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"istio.io/api/label"

	"github.com/sidecarlab/sidecarlab/engine"
)

// Comparison is a manifest's workloads, steps applied, under both data planes: with a sidecar,
// injected by Istio's ambient profile's installation (CNI on: istio-validation, not istio-init),
// and in ambient, as written, in a namespace labelled istio.io/dataplane-mode=ambient
// (engine.AmbientSides has the sides, the diff, the lifecycles and the capacity).
type Comparison struct {
	// Settings are the sidecar side's (engine.AmbientInstall of the given install options).
	Settings  engine.Settings        `json:"settings"`
	Capacity  engine.AmbientCapacity `json:"capacity"`
	Workloads []Workload             `json:"workloads"`
}

// Workload is one workload of a comparison.
type Workload struct {
	engine.SideWorkload
	// Enrolment is whether the ambient side's pod joins ambient under the installation's CNI
	// node agent, in its namespace labelled istio.io/dataplane-mode=ambient; nil for a workload
	// that failed.
	Enrolment *Enrolment `json:"enrolment,omitempty"`
	// InjectLabel says the pod template carries the label sidecar.istio.io/inject=true: Istio's
	// webhooks select it even in an ambient namespace, so it gets a sidecar there all the same
	// and stays out of ambient. The ambient side shows the pod as the label asks not to be.
	InjectLabel bool `json:"injectLabel,omitempty"`
	// Facts are the ids of what ambient's run time means for the pod's lifecycle
	// (LifecycleFacts).
	Facts []string `json:"facts,omitempty"`
	// Annotations are what ambient does with each of the workload's annotations that Istio's
	// catalog has (Rows).
	Annotations []Row `json:"annotations"`
	// SidecarPodSecurity and AmbientPodSecurity are Pod Security Admission's verdicts on the two
	// sides' pods; package admission evaluates them (PodSecurity), the engine cannot.
	SidecarPodSecurity []PodSecurity `json:"sidecarPodSecurity,omitempty"`
	AmbientPodSecurity []PodSecurity `json:"ambientPodSecurity,omitempty"`
}

// PodSecurity is Pod Security Admission's verdict on a pod at one level, as a namespace
// enforcing that level would give it: Violations are the API server's message, verbatim.
type PodSecurity struct {
	Level      string   `json:"level"`
	Allowed    bool     `json:"allowed"`
	Violations []string `json:"violations,omitempty"`
}

// Lifecycle facts of an ambient pod, ids of the ambient catalogs.
const (
	// FactNoProxy: no proxy container; the pod's containers are the app's, as written.
	FactNoProxy = "ambient.lifecycle.no-proxy"
	// FactNoRace: the CNI plugin holds the pod's sandbox until the node agent has redirected its
	// traffic, so the app cannot send traffic before the mesh is ready.
	FactNoRace = "ambient.lifecycle.no-race"
	// FactJobCompletes: a Job's pod completes when its app exits; nothing stays behind.
	FactJobCompletes = "ambient.lifecycle.job-completes"
	// FactOutside: the pod does not join ambient (Enrolment says why): its traffic is not
	// captured at all.
	FactOutside = "ambient.lifecycle.outside"
)

// LifecycleFacts are the facts of a pod of kind that joins ambient, or does not.
func LifecycleFacts(kind string, joins bool) []string {
	if !joins {
		return []string{FactNoProxy, FactOutside}
	}
	out := []string{FactNoProxy, FactNoRace}
	if kind == "Job" || kind == "CronJob" {
		out = append(out, FactJobCompletes)
	}
	return out
}

// AmbientNamespace are the labels of the namespace of the ambient side: the given ones with
// istio.io/dataplane-mode=ambient.
func AmbientNamespace(labels map[string]string) map[string]string {
	out := maps.Clone(labels)
	if out == nil {
		out = map[string]string{}
	}
	out[label.IoIstioDataplaneMode.Name] = "ambient"
	return out
}

// Sides is what Compare needs of the engine (engine.Engine has it).
type Sides interface {
	AmbientSides(ctx context.Context, manifest []byte, steps []input.Step, s engine.Settings, nodes int) (*engine.Sides, error)
}

// Compare sets each workload of the manifest (steps applied) under the sidecar of Istio's ambient
// profile beside itself in ambient (engine.AmbientSides, with nodes for ztunnel's share), and
// says whether each joins ambient, what its lifecycle becomes and what ambient does with its
// annotations.
func Compare(ctx context.Context, e Sides, manifest []byte, steps []input.Step, s engine.Settings, nodes int) (*Comparison, error) {
	sides, err := e.AmbientSides(ctx, manifest, steps, s, nodes)
	if err != nil {
		return nil, err
	}
	var cni *CNI
	if data := sides.Install.CNI(); data != nil {
		c, err := CNIFromConfigMap(data)
		if err != nil {
			return nil, err
		}
		cni = &c
	}
	nsLabels := AmbientNamespace(s.Namespace.Labels)
	out := &Comparison{Settings: sides.Settings, Capacity: sides.Capacity, Workloads: make([]Workload, 0, len(sides.Workloads))}
	for _, sw := range sides.Workloads {
		w := Workload{SideWorkload: sw, Annotations: Rows(sw.Annotations)}
		if sw.AmbientPod != nil {
			en, err := cni.Enrol(sw.AmbientPod, nsLabels)
			if err != nil {
				en = Enrolment{Rule: RuleAgentError, Error: err.Error()}
			}
			w.Enrolment = &en
			w.InjectLabel = sw.AmbientPod.Labels[label.SidecarInject.Name] == "true"
			w.Facts = LifecycleFacts(sw.Kind, en.Joins && !w.InjectLabel)
		}
		out.Workloads = append(out.Workloads, w)
	}
	return out, nil
}
