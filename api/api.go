// Package api holds the wire types of sidecarlab's JSON API (/api/v1/…) and of the CLI's JSON
// output: the bodies clients send and the answers and error bodies the server writes. The server
// (package handlers) encodes them and the CLI (cmd/sidecarlab) decodes and writes them, so both
// read one definition; no handler and no wording lives here. The language rule of every JSON
// sidecarlab writes is here too (IsSentence): fields that hold sentences follow the reader's
// language, every other field is the same in every language.
package api

import (
	"encoding/json"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/diff"
	"github.com/sidecarlab/sidecarlab/wording"
)

// InjectRequest is the body of POST /api/v1/inject.
type InjectRequest struct {
	Manifest string          `json:"manifest"`
	Steps    []input.Step    `json:"steps,omitempty"`
	Settings engine.Settings `json:"settings,omitzero"`
	// MeshConfigMaps is a mesh's own configuration as `kubectl get configmap -n istio-system
	// istio-sidecar-injector istio -o yaml` prints it: read into settings.install.mesh and,
	// unless it names one, settings.install.revision.
	MeshConfigMaps string `json:"meshConfigMaps,omitempty"`
	// ClusterMesh is a revision (or revision tag) of the server's own cluster (serve
	// --cluster-read): its mesh is read into settings.install.mesh and settings.install.revision.
	// ClusterNamespace is a namespace of that cluster: its name and labels are read into
	// settings.namespace.
	ClusterMesh      string `json:"clusterMesh,omitempty"`
	ClusterNamespace string `json:"clusterNamespace,omitempty"`
}

// InjectResponse is its answer: the timeline (row 0 is the manifest injected as is, row k adds
// step k), the final output, and the permalink of the same view in the playground. A request's
// ?include= names the parts it wants; a part not asked for is absent, not empty.
type InjectResponse struct {
	Istio     engine.VersionInfo `json:"istio"`
	Permalink string             `json:"permalink"`
	// Mesh says which mesh of the user's own injected, when the request gave one.
	Mesh     *Mesh     `json:"mesh,omitempty"`
	Output   string    `json:"output,omitempty"`
	Timeline *Timeline `json:"timeline,omitempty"`
	// Changes and Unified are the last row's: what its step changed (row 0's: what injection
	// changed), field by field and as a line diff.
	Changes []diff.Change `json:"changes,omitzero"`
	Unified *string       `json:"unified,omitempty"`
	// Findings, Lifecycles and Batch are about the last row.
	Findings []wording.Finding `json:"findings,omitzero"`
	// Ignored are the last row's findings the manifest opted out of (sidecarlab.dev/ignore),
	// worded as Findings; part of the findings part.
	Ignored    []wording.Finding   `json:"ignored,omitzero"`
	Lifecycles []wording.Lifecycle `json:"lifecycles,omitzero"`
	Batch      []engine.BatchRow   `json:"batch,omitzero"`
	// Admission is the cluster's view of each document after the last step: its Pod created in
	// the settings' namespace, sent through the installation's webhooks and Pod Security.
	Admission []wording.Admission `json:"admission,omitzero"`
	// Provenance is where each field of the last row's output came from (include=provenance):
	// a template's line, the manifest, or Istio's code.
	Provenance []engine.Provenance `json:"provenance,omitzero"`
}

// Mesh says which mesh of the user's own injected: its revision, the Istio that installed it
// (as its ConfigMaps' labels say; absent when they do not), whose templates ran ("istio" when
// they are the embedded Istio's own, else "own"), the Istio whose injector code ran them, and
// the parts the mesh did not give, which were the embedded Istio's ("injectorConfig", "values",
// "meshConfig": engine.OwnMesh.Embedded; absent when it gave all three).
type Mesh struct {
	Revision   string   `json:"revision"`
	Istio      string   `json:"istio,omitempty"`
	Templates  string   `json:"templates"`
	InjectedBy string   `json:"injectedBy"`
	Embedded   []string `json:"embedded,omitempty"`
}

// Timeline is engine.Timeline as the API writes it. A line over the page's limit is whole once
// in an answer, in `output`: in the rows' outputs and unified diffs it is cut as the page cuts
// it, saying how many bytes it had, so that one huge annotation value is not repeated in every
// row.
type Timeline struct {
	Settings engine.Settings  `json:"settings"`
	Steps    []Row            `json:"steps"`
	Findings []engine.Finding `json:"findings"`
	Ignored  []engine.Finding `json:"ignored,omitempty"`
}

// Row is an engine.StepResult with its changes and unified diff, made within the request's
// deadline (StepResult.MarshalJSON has none).
type Row struct {
	Index     int           `json:"index"`
	Step      *input.Step   `json:"step,omitempty"`
	Documents []Document    `json:"documents"`
	Changes   []diff.Change `json:"changes"`
	Unified   string        `json:"unified,omitempty"`
}

// Document is an engine.Document written with Output, its output with long lines cut, in place
// of its own.
type Document struct {
	engine.Document
	Output string `json:"-"`
}

// MarshalJSON writes the document's fields with Output as its "output".
func (d Document) MarshalJSON() ([]byte, error) {
	type plain engine.Document // its fields without its MarshalJSON
	return json.Marshal(struct {
		plain
		Output string `json:"output,omitempty"`
	}{plain(d.Document), d.Output})
}

// Injection is what `sidecarlab inject -o json` writes: each document as the engine reports it
// and the pitfalls found in them.
type Injection struct {
	Documents []engine.Document `json:"documents"`
	Findings  []wording.Finding `json:"findings"`
}
