package api

import "github.com/sidecarlab/sidecarlab/wording"

// AmbientRequest is the body of POST /api/v1/ambient: a state as POST /api/v1/inject takes it
// (its install options, not a mesh of its own: the sidecar side is them with Istio's ambient
// profile), and the cluster's node count for ztunnel's share (absent or 0:
// engine.DefaultAmbientNodes; at most engine.MaxAmbientNodes).
type AmbientRequest struct {
	InjectRequest
	Nodes int `json:"nodes,omitempty"`
}

// AmbientResponse is its answer: each workload with the ambient profile's sidecar and in
// ambient, the capacity, and the same comparison in the playground.
type AmbientResponse struct {
	wording.AmbientComparison
	Compare string `json:"compare"`
}
