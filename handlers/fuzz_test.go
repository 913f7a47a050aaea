package handlers

import (
	"testing"
)

// FuzzDecodeState feeds arbitrary link text to the state decoder: it must give a state or a
// badState, never a panic, and a state it accepts must survive a round trip.
func FuzzDecodeState(f *testing.F) {
	f.Add(EncodeState(State{Manifest: "kind: Pod\n"}))
	f.Add(EncodeState(State{Manifest: deploymentYAML, Steps: nil}))
	f.Add("")
	f.Add("not-base64!")
	f.Add("AAAA")
	f.Fuzz(func(t *testing.T, s string) {
		st, err := DecodeState(s)
		if err != nil {
			if _, ok := err.(badState); !ok {
				t.Fatalf("unexpected error type %T: %v", err, err)
			}
			return
		}
		again, err := DecodeState(EncodeState(st))
		if err != nil || again.Manifest != st.Manifest || len(again.Steps) != len(st.Steps) {
			t.Fatalf("round trip: %v", err)
		}
	})
}
