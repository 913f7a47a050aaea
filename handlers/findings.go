package handlers

import (
	"encoding/json"
	"fmt"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/explain"
	"github.com/sidecarlab/sidecarlab/web"
)

// findingViews shapes the last row's pitfalls, each fix as the steps its button adds.
func findingViews(fs []engine.Finding, docs []engine.Document) []web.FindingView {
	var out []web.FindingView
	for _, f := range fs {
		fv := web.FindingView{Severity: string(f.Severity), Check: f.Check, Path: f.Path, Message: explain.Message(f), FixText: explain.FixText(f)}
		if f.Doc >= 1 && f.Doc <= len(docs) {
			d := docs[f.Doc-1]
			fv.Doc = fmt.Sprintf("document %d %s/%s", f.Doc, d.Kind, d.Name)
		}
		if f.Fix != nil && len(f.Fix.Steps) > 0 {
			b, _ := json.Marshal(f.Fix.Steps)
			fv.FixSteps = string(b)
		}
		out = append(out, fv)
	}
	return out
}
