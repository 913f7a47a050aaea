package wording

import (
	"encoding/json"
	"strings"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/upgrade"
)

// UpgradePreview is an upgrade preview as `sidecarlab diff --upgrade` prints it, in the reader's
// language: what was carried and what not ("# " lines), then each document's changes from the
// old side to the new (the changes themselves are code: paths and values).
func (w Words) UpgradePreview(p *upgrade.Preview) string {
	var b strings.Builder
	l := w.loc()
	istio := engine.Version().Istio
	line := func(indent, s string) { b.WriteString(indent + s + "\n") }
	line("# ", l.T("wording.upgrade.head", "Revision", engine.RevisionName(p.Plan.New.Revision), "Istio", istio))
	if p.Plan.OwnTemplates {
		id := "wording.upgrade.own-templates"
		if p.Plan.OldIstio != "" {
			id = "wording.upgrade.own-templates-installed"
		}
		line("# ", l.T(id, "Old", p.Plan.OldIstio, "Istio", istio))
	}
	for _, k := range p.Plan.Keys {
		yours, _ := json.Marshal(k.Yours)
		args := []any{"Istio", istio, "Path", k.Path, "Yours", string(yours)}
		switch {
		case k.Unknown:
			line("# ", l.T("wording.upgrade.unknown", args...))
		case k.Removed:
			line("# ", l.T("wording.upgrade.removed", args...))
		case k.NoEffect:
			line("# ", l.T("wording.upgrade.no-effect", args...))
		case k.Carried && k.MovedTo != "":
			line("# ", l.T("wording.upgrade.moved", append(args, "To", k.MovedTo)...))
		case k.Carried:
			line("# ", l.T("wording.upgrade.carried", args...))
		default:
			def, _ := json.Marshal(k.Default)
			line("# ", l.T("wording.upgrade.not-carried", append(args, "Default", string(def))...))
		}
	}
	for _, f := range p.Plan.MeshUnknown {
		line("# ", l.T("wording.upgrade.mesh-unknown", "Istio", istio, "Field", f))
	}
	for _, d := range p.Documents {
		line("", w.documentLine(d.Doc, d.Kind, d.Namespace, d.Name))
		if d.OldError != "" {
			line("  ", l.T("wording.upgrade.old-failed", "Error", d.OldError))
		}
		if d.NewError != "" {
			line("  ", l.T("wording.upgrade.new-failed", "Istio", istio, "Error", d.NewError))
		}
		if !d.Changed {
			line("  ", l.T("wording.diff.no-change"))
		}
		for _, c := range d.Changes {
			line("  ", w.Change(c))
		}
	}
	return b.String()
}
