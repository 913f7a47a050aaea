package web

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/diff"
	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/wording"
)

// StepTitle sets a step's title and what its changes say caused them: "key=value", or "remove
// key". A value over MaxTitleValue bytes is a preview in the title, and the whole of it is the
// step's Value, which the timeline shows; its changes name the step instead of repeating it.
func StepTitle(l *i18n.Localizer, sv *StepView, st input.Step) {
	if st.Remove {
		sv.Cause, sv.Title = st.String(), l.T("results.step.remove", "Key", st.Key)
		return
	}
	preview, cut := CutText(l, st.Value, MaxTitleValue)
	sv.Title, sv.Cause = st.Key+"="+preview, st.Key+"="+preview
	if cut {
		sv.Cause, sv.Value = l.T("results.step.cause-ref", "Key", st.Key, "Step", sv.Index), st.Value
	}
}

// ChangeSet is a step's changes as the diff tab shows them: injection's own and the
// serializer's, at most maxChanges of them from the first lim documents, and how many are not
// shown. Shared between requests: never modified once made.
type ChangeSet struct {
	// Count is injection's changes, shown or not; Hidden those not shown (of either); Shown and
	// ShownSerializer those shown, of injection's and of the serializer's.
	Count, Hidden, Shown, ShownSerializer int
	Changes, Serializer                   []ChangeView
}

// StepChanges is the ChangeSet of row step, its rows made (ChangeViewOf) in l's language.
func StepChanges(l *i18n.Localizer, changes []diff.Change, docs []engine.Document, lim, maxChanges int, multi bool, step int) ChangeSet {
	return selectChanges(changes, lim, maxChanges, func(cs *ChangeSet, c diff.Change) {
		if c.Serializer {
			cs.Serializer = append(cs.Serializer, ChangeViewOf(l, c, docs, multi, step))
		} else {
			cs.Changes = append(cs.Changes, ChangeViewOf(l, c, docs, multi, step))
		}
	})
}

// CountChanges is the ChangeSet's counts alone, without its rows: what a step's heading says on
// a tab that does not list the changes.
func CountChanges(changes []diff.Change, lim, maxChanges int) ChangeSet {
	return selectChanges(changes, lim, maxChanges, func(*ChangeSet, diff.Change) {})
}

// selectChanges counts changes as the diff tab shows them and calls shown for each it shows.
func selectChanges(changes []diff.Change, lim, maxChanges int, shown func(*ChangeSet, diff.Change)) ChangeSet {
	var cs ChangeSet
	for _, c := range changes {
		if !c.Serializer {
			cs.Count++
		}
		if c.Doc > lim || cs.Shown+cs.ShownSerializer >= maxChanges {
			cs.Hidden++
			continue
		}
		if c.Serializer {
			cs.ShownSerializer++
		} else {
			cs.Shown++
		}
		shown(&cs, c)
	}
	return cs
}

// changeKinds are the message ids of the kinds of change.
var changeKinds = map[diff.ChangeKind]string{
	diff.Added: "results.diff.kind.added", diff.Removed: "results.diff.kind.removed",
	diff.Changed: "results.diff.kind.changed", diff.Moved: "results.diff.kind.moved",
}

// ChangeViewOf is one change as the diff shows it, worded in l's language: a change of row step
// of the timeline, or, when step is negative, of the one diff of the compare page.
func ChangeViewOf(l *i18n.Localizer, c diff.Change, docs []engine.Document, multi bool, step int) ChangeView {
	cv := ChangeView{Kind: string(c.Kind), KindText: l.T(changeKinds[c.Kind]), Path: c.Path, DocIndex: c.Doc}
	cv.Anchor, cv.LinkLabel = deepLink(l, c, multi, step)
	if multi && c.Doc >= 1 && c.Doc <= len(docs) {
		d := docs[c.Doc-1]
		cv.Doc = l.T("results.diff.doc", "Doc", c.Doc, "Kind", d.Kind, "Name", d.Name)
	}
	show := func(v any, omitted int) Value { return withSummary(l, ShowValueIn(l, v, omitted)) }
	if c.Flag != "" {
		// One flag of istio-iptables' command line: shown as written, with what it means.
		cv.Flag, cv.FlagMeaning = c.Flag, wording.In(l).IptablesFlag(c.FlagName)
		show = func(v any, omitted int) Value {
			if omitted > 0 {
				return withSummary(l, ShowValueIn(l, v, omitted))
			}
			return FlagValue(c.Flag, v)
		}
	}
	switch c.Kind {
	case diff.Added:
		cv.Sign, cv.New = "+", show(c.New, c.NewBytes)
	case diff.Removed:
		cv.Sign, cv.Old = "−", show(c.Old, c.OldBytes)
	case diff.Changed:
		cv.Sign, cv.Old, cv.New = "~", show(c.Old, c.OldBytes), show(c.New, c.NewBytes)
	case diff.Moved:
		cv.Sign = "↕"
		if c.OldPath != "" {
			cv.Moved = l.T("results.diff.moved-from", "Path", c.OldPath)
		} else {
			cv.Moved = l.T("results.diff.moved-position", "From", c.From+1, "To", c.To+1)
		}
	}
	return cv
}

// deepLink is a change's deep link fragment and the words that name it for a screen reader. The
// fragment reads like a query: "step=N&" names the change's row of the timeline (the same path
// changes in several steps), "doc=D&" its document on a page of several (the same path changes in
// each), and "path=" its path, escaped, last so that a path may hold any character. A link made
// before steps were named, "path=…" alone, still opens the first row with that path (the page's
// script, highlightDeepLink).
func deepLink(l *i18n.Localizer, c diff.Change, multi bool, step int) (anchor, label string) {
	var b strings.Builder
	if step >= 0 {
		fmt.Fprintf(&b, "step=%d&", step)
	}
	if multi {
		fmt.Fprintf(&b, "doc=%d&", c.Doc)
	}
	b.WriteString("path=" + url.PathEscape(c.Path))
	switch {
	case step >= 0 && multi:
		label = l.T("results.diff.link-label-step-doc", "Path", c.Path, "Step", step, "Doc", c.Doc)
	case step >= 0:
		label = l.T("results.diff.link-label-step", "Path", c.Path, "Step", step)
	case multi:
		label = l.T("results.diff.link-label-doc", "Path", c.Path, "Doc", c.Doc)
	default:
		label = l.T("results.diff.link-label", "Path", c.Path)
	}
	return b.String(), label
}

// withSummary is v with the words its fold shows (its name, if it has one, and its length),
// made with the memoised row rather than on every render.
func withSummary(l *i18n.Localizer, v Value) Value {
	switch {
	case !v.Block || !v.Fold:
	case v.Name != "":
		v.Summary = l.N("results.diff.fold-named", v.Lines, "Name", v.Name)
	default:
		v.Summary = l.N("results.diff.fold", v.Lines)
	}
	return v
}

// UnifiedLines are a unified diff's lines, each with its kind for the page's marks: a file header,
// a hunk, an added, a removed or a context line.
func UnifiedLines(u string) []DiffLine {
	if u == "" {
		return nil
	}
	var out []DiffLine
	for _, l := range strings.Split(strings.TrimSuffix(u, "\n"), "\n") {
		k := "ctx"
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
			k = "file"
		case strings.HasPrefix(l, "@@"):
			k = "hunk"
		case strings.HasPrefix(l, "+"):
			k = "add"
		case strings.HasPrefix(l, "-"):
			k = "del"
		}
		out = append(out, DiffLine{Kind: k, Text: l})
	}
	return out
}

// DevImageNote says whose the embedded Istio's development image is (engine.EmbeddedProxyImage)
// when one of docs injects it, as the results and each side of a comparison say it; "" otherwise.
func DevImageNote(l *i18n.Localizer, docs []engine.Document) string {
	img := engine.EmbeddedProxyImage()
	if !slices.ContainsFunc(docs, func(d engine.Document) bool { return d.InjectsImage(img) }) {
		return ""
	}
	return l.T("page.results.devImage", "Image", img, "Embedded", engine.Version().Istio)
}

// failedNote is the note on a document that failed, by the kind of its error (wording.ErrorKind).
var failedNote = map[string]string{
	wording.KindYAML: "results.note.failed-yaml", wording.KindSchema: "results.note.failed-schema", wording.KindIstio: "results.note.failed",
}

// DocNotes say, for one step, what happened to every document that was not simply injected, so
// an empty diff is never mistaken for "injection changed nothing": a document Istio rejected
// (with Istio's message, at every step it fails); a workload Istio skipped (with Istio's reason,
// at row 0 and at the step that made Istio skip it); a kind Istio does not inject (at row 0, and
// at a later step with no change at all). prev are the documents of the step before (nil for row
// 0); empty says the step changed nothing.
func DocNotes(l *i18n.Localizer, docs, prev []engine.Document, empty bool) []DocNote {
	var out []DocNote
	for i, d := range docs {
		status, reason := d.Status()
		n := DocNote{Doc: d.Index, Status: string(status)}
		switch status {
		case engine.StatusError:
			// Said once, in words, with the line; the parser's own text behind a toggle.
			words := wording.In(l).Input(d.Error)
			n.Text, n.Detail, n.Parser = l.T(failedNote[wording.ErrorKind(d.Error)], "Doc", d.Index), words.Summary, words.Details
		case engine.StatusPassedThrough:
			if prev != nil && !empty {
				continue
			}
			if d.Kind == "" {
				n.Text = l.T("results.note.passed-through-unknown", "Doc", d.Index)
			} else {
				n.Text = l.T("results.note.passed-through", "Doc", d.Index, "Kind", d.Kind)
			}
		case engine.StatusSkipped:
			if prev != nil && i < len(prev) && prev[i].Skipped {
				continue
			}
			// Istio's reason, in its words.
			n.Text, n.Detail, n.DetailLang = l.T("results.note.skipped", "Doc", d.Index, "Kind", d.Kind, "Name", d.Name), reason, "en"
		default:
			continue
		}
		out = append(out, n)
	}
	return out
}
