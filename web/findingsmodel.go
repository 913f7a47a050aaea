package web

import (
	"encoding/json"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/wording"
)

// NewPitfallBanner announces findings above the results: how many, and the gist of the most
// severe (the first of them in the checks' order), linking to the Pitfalls tab.
func NewPitfallBanner(w wording.Words, fs []engine.Finding, href string) PitfallBanner {
	if len(fs) == 0 {
		return PitfallBanner{}
	}
	top := fs[0]
	for _, f := range fs[1:] {
		if f.Severity.Rank() > top.Severity.Rank() {
			top = f
		}
	}
	return PitfallBanner{Count: len(fs), Gist: w.Gist(top), Quote: top.Params["description"], Href: href, MoreThanOne: len(fs) > 1}
}

// FindingViews shapes the last row's pitfalls in l's language, each fix as the steps its button
// adds.
func FindingViews(l *i18n.Localizer, fs []engine.Finding, docs []engine.Document) []FindingView {
	w := wording.In(l)
	var out []FindingView
	for _, f := range fs {
		fv := FindingView{Severity: string(f.Severity), Check: string(f.Check), Path: f.Path, Message: w.Message(f), FixText: w.FixText(f), Quote: f.Params["description"]}
		if f.Doc >= 1 && f.Doc <= len(docs) {
			d := docs[f.Doc-1]
			fv.Doc = l.T("results.pitfalls.doc", "Doc", f.Doc, "Kind", d.Kind, "Name", d.Name)
		}
		if f.Fix != nil && len(f.Fix.Steps) > 0 {
			b, _ := json.Marshal(f.Fix.Steps)
			fv.FixSteps = string(b)
		}
		out = append(out, fv)
	}
	return out
}
