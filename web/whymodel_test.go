package web

import (
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/engine/provenance"
	"github.com/sidecarlab/sidecarlab/i18n"
)

// TestWhyGroups: leaves written under the same branches of one template are one group, whose
// excerpt marks each line that wrote one of them and its branches' lines; a template of the
// installation's own is said to be the installation's; a gap between far lines is a line 0.
func TestWhyGroups(t *testing.T) {
	src := strings.Repeat("x\n", 60)
	cond := []engine.ProvenanceCondition{{Kind: "if", Text: ".A", Line: 2, Taken: true}}
	prs := []engine.Provenance{
		{Path: "a", Source: provenance.FromTemplate, Template: "t", Whose: "mesh", Line: 4, Lines: []int{4}, Conditions: cond},
		{Path: "b", Source: provenance.FromTemplate, Template: "t", Whose: "mesh", Line: 5, Lines: []int{5}, Conditions: cond},
		{Path: "c", Source: provenance.FromTemplate, Template: "t", Whose: "mesh", Line: 50, Lines: []int{50}, Conditions: []engine.ProvenanceCondition{{Kind: "if", Text: ".B", Line: 3, Taken: false}}},
		{Path: "d", Source: provenance.FromInput, InputLine: 7},
	}
	groups, hidden := WhyGroups(i18n.For("en"), prs, func(string) string { return src }, "/m", "/s", func(input.Step) string { return "" })
	if hidden != 0 || len(groups) != 3 || strings.Join(groups[0].Paths, ",") != "a,b" {
		t.Fatalf("%d groups (%d hidden): %+v", len(groups), hidden, groups)
	}
	if !strings.Contains(groups[0].Says, "lines 4, 5 of your installation's template t") {
		t.Errorf("says %q", groups[0].Says)
	}
	var wrote, branch []int
	for _, l := range groups[0].Excerpt {
		if l.Wrote {
			wrote = append(wrote, l.Number)
		}
		if l.Branch {
			branch = append(branch, l.Number)
		}
	}
	if len(wrote) != 2 || wrote[0] != 4 || len(branch) != 1 || branch[0] != 2 {
		t.Errorf("wrote %v, branch %v", wrote, branch)
	}
	gap := false
	for _, l := range groups[1].Excerpt {
		gap = gap || l.Number == 0
	}
	if !gap {
		t.Errorf("lines 3 and 50 shown without a gap: %+v", groups[1].Excerpt)
	}
	if groups[2].Says != "Yours: line 7 of your manifest gives it" {
		t.Errorf("the input's: %q", groups[2].Says)
	}
}
