package wording

import (
	"context"
	"strconv"
	"strings"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/diff"
)

// TimelineText is a timeline as `sidecarlab diff` prints it (and the page's diff.txt), in the
// reader's language: a block per row, the field changes grouped by document (or, with unified,
// the line diff). The changes and the errors' own text are as the engine gives them. The error
// is ctx's (see engine.StepResult.Changes).
func (w Words) TimelineText(ctx context.Context, t *engine.Timeline, unified bool) (string, error) {
	var b strings.Builder
	l := w.loc()
	for _, st := range t.Steps {
		if st.Step == nil {
			b.WriteString("# " + l.T("wording.diff.step0") + "\n")
		} else {
			b.WriteString("# " + l.T("wording.diff.step", "Step", strconv.Itoa(st.Index), "Change", st.Step.String()) + "\n")
		}
		// A document Istio rejected has no output: the row says it failed, and neither diff
		// compares it (a failed row is not "no change").
		failed := false
		for _, d := range st.Documents {
			if d.Error != nil {
				b.WriteString(l.T("wording.diff.failed", "Error", w.InputErrorText(d.Error)) + "\n")
				failed = true
			}
		}
		if unified {
			u, err := st.Unified(ctx, 0)
			if err != nil {
				return "", err
			}
			if u == "" && !failed {
				b.WriteString(l.T("wording.diff.no-change") + "\n")
			}
			b.WriteString(u + "\n")
			continue
		}
		changes, err := st.Changes(ctx)
		if err != nil {
			return "", err
		}
		if len(changes) == 0 && !failed {
			b.WriteString(l.T("wording.diff.no-change") + "\n")
		}
		// Changes come grouped by document; within one, what the serializer alone writes (row 0)
		// is listed last, under its own heading, so injection's own changes come first.
		for i := 0; i < len(changes); {
			doc := changes[i].Doc
			j := i
			for j < len(changes) && changes[j].Doc == doc {
				j++
			}
			d := st.Documents[doc-1]
			b.WriteString(w.documentLine(d.Index, d.Kind, d.Namespace, d.Name) + "\n")
			for _, serializer := range []bool{false, true} {
				head := serializer
				for _, c := range changes[i:j] {
					if c.Serializer != serializer {
						continue
					}
					if head {
						b.WriteString("  # " + l.T("wording.diff.serializer") + "\n")
						head = false
					}
					b.WriteString("  " + w.Change(c) + "\n")
				}
			}
			i = j
		}
		b.WriteString("\n")
	}
	return b.String(), nil
}

// documentLine names a document of a diff: "document 2: Deployment/shop/web".
func (w Words) documentLine(doc int, kind, namespace, name string) string {
	workload := strings.TrimPrefix(kind+"/"+strings.TrimPrefix(namespace+"/"+name, "/"), "/")
	return w.loc().T("wording.diff.document", "Doc", doc, "Workload", workload)
}

// Change is one field change on one line, as the CLI prints it (diff.Change.Line), in w's
// language.
func (w Words) Change(c diff.Change) string { return c.Line(w.loc().T) }
