package permalink

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"errors"
	"testing"

	"github.com/sidecarlab/sidecarlab/api"
)

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
		_, err := Decode(link(js))
		var bad Error
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v, want it read", js, err)
		case want != "" && (!errors.As(err, &bad) || bad.ID != want):
			t.Errorf("%s: %v, want %s", js, err, want)
		}
	}
}

// TestRoundTrip: a state comes back from its link and from its JSON as it went in, with the
// current version.
func TestRoundTrip(t *testing.T) {
	in := api.State{Manifest: "kind: Pod\n", Steps: nil}
	for _, decode := range []func() (api.State, error){
		func() (api.State, error) { return Decode(Encode(in)) },
		func() (api.State, error) { return DecodeJSON(JSON(in)) },
	} {
		out, err := decode()
		if err != nil || out.Manifest != in.Manifest || out.Version != Version {
			t.Fatalf("%+v, %v", out, err)
		}
	}
}

// TestTruncated: a link cut short, in its base64 or in its deflate stream, says so.
func TestTruncated(t *testing.T) {
	link := Encode(api.State{Manifest: "kind: Pod\nmetadata:\n  name: a-pod-with-a-long-name\n"})
	for _, cut := range []string{link[:len(link)-1], link[:len(link)/2]} {
		var e Error
		if _, err := Decode(cut); !errors.As(err, &e) || e.ID != ErrTruncated.ID {
			t.Errorf("%d of %d characters: %v, want ErrTruncated", len(cut), len(link), err)
		}
	}
}
