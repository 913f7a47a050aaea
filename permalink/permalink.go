// Package permalink is the codec of sidecarlab's links: a playground state (api.State) as the URL-safe
// text of a permalink (JSON, deflated, base64url), and as the JSON a short link keeps. It reads
// every version of the format ever written: a link must show the same thing next year.
package permalink

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	kflate "github.com/klauspost/compress/flate"

	"github.com/sidecarlab/sidecarlab/api"
)

// Version is the version of the state format written into links. Decoding keeps accepting
// every version that was ever written; handlers' TestOlderStateVersion holds a v1 link
// (testdata/state-v1.txt) made when v1 was current.
//
// v2 added the namespace the Cluster view creates Pods in (settings.namespace: name and labels).
// A v1 link has none, which reads as "no namespace chosen": nothing to migrate.
const Version = 2

// MaxBytes bounds a decoded state, so a small link cannot inflate into a huge one.
const MaxBytes = 4 << 20

// writers are deflate writers for Encode, used again: making one allocates its tables, the
// larger part of encoding a state (BENCHMARKS.md); a writer Reset to a new buffer writes the
// same bytes. They are klauspost/compress's at level 6: its links are as short as the standard
// library's best compression (within 1 %, often shorter: 1,708 against 1,736 bytes for 500
// Deployments), and resetting it clears far smaller tables than the 640 KB the standard
// library's best clears for every link (~40 µs of a toggle's page). Any deflate reader reads
// them, and older links read the same.
var writers = sync.Pool{New: func() any {
	zw, _ := kflate.NewWriter(nil, 6)
	return zw
}}

// Encode turns a state into the URL-safe text of a permalink: JSON, deflated, base64url.
func Encode(s api.State) string {
	s.Version = Version
	var buf bytes.Buffer
	zw := writers.Get().(*kflate.Writer)
	zw.Reset(&buf)
	_ = json.NewEncoder(zw).Encode(s)
	_ = zw.Close()
	writers.Put(zw)
	return base64.RawURLEncoding.EncodeToString(buf.Bytes())
}

// Error is a permalink that cannot be read: why, as the id of its message in the catalogs
// (errors.state.…) and the message's parameters, worded where the answer is written.
type Error struct {
	ID   string
	Args []any
}

// Error names the reason by its id, for logs; the reader is told in words (handlers).
func (e Error) Error() string { return fmt.Sprintf("unreadable link: %s %v", e.ID, e.Args) }

// Bytes is a parameter of an Error that is a size, in bytes (worded as "4 MiB").
type Bytes int64

// ErrTruncated is a link whose end is missing: chat clients and terminals cut long links.
var ErrTruncated = Error{ID: "errors.state.truncated"}

// Decode reads a permalink's state.
func Decode(text string) (api.State, error) {
	var s api.State
	text = strings.TrimSpace(text)
	raw, err := base64.RawURLEncoding.DecodeString(text)
	if err != nil {
		var ce base64.CorruptInputError
		if errors.As(err, &ce) && int(ce) >= len(text)-1 {
			// Only the last character is wrong: a length base64 never makes, as a cut one has.
			return s, ErrTruncated
		}
		return s, Error{ID: "errors.state.not-base64"}
	}
	zr := flate.NewReader(bytes.NewReader(raw))
	defer zr.Close()
	js, err := io.ReadAll(io.LimitReader(zr, MaxBytes+1))
	if errors.Is(err, io.ErrUnexpectedEOF) {
		// The compressed stream ends early: the link lost its tail.
		return s, ErrTruncated
	}
	if err != nil {
		return s, Error{ID: "errors.state.not-deflate"}
	}
	if len(js) > MaxBytes {
		return s, Error{ID: "errors.state.too-large", Args: []any{"Limit", Bytes(MaxBytes)}}
	}
	return DecodeJSON(js)
}

// JSON is a state as stored behind a short link: its JSON, with the current version.
func JSON(s api.State) []byte {
	s.Version = Version
	b, _ := json.Marshal(s)
	return b
}

// DecodeJSON reads a state's JSON and checks its version. Every version ever written is read:
// v1 and v2 (v2 only added settings.namespace, which a v1 state leaves empty; a later version
// that changes a field's meaning migrates the older ones here, step by step).
func DecodeJSON(js []byte) (api.State, error) {
	var s api.State
	if err := json.NewDecoder(bytes.NewReader(js)).Decode(&s); err != nil {
		return s, Error{ID: "errors.state.not-state"}
	}
	switch {
	case s.Version < 1:
		return s, Error{ID: "errors.state.no-version"}
	case s.Version > Version:
		return s, Error{ID: "errors.state.newer", Args: []any{"Version", s.Version, "Max", Version}}
	}
	return s, nil
}
