package upgrade

import (
	"context"
	"errors"
	"maps"
	"slices"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/diff"
	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/engine/provenance"
)

// Why is where one field an upgrade changes came from on each side, and which of the lines
// that wrote it differ between the two sides' templates: the template change that changed it.
// A field whose lines are the same on both sides changed by what they read (a values key the
// new release sets, a carried key left out) or by Istio's code: the leaves' inputs say which.
type Why struct {
	Doc  int    `json:"doc"`
	Path string `json:"path"`
	// Old and New are the field's leaves on each side (engine.FieldProvenance): none on a side
	// that has not the field.
	Old []engine.Provenance `json:"old"`
	New []engine.Provenance `json:"new"`
	// OldDiffer and NewDiffer are, by template name, the side's lines that wrote the field or
	// hold its branches and that the other side's template of that name does not have as they
	// are (all of them, when the other side has no template of that name).
	OldDiffer map[string][]int `json:"oldDiffer,omitempty"`
	NewDiffer map[string][]int `json:"newDiffer,omitempty"`
}

// Explain says why each field of p changed (Why, in the order of p's changes). manifest, steps
// and s are p's (NewPreview).
func (p *Preview) Explain(ctx context.Context, e Engine, manifest []byte, steps []input.Step, s engine.Settings) ([]Why, error) {
	sides, err := ExplainSides(ctx, e, manifest, steps, s, p.Plan.New)
	if err != nil {
		return nil, err
	}
	out := []Why{}
	for _, d := range p.Documents {
		for _, c := range d.Changes {
			out = append(out, sides.Why(c.Doc, c.OldPath, c.Path))
		}
	}
	return out, nil
}

// Sides are both sides of an upgrade explained (engine.Explain, which runs a mesh's own
// templates where its injection runs them), with their templates to compare line by line.
type Sides struct {
	prov   [2][]engine.Provenance
	ins    [2]*engine.Install
	differ map[string][2]map[int]bool // by template name, made when first asked for
}

// ExplainSides explains a manifest injected by an upgrade's old side (s, whose install options
// carry the mesh) and its new side (s with the install options next: Plan.New). A side that
// refuses every document has no leaves.
func ExplainSides(ctx context.Context, e Engine, manifest []byte, steps []input.Step, s engine.Settings, next engine.InstallOptions) (*Sides, error) {
	ns := s
	ns.Install = next
	x := &Sides{differ: map[string][2]map[int]bool{}}
	for i, set := range []engine.Settings{s, ns} {
		var err error
		if x.ins[i], err = e.Install(ctx, set.Install); err != nil {
			return nil, err
		}
		if x.prov[i], err = e.Explain(ctx, manifest, steps, set); err != nil && !refusal(err) {
			return nil, err
		}
	}
	return x, nil
}

// Why is field path of document doc on both sides (oldPath: where the old side has it, when it
// moved; "" when it did not).
func (x *Sides) Why(doc int, oldPath, path string) Why {
	w := Why{Doc: doc, Path: path}
	if oldPath == "" {
		oldPath = path
	}
	w.Old, _, _ = engine.FieldProvenance(x.prov[0], doc, oldPath)
	w.New, _, _ = engine.FieldProvenance(x.prov[1], doc, path)
	w.OldDiffer = differLines(w.Old, func(name string) map[int]bool { return x.differing(name)[0] })
	w.NewDiffer = differLines(w.New, func(name string) map[int]bool { return x.differing(name)[1] })
	return w
}

// Template is side i's (0 the old, 1 the new) template of that name, as Istio decoded it.
func (x *Sides) Template(i int, name string) string { return x.ins[i].TemplateText(name) }

// differing are the lines of template name that differ between the sides, on each side.
func (x *Sides) differing(name string) [2]map[int]bool {
	if d, ok := x.differ[name]; ok {
		return d
	}
	a, b := diff.DifferingLines(x.ins[0].TemplateText(name), x.ins[1].TemplateText(name))
	d := [2]map[int]bool{set(a), set(b)}
	x.differ[name] = d
	return d
}

// Unchanged says why a field changed when none of its lines differ: "same" when a template
// wrote it on a side (the same lines read other values), "code" when only Istio's code and the
// manifest did (the code writes what the templates' output makes it: the status annotation
// lists what they added).
func (w Why) Unchanged() string {
	for _, l := range append(slices.Clip(w.Old), w.New...) {
		if l.Source == provenance.FromTemplate {
			return "same"
		}
	}
	return "code"
}

// differLines are, by template, the lines of leaves (their own and their branches') that
// differ says the other side's template has not; nil when none do.
func differLines(leaves []engine.Provenance, differ func(template string) map[int]bool) map[string][]int {
	var out map[string][]int
	for _, l := range leaves {
		if l.Template == "" {
			continue
		}
		lines := slices.Clone(l.Lines)
		for _, c := range l.Conditions {
			lines = append(lines, c.Line)
		}
		d := differ(l.Template)
		for _, n := range lines {
			if d[n] && !slices.Contains(out[l.Template], n) {
				if out == nil {
					out = map[string][]int{}
				}
				out[l.Template] = append(out[l.Template], n)
			}
		}
	}
	for _, name := range slices.Collect(maps.Keys(out)) {
		slices.Sort(out[name])
	}
	return out
}

// refusal says err is Istio's refusal of a document (engine.Explain's answer when it refuses
// every one).
func refusal(err error) bool {
	var ie *input.Error
	return errors.As(err, &ie) && ie.Doc > 0
}

func set(lines []int) map[int]bool {
	m := make(map[int]bool, len(lines))
	for _, n := range lines {
		m[n] = true
	}
	return m
}
