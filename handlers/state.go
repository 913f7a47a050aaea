package handlers

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"

	kflate "github.com/klauspost/compress/flate"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/i18n"
)

// StateVersion is the version of the state format written into links. Decoding keeps accepting
// every version that was ever written (a link must show the same thing next year);
// TestOlderStateVersion holds a v1 link (testdata/state-v1.txt) made when v1 was current.
//
// v2 added the namespace the Cluster view creates Pods in (settings.namespace: name and labels).
// A v1 link has none, which reads as "no namespace chosen": nothing to migrate.
const StateVersion = 2

// maxStateBytes bounds a decoded state, so a small link cannot inflate into a huge one.
const maxStateBytes = 4 << 20

// stateWriters are deflate writers for EncodeState, used again: making one allocates its tables,
// the larger part of encoding a state (BENCHMARKS.md); a writer Reset to a new buffer writes the same bytes. They are klauspost/compress's at
// level 6: its links are as short as the standard library's best compression (within 1 %, often
// shorter: 1,708 against 1,736 bytes for 500 Deployments), and resetting it clears far smaller
// tables than the 640 KB the standard library's best clears for every link (~40 µs of a toggle's
// page). Any deflate reader reads them, and older links read the same.
var stateWriters = sync.Pool{New: func() any {
	zw, _ := kflate.NewWriter(nil, 6)
	return zw
}}

// EncodeState turns a state into the URL-safe text of a permalink: JSON, deflated, base64url.
func EncodeState(s api.State) string {
	s.Version = StateVersion
	var buf bytes.Buffer
	zw := stateWriters.Get().(*kflate.Writer)
	zw.Reset(&buf)
	_ = json.NewEncoder(zw).Encode(s)
	_ = zw.Close()
	stateWriters.Put(zw)
	return base64.RawURLEncoding.EncodeToString(buf.Bytes())
}

// badState is a permalink that cannot be read: why, as a message id (errors.state.…) and its
// parameters, worded where the answer is written.
type badState struct {
	id   string
	args []any
}

// Error is the message in English, for logs and the tests.
func (e badState) Error() string { return e.in(i18n.For(i18n.Default)) }

// in words the message in l's language.
func (e badState) in(l *i18n.Localizer) string {
	return l.T("errors.state.unreadable", "Reason", words(l, e.id, e.args))
}

// errTruncated is a link whose end is missing: chat clients and terminals cut long links.
var errTruncated = badState{id: "errors.state.truncated"}

// DecodeState reads a permalink's state.
func DecodeState(text string) (api.State, error) {
	var s api.State
	text = strings.TrimSpace(text)
	raw, err := base64.RawURLEncoding.DecodeString(text)
	if err != nil {
		var ce base64.CorruptInputError
		if errors.As(err, &ce) && int(ce) >= len(text)-1 {
			// Only the last character is wrong: a length base64 never makes, as a cut one has.
			return s, errTruncated
		}
		return s, badState{id: "errors.state.not-base64"}
	}
	zr := flate.NewReader(bytes.NewReader(raw))
	defer zr.Close()
	js, err := io.ReadAll(io.LimitReader(zr, maxStateBytes+1))
	if errors.Is(err, io.ErrUnexpectedEOF) {
		// The compressed stream ends early: the link lost its tail.
		return s, errTruncated
	}
	if err != nil {
		return s, badState{id: "errors.state.not-deflate"}
	}
	if len(js) > maxStateBytes {
		return s, badState{id: "errors.state.too-large", args: []any{"Limit", byteSize(maxStateBytes)}}
	}
	return decodeStateJSON(js)
}

// stateSize is what a state carries that a person typed: the manifest, the steps and the install
// options — what a POST of it would carry.
func stateSize(s api.State) int64 {
	in := s.Settings.Install
	n := len(s.Manifest) + len(in.Overlay) + len(s.Settings.KubernetesVersion) + len(s.Settings.Mode) +
		len(in.Mesh.InjectorConfig) + len(in.Mesh.Values) + len(in.Mesh.MeshConfig) + len(in.Mesh.Webhooks) + len(in.Revision)
	for _, v := range s.Settings.Install.Set {
		n += len(v)
	}
	for _, st := range s.Steps {
		n += len(st.Key) + len(st.Value)
	}
	n += len(s.Settings.Namespace.Name)
	for k, v := range s.Settings.Namespace.Labels {
		n += len(k) + len(v)
	}
	return int64(n)
}

// StateJSON is a state as stored behind a short link: its JSON, with the current schema version.
func StateJSON(s api.State) []byte {
	s.Version = StateVersion
	b, _ := json.Marshal(s)
	return b
}

// decodeStateJSON reads a state's JSON and checks its schema version. Every version ever
// written is read: v1 and v2 (v2 only added settings.namespace, which a v1 state leaves empty;
// a later version that changes a field's meaning migrates the older ones here, step by step).
func decodeStateJSON(js []byte) (api.State, error) {
	var s api.State
	dec := json.NewDecoder(bytes.NewReader(js))
	if err := dec.Decode(&s); err != nil {
		return s, badState{id: "errors.state.not-state"}
	}
	switch {
	case s.Version < 1:
		return s, badState{id: "errors.state.no-version"}
	case s.Version > StateVersion:
		return s, badState{id: "errors.state.newer", args: []any{"Version", s.Version, "Max", StateVersion}}
	}
	// A namespace the API server would refuse (a link made by hand): 422, naming the field.
	if err := checkNamespace(s.Settings.Namespace); err != nil {
		return s, err
	}
	return s, nil
}
