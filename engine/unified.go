package engine

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// stepUnified is the unified diff of a timeline row against the row before (before is nil for
// row 0, which is diffed against the input manifest). A document that failed in either row is
// left out of both sides: it has no output, and diffing its absence would read as all its lines
// deleted (or added) when Istio in fact rejected it; the row's Documents say it failed. Without a
// failure the sides are the rows' Output (row 0: the manifest), so patch turns one into the other.
//
// The sides are diffed document by document (the line operations of each pair, written as one
// patch): a diff of two whole large outputs costs far more than the sum of its documents', and
// the deadline is checked between documents. Only the first docs documents are diffed when
// docs > 0 (what a page shows of a large manifest).
func stepUnified(ctx context.Context, manifest string, before, after []Document, docs int) (string, error) {
	failed := func(i int) bool {
		return after[i].Error != nil || (before != nil && i < len(before) && before[i].Error != nil)
	}
	anyFailed := false
	for i := range after {
		anyFailed = anyFailed || failed(i)
	}
	n := len(after)
	if docs > 0 {
		n = min(n, docs)
	}
	// The manifest's own text, cut where each document starts, when row 0 is diffed against it.
	var cuts []string
	if before == nil && !anyFailed && len(after) > 0 {
		starts := make([]int, len(after))
		for i, d := range after {
			starts[i] = d.Line
		}
		cuts = cutLines(manifest, starts)
	}
	var all []lineOp
	for i, d := range after[:n] {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		if failed(i) {
			continue
		}
		var a string
		switch {
		case cuts != nil:
			a = cuts[i]
		case before == nil:
			a = d.Input
			if !strings.HasSuffix(a, "\n") {
				a += "\n"
			}
			a += "---\n"
		default:
			a = before[i].Output() + "---\n"
		}
		all = append(all, lineOps(a, d.Output()+"---\n")...)
	}
	return unified(all), nil
}

// cutLines cuts text before each of the 1-based lines in starts (in order), one piece for
// each: from its line to the next one's (the first from the text's start, the last to its end).
// The pieces, joined, are text.
func cutLines(text string, starts []int) []string {
	out := make([]string, 0, len(starts))
	line, from, cut := 1, 0, 0
	for i, start := range starts {
		for line < start && from < len(text) {
			nl := strings.IndexByte(text[from:], '\n')
			if nl < 0 {
				from = len(text)
				break
			}
			from += nl + 1
			line++
		}
		if i > 0 {
			out = append(out, text[cut:from])
			cut = from
		}
	}
	return append(out, text[cut:])
}

// UnifiedDiff is a line diff of two texts in unified format with three lines of context, computed
// with github.com/sergi/go-diff and written as GNU diff -u writes it, so that patch applies it: a
// last line without a newline is followed by "\ No newline at end of file", a range of one line
// is written without its length ("@@ -3 +3 @@"), and an empty range by the line before it
// ("@@ -0,0 +1,2 @@"). It is empty when the texts are equal.
func UnifiedDiff(a, b string) string {
	return unified(lineOps(a, b))
}

// lineOp is one line of a line diff: kept, deleted or inserted.
type lineOp struct {
	op   diffmatchpatch.Operation
	text string
	// eol is false for a text's last line when the text does not end in a newline.
	eol bool
}

// lineOps is the line diff of a and b (equal texts: all their lines kept).
func lineOps(a, b string) []lineOp {
	var diffs []diffmatchpatch.Diff
	if a == b {
		diffs = []diffmatchpatch.Diff{{Type: diffmatchpatch.DiffEqual, Text: a}}
	} else {
		dmp := diffmatchpatch.New()
		ca, cb, lines := dmp.DiffLinesToChars(a, b)
		diffs = dmp.DiffCharsToLines(dmp.DiffMain(ca, cb, false), lines)
	}
	var all []lineOp
	for _, d := range diffs {
		for _, l := range strings.SplitAfter(d.Text, "\n") {
			if l != "" {
				text, eol := strings.CutSuffix(l, "\n")
				all = append(all, lineOp{d.Type, text, eol})
			}
		}
	}
	return all
}

// unified writes line operations as GNU diff -u does (see UnifiedDiff); nothing when every line
// is kept.
func unified(all []lineOp) string {
	if !slices.ContainsFunc(all, func(l lineOp) bool { return l.op != diffmatchpatch.DiffEqual }) {
		return ""
	}
	// rng is a hunk's range as GNU diff writes it: the length only when it is not 1, and for an
	// empty range the line before it.
	rng := func(start, n int) string {
		switch n {
		case 0:
			return fmt.Sprintf("%d,0", start-1)
		case 1:
			return strconv.Itoa(start)
		}
		return fmt.Sprintf("%d,%d", start, n)
	}
	const ctx = 3
	var sb strings.Builder
	sb.WriteString("--- before\n+++ after\n")
	// aLine and bLine are the line numbers, on each side, of all[at].
	aLine, bLine, at := 1, 1, 0
	for i := 0; i < len(all); {
		if all[i].op == diffmatchpatch.DiffEqual {
			i++
			continue
		}
		// Hunk: back up ctx lines, then run until ctx*2 equal lines in a row or the end.
		start := max(0, i-ctx)
		end := i
		for end < len(all) {
			if all[end].op != diffmatchpatch.DiffEqual {
				end++
				continue
			}
			run := end
			for run < len(all) && all[run].op == diffmatchpatch.DiffEqual {
				run++
			}
			if run == len(all) || run-end > 2*ctx {
				end = min(end+ctx, len(all))
				break
			}
			end = run
		}
		for _, l := range all[at:start] {
			if l.op != diffmatchpatch.DiffInsert {
				aLine++
			}
			if l.op != diffmatchpatch.DiffDelete {
				bLine++
			}
		}
		at = start
		var aLen, bLen int
		for _, l := range all[start:end] {
			if l.op != diffmatchpatch.DiffInsert {
				aLen++
			}
			if l.op != diffmatchpatch.DiffDelete {
				bLen++
			}
		}
		fmt.Fprintf(&sb, "@@ -%s +%s @@\n", rng(aLine, aLen), rng(bLine, bLen))
		for _, l := range all[start:end] {
			switch l.op {
			case diffmatchpatch.DiffEqual:
				sb.WriteString(" ")
			case diffmatchpatch.DiffDelete:
				sb.WriteString("-")
			case diffmatchpatch.DiffInsert:
				sb.WriteString("+")
			}
			sb.WriteString(l.text)
			sb.WriteString("\n")
			if !l.eol {
				sb.WriteString("\\ No newline at end of file\n")
			}
		}
		i = end
	}
	return sb.String()
}
