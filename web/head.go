package web

import (
	"context"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sidecarlab/sidecarlab/i18n"
)

// Head is what a page says about itself in <head>: its <title> and the Open Graph tags a chat
// shows for a pasted link. Both are plain text (templ escapes them), bounded here.
type Head struct {
	// Title is the <title> and og:title, already worded (a page of its own: an error, sharing).
	Title string
	// Description is og:description and the meta description; empty leaves them out.
	Description string
	// Refresh, when set, reloads the page without JavaScript (a meta refresh's content: "10;url=…"):
	// a room's page follows its trainer so.
	Refresh string
	// View, when set, is what the playground's or a comparison's head names, worded in the
	// reader's language when the page is rendered (Title and Description are then ignored).
	View *HeadView
}

// HeadView is a view's head as parts: the user's values (bounded by the handlers) and what the
// page words around them.
type HeadView struct {
	// Workload is the first injectable document as kind/name ("" when nothing was read); More
	// counts the other ones. Namespace is its namespace.
	Workload, Namespace string
	More                int
	// Istio is the Istio version the description names.
	Istio string
	// Steps are the annotation steps as a title shows them (short) and as the description does.
	Steps, StepsLong []string
	// Tab is the shown tab's id ("" for the default tab), worded with the rest.
	Tab string
	// Present is presenter mode; Step the selected step (-1 when none).
	Present bool
	Step    int
	// Compare names the two sides of a comparison (A and B) instead of a view.
	Compare bool
	A, B    string
}

// Bounds on what a page says about itself: a title a tab and a chat preview can show, and an
// Open Graph description about as long as chats display.
const (
	MaxTitle       = 100
	MaxDescription = 300
)

// words are the <title> and the description in the request's language.
func (h Head) words(ctx context.Context) (title, description string) {
	return h.In(i18n.FromContext(ctx))
}

// In are the <title> and the description in l's language (for the embed snippet's title too).
func (h Head) In(l *i18n.Localizer) (title, description string) {
	if h.View == nil {
		return h.Title, h.Description
	}
	return h.View.words(l)
}

func (v *HeadView) words(l *i18n.Localizer) (title, description string) {
	if v.Compare {
		return l.T("page.title", "Title", Bound(l.T("page.head.compare", "A", v.A, "B", v.B), MaxTitle)),
			Bound(l.T("page.head.compareDescribe", "A", v.A, "B", v.B), MaxDescription)
	}
	workload := v.Workload
	if workload != "" && v.More > 0 {
		workload = l.T("page.head.more", "Name", workload, "More", v.More)
	}
	parts := []string{workload}
	if workload == "" {
		parts[0] = l.T("page.head.playground")
	}
	if len(v.Steps) > 0 {
		parts = append(parts, strings.Join(v.Steps, ", "))
	}
	if v.Tab != "" {
		parts = append(parts, Tab{ID: v.Tab}.In(l))
	}
	switch {
	case v.Present:
		parts = append(parts, l.T("page.head.slideStep", "Step", strconv.Itoa(v.Step)))
	case v.Step >= 0 && v.Step < len(v.Steps):
		parts = append(parts, l.T("page.head.step", "Step", strconv.Itoa(v.Step)))
	}
	title = l.T("page.title", "Title", Bound(strings.Join(parts, " · "), MaxTitle))

	switch {
	case workload == "":
		description = l.T("page.head.describeAny", "Istio", v.Istio)
	case v.Namespace == "":
		description = l.T("page.head.describe", "Istio", v.Istio, "Workload", workload)
	default:
		description = l.T("page.head.describeNS", "Istio", v.Istio, "Workload", workload, "Namespace", v.Namespace)
	}
	if len(v.StepsLong) > 0 {
		var b strings.Builder
		for i, s := range v.StepsLong {
			if i > 0 {
				b.WriteString("; ")
			}
			b.WriteString(strconv.Itoa(i+1) + ". " + s)
		}
		description += " " + l.T("page.head.steps", "Steps", b.String())
	}
	return title, Bound(description, MaxDescription)
}

// Bound cuts s to at most n runes, ending in "…" when cut, with its whitespace collapsed.
func Bound(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}
