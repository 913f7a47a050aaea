package handlers

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"errors"
	"testing"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

// FuzzDecodeState feeds arbitrary link text to the state decoder: it must give a state, a
// badState or a namespace's own error (a 422 naming the field), never a panic, and a state it
// accepts must survive a round trip.
func FuzzDecodeState(f *testing.F) {
	f.Add(EncodeState(api.State{Manifest: "kind: Pod\n"}))
	f.Add(EncodeState(api.State{Manifest: testkit.Deployment, Steps: nil}))
	f.Add("")
	f.Add("not-base64!")
	f.Add("AAAA")
	// A namespace the API server would refuse: the namespace's own error, a 422 naming the field.
	f.Add(EncodeState(api.State{Manifest: "kind: Pod\n", Settings: engine.Settings{Namespace: engine.Namespace{Name: "Not_A_Name"}}}))
	f.Fuzz(func(t *testing.T, s string) {
		st, err := DecodeState(s)
		if err != nil {
			var bad badState
			var ns *nsError
			if !errors.As(err, &bad) && !errors.As(err, &ns) {
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

// TestStateNeedsItsVersion: a permalink's JSON without its version ("v") is refused as one,
// version 1 and this version are read, and one from a later version is refused as newer.
func TestStateNeedsItsVersion(t *testing.T) {
	link := func(js string) string {
		var buf bytes.Buffer
		zw, _ := flate.NewWriter(&buf, flate.BestCompression)
		_, _ = zw.Write([]byte(js))
		_ = zw.Close()
		return base64.RawURLEncoding.EncodeToString(buf.Bytes())
	}
	for js, want := range map[string]string{
		`{"manifest":"kind: Pod\n"}`:         "errors.state.no-version",
		`{"v":0,"manifest":"kind: Pod\n"}`:   "errors.state.no-version",
		`{"v":1,"manifest":"kind: Pod\n"}`:   "",
		`{"v":999,"manifest":"kind: Pod\n"}`: "errors.state.newer",
	} {
		_, err := DecodeState(link(js))
		var bad badState
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v, want it read", js, err)
		case want != "" && (!errors.As(err, &bad) || bad.id != want):
			t.Errorf("%s: %v, want %s", js, err, want)
		}
	}
}
