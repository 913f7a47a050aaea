package api

import (
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/input"
)

// State is everything a view depends on: the manifest, the annotation steps, the settings, and
// which Istio made it. It is what a permalink encodes (permalink.Encode) and what a short
// link stores; GET /api/v1/links/{id} answers with it.
type State struct {
	Version  int             `json:"v"`
	Istio    string          `json:"istio"`
	Manifest string          `json:"manifest"`
	Steps    []input.Step    `json:"steps,omitempty"`
	Settings engine.Settings `json:"settings,omitzero"`
}
