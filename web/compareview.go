package web

import "strings"

// ComparePage shows one state beside a variant of it.
type ComparePage struct {
	Head    Head
	Version VersionLine
	// Lab is the lab's path (the Job two ways is one of its steps).
	Lab  LabNav
	A, B CompareSide
	// Changes is the field diff from A's output to B's.
	Changes []ChangeView
	// Documents say, for a manifest of several documents, which changed and how much.
	Documents []CompareDoc
	// Upgrade is the plan of an upgrade preview (A: the user's mesh, B: the embedded Istio with
	// its settings carried), nil for any other comparison.
	Upgrade *UpgradePlanView
	// Presenting is the view's presenter mode.
	Presenting Presenting
}

// PresentPhases draws each side's lifecycle a phase a diagram when the page is presented (a
// slide each, as the playground's slides do).
func (c *ComparePage) PresentPhases() {
	for _, side := range []*CompareSide{&c.A, &c.B} {
		for i := range side.Lifecycles {
			side.Lifecycles[i].Phases = c.Presenting.On
		}
	}
}

// Presenting is presenter mode of a view that is not the playground's (a comparison, an upgrade
// preview, sidecar or ambient): its slides are the view's parts, a screenful each (main.js pages
// them), with the keys and type of the playground's slides.
type Presenting struct {
	// On is presenter mode; Href opens it, ExitHref leaves it.
	On             bool
	Href, ExitHref string
	// Label names the view on its slides.
	Label string
}

// CompareDoc is one document of a comparison and how many of its fields changed.
type CompareDoc struct {
	Doc     string
	Changes int
}

// UpgradePlanView is how an upgrade preview carried the mesh's settings, as a form that previews
// again with other keys: the old state (encoded), each values key that differs from the embedded
// chart's defaults, and the mesh config's fields the embedded Istio does not know.
type UpgradePlanView struct {
	State    string
	Embedded string
	// OldIstio is set when the old side's templates are not the embedded Istio's: the Istio that
	// installed them ("?" when their labels do not say).
	OldIstio    string
	Keys        []UpgradeKeyView
	MeshUnknown []string
	// Set are install options the new side also sets: a Cluster tab's fix that a --set cannot
	// apply to the mesh itself.
	Set []string
}

// SetList is the options the new side also sets, as one line of code.
func (u *UpgradePlanView) SetList() string { return strings.Join(u.Set, ", ") }

// UpgradeKeyView is one values key of an upgrade preview: the mesh's value and the embedded
// chart's default, as JSON.
type UpgradeKeyView struct {
	Path, Yours, Default, MovedTo       string
	Carried, Unknown, Removed, NoEffect bool
}

// CompareSide is one of the two states.
type CompareSide struct {
	Label      string
	Permalink  string
	Error      string
	Lifecycles []LifecycleView
	Output     string
	// OutputCut, when set, says Output is the first part of the side's output (the side's link
	// has all of it).
	OutputCut string
	// OnlyHere are the pitfalls this side has and the other has not.
	OnlyHere []string
	// Namespace is the namespace the Pods are created in, with its labels; Admission each
	// document's verdict there (Istio's webhooks, then Pod Security Admission).
	Namespace string
	Admission []CompareVerdict
	// DevImage says whose the embedded Istio's development image is, when the side's output has
	// it, as Results.DevImage does.
	DevImage string
}

// CompareVerdict is a document's Pod as the API server admits it: the document, admitted or
// not, and Pod Security's (or the webhook's) words when not.
type CompareVerdict struct {
	Doc      string
	Admitted bool
	Why      []string
}

// WhyFields are what the upgrade's why buttons send besides their field (the step unread): the
// preview's state and plan, so that the why page explains the same two sides.
func (u *UpgradePlanView) WhyFields() []Hidden {
	out := []Hidden{{Name: "s", Value: u.State}, {Name: "upgrade", Value: "1"}, {Name: "chosen", Value: "1"}}
	for _, k := range u.Keys {
		if k.Carried {
			out = append(out, Hidden{Name: "carry", Value: k.Path})
		}
	}
	for _, o := range u.Set {
		out = append(out, Hidden{Name: "set", Value: o})
	}
	return out
}
