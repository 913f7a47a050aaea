package web

import (
	"slices"
	"strconv"
	"strings"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/wording"
)

// FindingMarks puts each finding about something the person pasted on its input line, where
// engine.Locate finds it — for a field inside a literal-block proxy.istio.io/config, that
// field's line; for one inside a one-line value, the annotation's — so the editor can mark it
// where the eye is, with the finding's words in w's language. A finding about the output (what
// injection adds), or about an annotation a step set (or changed, or removed), has no input
// line: the banner alone shows it.
func FindingMarks(w wording.Words, fs []engine.Finding, docs []engine.Document, steps []input.Step) []Mark {
	// Only the findings that can have a line are looked for (which parses their documents).
	var located []engine.Finding
	for _, f := range fs {
		if f.Doc >= 1 && f.Doc <= len(docs) && !slices.ContainsFunc(steps, func(s input.Step) bool { return setBy(f.Path, s.Key) }) {
			located = append(located, f)
		}
	}
	var out []Mark
	for i, l := range engine.Locate(docs, located) {
		if l.Exact || l.InValue {
			f := located[i]
			out = append(out, Mark{Line: l.Line, Severity: string(f.Severity), Message: w.Message(f), Quote: f.Params["description"]})
		}
	}
	return out
}

// setBy is whether a finding's path is about the annotation key (a step's), or inside its value.
func setBy(path, key string) bool {
	return strings.Contains(path, "["+strconv.Quote(key)+"]")
}
