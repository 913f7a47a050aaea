package api

import "github.com/sidecarlab/sidecarlab/engine/upgrade"

// UpgradeRequest is the body of POST /api/v1/upgrade: a state whose mesh is the old side (as
// POST /api/v1/inject takes it: meshConfigMaps, settings.install.mesh or clusterMesh), and, when
// given, exactly the values keys to carry (absent: all that differ but global.hub and global.tag).
type UpgradeRequest struct {
	InjectRequest
	Carry *[]string `json:"carry,omitempty"`
	// Explain asks, for each field that changes, why it is there on each side (upgrade.Why).
	Explain bool `json:"explain,omitempty"`
}

// UpgradeResponse is its answer: the plan, each document's changes from the old side to the new,
// and Link, the preview in the playground.
type UpgradeResponse struct {
	upgrade.Preview
	Link string `json:"preview"`
	// Why is, when the request asks to explain, why each changed field is there on each side,
	// in the order of the documents' changes.
	Why []upgrade.Why `json:"why,omitempty"`
}
