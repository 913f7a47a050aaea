package diff

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// Unified is a line diff of two texts in unified format with three lines of context, computed
// with github.com/sergi/go-diff and written as GNU diff -u writes it, so that patch applies it: a
// last line without a newline is followed by "\ No newline at end of file", a range of one line
// is written without its length ("@@ -3 +3 @@"), and an empty range by the line before it
// ("@@ -0,0 +1,2 @@"). It is empty when the texts are equal.
func Unified(a, b string) string {
	return Patch(Lines(a, b))
}

// Line is one line of a line diff: kept, deleted or inserted.
type Line struct {
	op   diffmatchpatch.Operation
	text string
	// eol is false for a text's last line when the text does not end in a newline.
	eol bool
}

// Lines is the line diff of a and b (equal texts: all their lines kept).
func Lines(a, b string) []Line {
	var diffs []diffmatchpatch.Diff
	if a == b {
		diffs = []diffmatchpatch.Diff{{Type: diffmatchpatch.DiffEqual, Text: a}}
	} else {
		dmp := diffmatchpatch.New()
		ca, cb, lines := dmp.DiffLinesToChars(a, b)
		diffs = dmp.DiffCharsToLines(dmp.DiffMain(ca, cb, false), lines)
	}
	var all []Line
	for _, d := range diffs {
		for _, l := range strings.SplitAfter(d.Text, "\n") {
			if l != "" {
				text, eol := strings.CutSuffix(l, "\n")
				all = append(all, Line{d.Type, text, eol})
			}
		}
	}
	return all
}

// Patch writes line operations as GNU diff -u does (see Unified); nothing when every line
// is kept.
func Patch(all []Line) string {
	if !slices.ContainsFunc(all, func(l Line) bool { return l.op != diffmatchpatch.DiffEqual }) {
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

// DifferingLines are the lines of a that b does not keep as they are, and those of b that a has
// not, numbered from 1, in order (Lines' diff): none when the texts are equal.
func DifferingLines(a, b string) (inA, inB []int) {
	na, nb := 0, 0
	for _, l := range Lines(a, b) {
		switch l.op {
		case diffmatchpatch.DiffEqual:
			na, nb = na+1, nb+1
		case diffmatchpatch.DiffDelete:
			na++
			inA = append(inA, na)
		case diffmatchpatch.DiffInsert:
			nb++
			inB = append(inB, nb)
		}
	}
	return inA, inB
}
