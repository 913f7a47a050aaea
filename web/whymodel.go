package web

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/engine/provenance"
	"github.com/sidecarlab/sidecarlab/engine/upgrade"
	"github.com/sidecarlab/sidecarlab/engine/yamldoc"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/wording"
)

// WhyPage is why a field of an injected document is there: its leaves, grouped by what wrote
// them, each group with the template's lines (numbered, the ones that wrote it marked), the
// branches around them and what they read.
type WhyPage struct {
	Head    Head
	Version VersionLine
	// Path is the field asked about, Doc its document (from 1); Back the playground's view of
	// the state, at the step asked about.
	Path string
	Doc  int
	Back string
	// Groups are the field's leaves by what wrote them; Hidden counts the leaves past
	// MaxWhyLeaves, not shown.
	Groups []WhyGroup
	Hidden int
	// Sides, on a field of a two-sided view (an upgrade preview, sidecar or ambient), is why it
	// is there on each side, in place of Groups.
	Sides *WhySides
}

// WhySides is why a field of a two-sided view is there on each side: Kind is "upgrade" or
// "ambient"; Says is the answer (an upgrade's: which lines of the two templates differ, or that
// none do; ambient's: that the ambient side is the workload as written).
type WhySides struct {
	Kind  string
	Says  []string
	Sides [2]WhySide
}

// WhySide is one side: its label, and its leaves as a why page groups them (none where the
// side has not the field).
type WhySide struct {
	Label  string
	Groups []WhyGroup
	Hidden int
}

// NewWhyUpgrade is why field w changes in an upgrade, in l's language: labels are the two
// sides', source a side's template's text by side and name, and the hrefs as WhyGroups takes
// them (no step is tried on either side).
func NewWhyUpgrade(l *i18n.Localizer, w upgrade.Why, labels [2]string, source func(side int, template string) string, manifestHref, settingsHref string) *WhySides {
	u := &WhySides{Kind: "upgrade"}
	for i, side := range [][]engine.Provenance{w.Old, w.New} {
		differ := [2]map[string][]int{w.OldDiffer, w.NewDiffer}[i]
		u.Sides[i].Label = labels[i]
		u.Sides[i].Groups, u.Sides[i].Hidden = groupLeaves(l, side, func(t string) string { return source(i, t) }, manifestHref, settingsHref, tryNone, differ)
		for _, t := range slices.Sorted(maps.Keys(differ)) {
			u.Says = append(u.Says, l.N("page.why.upgrade-differ", len(differ[t]), "Side", labels[i], "Template", t, "Lines", wording.Lines(differ[t])))
		}
	}
	if len(u.Says) == 0 {
		u.Says = []string{l.T("page.why.upgrade-" + w.Unchanged())}
	}
	return u
}

// NewWhyAmbient is why a field is there on the sidecar side of a sidecar-or-ambient comparison
// (prs: its leaves there) and not, or only as written, on the ambient side: Istio changes
// nothing at admission in an ambient namespace, so the ambient side has exactly the leaves the
// manifest gives.
func NewWhyAmbient(l *i18n.Localizer, prs []engine.Provenance, labels [2]string, source func(template string) string, manifestHref, settingsHref string) *WhySides {
	u := &WhySides{Kind: "ambient", Says: []string{l.T("page.why.ambient-says")}}
	var given []engine.Provenance
	for _, p := range prs {
		if p.Source == provenance.FromInput {
			given = append(given, p)
		}
	}
	for i, side := range [][]engine.Provenance{prs, given} {
		u.Sides[i].Label = labels[i]
		u.Sides[i].Groups, u.Sides[i].Hidden = groupLeaves(l, side, source, manifestHref, settingsHref, tryNone, nil)
	}
	return u
}

// tryNone tries no step: a two-sided view's sides are not the playground's.
func tryNone(input.Step) string { return "" }

// MaxWhyLeaves bounds the leaves a why page shows: a whole added container has hundreds.
const MaxWhyLeaves = 60

// maxExcerpt bounds the template lines a group shows around what wrote it.
const maxExcerpt = 24

// WhyGroup is leaves written alike: by one template line under the same branches, or by the
// manifest, or by one function of Istio's.
type WhyGroup struct {
	// Paths are the leaves, as the field diff writes them.
	Paths []string
	// Source is "template", "input" or "code"; Says is the group's sentence.
	Source, Says string
	// Excerpt are the template's lines, numbered; a gap between two runs of lines is a line of
	// Number 0.
	Excerpt    []WhyLine
	Conditions []WhyCondition
	Inputs     []WhyInput
	// CodeHref is the function's line in Istio's pinned source, for Source "code".
	CodeHref string
}

// WhyLine is one template line: Wrote marks a line that wrote the field, Branch one of its
// branches' lines, Differs (in an upgrade) a line the other side's template has not.
type WhyLine struct {
	Number                 int
	Text                   string
	Wrote, Branch, Differs bool
}

// WhyCondition is a branch around the line, and whether its own list ran; Try, when set, is a
// step seen to change the field by taking the branch, in words, and TryHref the playground with
// it added.
type WhyCondition struct {
	Says, Try, TryHref string
}

// WhyInput is one thing the line reads, in words; Href is where it is (the manifest in the
// playground, its settings), or "".
type WhyInput struct {
	Says, Href string
}

// WhyField is what a change's why button sends: its row, document and path, as
// "STEP:DOC:PATH" (ParseWhyField reads it); an istio-iptables flag's change (args[-o]) asks about
// the args it is in.
func WhyField(step int, c ChangeView) string {
	path := c.Path
	if c.Flag != "" {
		path = strings.TrimSuffix(path, "["+c.Flag+"]")
	}
	return strconv.Itoa(step) + ":" + strconv.Itoa(c.DocIndex) + ":" + path
}

// ParseWhyField reads WhyField's "STEP:DOC:PATH".
func ParseWhyField(v string) (step, doc int, path string, ok bool) {
	a, rest, ok1 := strings.Cut(v, ":")
	b, path, ok2 := strings.Cut(rest, ":")
	step, err1 := strconv.Atoi(a)
	doc, err2 := strconv.Atoi(b)
	return step, doc, path, ok1 && ok2 && err1 == nil && err2 == nil
}

// WhyGroups groups a field's provenance (the leaves of one document at or under the path) as
// the page shows it, in l's language: source is a template's text by name, manifestHref and
// settingsHref the playground's editor and settings for the inputs' links.
// try is the playground with a condition's step added, when adding it was seen to change the
// field ("" otherwise).
func WhyGroups(l *i18n.Localizer, prs []engine.Provenance, source func(template string) string, manifestHref, settingsHref string, try func(input.Step) string) (groups []WhyGroup, hidden int) {
	return groupLeaves(l, prs, source, manifestHref, settingsHref, try, nil)
}

// groupLeaves are WhyGroups, with differ (by template) the lines to mark as not in the other
// side's template.
func groupLeaves(l *i18n.Localizer, prs []engine.Provenance, source func(template string) string, manifestHref, settingsHref string, try func(input.Step) string, differ map[string][]int) (groups []WhyGroup, hidden int) {
	if len(prs) > MaxWhyLeaves {
		prs, hidden = prs[:MaxWhyLeaves], len(prs)-MaxWhyLeaves
	}
	// Leaves written under the same branches of the same template (or by the manifest, or by one
	// function) are one group: its excerpt marks every line that wrote one of them.
	key := func(p engine.Provenance) string {
		var b strings.Builder
		b.WriteString(string(p.Source) + "\x00" + p.Template + "\x00" + p.Define)
		for _, c := range p.Conditions {
			b.WriteString("\x00" + strconv.Itoa(c.Line) + boolText(c.Taken))
		}
		if p.Code != nil {
			b.WriteString("\x00" + p.Code.URL)
		}
		return b.String()
	}
	var keys []string
	var members [][]engine.Provenance
	for _, p := range prs {
		k := key(p)
		if len(keys) > 0 && keys[len(keys)-1] == k {
			members[len(members)-1] = append(members[len(members)-1], p)
			continue
		}
		keys = append(keys, k)
		members = append(members, []engine.Provenance{p})
	}
	for _, m := range members {
		groups = append(groups, whyGroup(l, m, source, manifestHref, settingsHref, try, differ))
	}
	return groups, hidden
}

// whyGroup is a group of leaves written alike (WhyGroups).
func whyGroup(l *i18n.Localizer, ps []engine.Provenance, source func(string) string, manifestHref, settingsHref string, try func(input.Step) string, differ map[string][]int) WhyGroup {
	p := ps[0]
	g := WhyGroup{Source: string(p.Source)}
	var wrote []int
	for _, q := range ps {
		g.Paths = append(g.Paths, q.Path)
		for _, n := range q.Lines {
			if !slices.Contains(wrote, n) {
				wrote = append(wrote, n)
			}
		}
	}
	slices.Sort(wrote)
	switch p.Source {
	case provenance.FromTemplate:
		id := "page.why.template"
		if p.Define != "" {
			id = "page.why.define"
		}
		if p.Whose == "mesh" {
			id += "-mesh" // the installation's own template, not Istio's
		}
		g.Says = l.N(id, len(wrote), "Template", p.Template, "Define", p.Define, "Lines", wording.Lines(wrote))
		g.Excerpt = excerpt(source(p.Template), wrote, p.Conditions, differ[p.Template])
		for _, c := range p.Conditions {
			shown := c
			shown.Text = yamldoc.Clip(c.Text)
			wc := WhyCondition{Says: wording.In(l).Branch(shown)}
			if c.Try != nil {
				if wc.TryHref = try(*c.Try); wc.TryHref != "" {
					wc.Try = l.T("page.why.try", "Step", c.Try.Cause())
				}
			}
			g.Conditions = append(g.Conditions, wc)
		}
		for _, q := range ps {
			for _, in := range q.Inputs {
				if w := whyInput(l, in, manifestHref, settingsHref); !slices.Contains(g.Inputs, w) {
					g.Inputs = append(g.Inputs, w)
				}
			}
		}
	case provenance.FromInput:
		g.Says = l.T("page.why.input")
		if p.InputLine > 0 {
			g.Says = l.T("page.why.input-line", "Line", p.InputLine)
		}
	case provenance.FromCode:
		g.Says = l.T("page.why.code", "Func", p.Code.Func)
		g.CodeHref = p.Code.URL
	}
	return g
}

// whyInput is one input in words, linked to where the reader changes it.
func whyInput(l *i18n.Localizer, in engine.ProvenanceInput, manifestHref, settingsHref string) WhyInput {
	w := WhyInput{Says: wording.In(l).Reads(in)}
	switch in.Kind {
	case provenance.InputValues, provenance.InputMeshConfig, provenance.InputProxyConfig:
		w.Href = settingsHref
	case provenance.InputAnnotation, provenance.InputLabel:
		w.Href = manifestHref
	}
	return w
}

// excerpt are the template's lines from the outermost branch to the last that wrote a field,
// at most maxExcerpt of them: past that, the branches' lines and those around the ones that
// wrote, with a gap between (a line of Number 0).
func excerpt(text string, wrote []int, conds []engine.ProvenanceCondition, differ []int) []WhyLine {
	lines := strings.Split(text, "\n")
	if len(wrote) == 0 {
		return nil
	}
	branch := map[int]bool{}
	first, last := wrote[0], wrote[len(wrote)-1]
	for _, c := range conds {
		branch[c.Line] = true
		first = min(first, c.Line)
	}
	want := map[int]bool{}
	if last-first < maxExcerpt {
		for n := first; n <= last+1; n++ {
			want[n] = true
		}
	} else {
		for n := range branch {
			want[n] = true
		}
		for _, w := range wrote {
			for n := max(1, w-2); n <= w+1; n++ {
				want[n] = true
			}
		}
	}
	var out []WhyLine
	prev := 0
	for n := 1; n <= len(lines); n++ {
		if !want[n] {
			continue
		}
		if prev != 0 && n != prev+1 {
			out = append(out, WhyLine{})
		}
		out = append(out, WhyLine{Number: n, Text: yamldoc.Clip(lines[n-1]), Wrote: slices.Contains(wrote, n), Branch: branch[n], Differs: slices.Contains(differ, n)})
		prev = n
	}
	return out
}

func boolText(b bool) string {
	if b {
		return "t"
	}
	return "f"
}
