package handlers

import (
	"errors"
	"testing"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
	"github.com/sidecarlab/sidecarlab/permalink"
)

// FuzzDecodeState feeds arbitrary link text to the state decoder: it must give a state, a
// permalink.Error or a namespace's own error (a 422 naming the field), never a panic, and a state it
// accepts must survive a round trip.
func FuzzDecodeState(f *testing.F) {
	f.Add(permalink.Encode(api.State{Manifest: "kind: Pod\n"}))
	f.Add(permalink.Encode(api.State{Manifest: testkit.Deployment, Steps: nil}))
	f.Add("")
	f.Add("not-base64!")
	f.Add("AAAA")
	// A namespace the API server would refuse: the namespace's own error, a 422 naming the field.
	f.Add(permalink.Encode(api.State{Manifest: "kind: Pod\n", Settings: engine.Settings{Namespace: engine.Namespace{Name: "Not_A_Name"}}}))
	f.Fuzz(func(t *testing.T, s string) {
		st, err := decodeState(s)
		if err != nil {
			var bad permalink.Error
			var ns *nsError
			if !errors.As(err, &bad) && !errors.As(err, &ns) {
				t.Fatalf("unexpected error type %T: %v", err, err)
			}
			return
		}
		again, err := decodeState(permalink.Encode(st))
		if err != nil || again.Manifest != st.Manifest || len(again.Steps) != len(st.Steps) {
			t.Fatalf("round trip: %v", err)
		}
	})
}
