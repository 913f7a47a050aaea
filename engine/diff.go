package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"

	"github.com/sidecarlab/sidecarlab/engine/yamldoc"
)

// ChangeKind says what happened to a field between two outputs.
type ChangeKind string

const (
	Added   ChangeKind = "added"
	Removed ChangeKind = "removed"
	Changed ChangeKind = "changed"
	// Moved is a named list element (a container, a volume, an env var) that kept its content but
	// changed place; order matters for containers, since the kubelet starts them in order.
	Moved ChangeKind = "moved"
)

// Change is one field-level difference between two injected outputs.
type Change struct {
	// Doc is the 1-based document the change is in.
	Doc int `json:"doc"`
	// Path names the field the way a person reads it:
	// spec.template.spec.containers[istio-proxy].env[PROXY_CONFIG].value.
	Path string     `json:"path"`
	Kind ChangeKind `json:"kind"`
	Old  any        `json:"old,omitempty"`
	New  any        `json:"new,omitempty"`
	// From and To are the 0-based positions of a moved element.
	From int `json:"from,omitempty"`
	To   int `json:"to,omitempty"`
	// OldPath is set when an element moved to another list, e.g. istio-proxy from
	// containers to initContainers when it becomes a native sidecar; Path is where it is now.
	OldPath string `json:"oldPath,omitempty"`
	// Cause is the annotation step that made this change ("key=value" or "-key"), with a value
	// over 120 bytes cut and ended by "…" (the whole value is the row's step).
	Cause string `json:"cause,omitempty"`
	// OldBytes and NewBytes are set, and Old and New left out, when a value is too large or too
	// deeply nested to carry (see maxChangeValueBytes): its size in bytes of compact JSON.
	OldBytes int `json:"oldBytes,omitempty"`
	NewBytes int `json:"newBytes,omitempty"`
	// Flag is set for a change of one flag of an istio-iptables command line (the path ends in
	// args[FLAG]): the flag as written ("-o"), and FlagName its long name as Istio binds it
	// ("istio-local-outbound-ports-exclude"). Old and New are the flag's values.
	Flag     string `json:"flag,omitempty"`
	FlagName string `json:"flagName,omitempty"`
	// Serializer marks a change of row 0 that injection did not make: kube-inject's decode and
	// encode of the input alone makes it too (spec.strategy: {}, status: {}, resources: {}, …).
	Serializer bool `json:"serializer,omitempty"`
}

// Bounds on what a change carries. A value whose compact JSON is longer than
// maxChangeValueBytes, or that nests deeper than maxChangeValueDepth, is left out of the change
// and its size given instead: the whole of it is in the injected YAML. Without them one hostile
// field (an 18 KB request nesting 9,000 lists) was copied into every answer and the memo, and
// indenting it made a 162 MB JSON body.
const (
	maxChangeValueBytes = 16 << 10
	maxChangeValueDepth = 32
)

// bound leaves out values beyond the bounds, recording their sizes.
func (c *Change) bound() {
	if n, ok := valueFits(c.Old); !ok {
		c.Old, c.OldBytes = nil, n
	}
	if n, ok := valueFits(c.New); !ok {
		c.New, c.NewBytes = nil, n
	}
}

// size estimates the memory a change holds.
func (c Change) size() int64 {
	o, _ := valueFits(c.Old)
	n, _ := valueFits(c.New)
	return int64(len(c.Path)+len(c.OldPath)+len(c.Cause)+len(c.Flag)+len(c.FlagName)+o+n) + 96
}

// valueFits measures a decoded JSON value: its compact JSON size (strings counted by their bytes
// plus quotes; escapes ignored), and whether it is within the bounds on size and depth.
func valueFits(v any) (int, bool) {
	n, deep := 0, false
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		if depth > maxChangeValueDepth {
			deep = true
		}
		switch x := v.(type) {
		case map[string]any:
			n += 2
			for k, e := range x {
				n += len(k) + 4
				walk(e, depth+1)
			}
		case []any:
			n += 2
			for _, e := range x {
				n++
				walk(e, depth+1)
			}
		case string:
			n += len(x) + 2
		case nil:
			n += 4
		default:
			n += len(fmt.Sprint(x))
		}
	}
	walk(v, 0)
	return n, n <= maxChangeValueBytes && !deep
}

// String renders the change on one line: a sign (+ added, - removed, ~ changed, ↕ moved), the
// path and the values.
func (c Change) String() string {
	oldV, newV := FormatValue(c.Old), FormatValue(c.New)
	if c.OldBytes > 0 {
		oldV = omitted(c.OldBytes)
	}
	if c.NewBytes > 0 {
		newV = omitted(c.NewBytes)
	}
	switch c.Kind {
	case Added:
		return fmt.Sprintf("+ %s: %s", c.Path, newV)
	case Removed:
		return fmt.Sprintf("- %s: %s", c.Path, oldV)
	case Moved:
		if c.OldPath != "" {
			return fmt.Sprintf("↕ %s: moved from %s", c.Path, c.OldPath)
		}
		return fmt.Sprintf("↕ %s: moved from position %d to %d", c.Path, c.From+1, c.To+1)
	default:
		return fmt.Sprintf("~ %s: %s → %s", c.Path, oldV, newV)
	}
}

// omitted stands for a value left out of a change.
func omitted(n int) string {
	return fmt.Sprintf("(%d bytes, too large or too deeply nested to show here)", n)
}

// DiffDocuments compares two injections of the same input, document by document, and attributes
// every change to cause. Documents that failed on either side are not compared (their errors are
// reported on the documents). Values beyond the bounds are left out of the changes (Change.bound).
func DiffDocuments(before, after []Document, cause string) []Change {
	out, _ := diffDocuments(context.Background(), before, after, cause)
	return out
}

// diffDocuments is DiffDocuments with ctx's deadline checked before each document.
func diffDocuments(ctx context.Context, before, after []Document, cause string) ([]Change, error) {
	var out []Change
	for i := range min(len(before), len(after)) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		a, b := before[i], after[i]
		if a.Error != nil || b.Error != nil || sameOutput(a, b) {
			continue
		}
		av, bv, err := diffTrees(a, b)
		if err != nil {
			continue
		}
		for _, c := range DiffValues(av, bv) {
			c.Doc = after[i].Index
			c.Cause = cause
			c.bound()
			out = append(out, c)
		}
	}
	return out, nil
}

// diffTrees are two documents' outputs decoded for DiffValues: only the parts that differ when
// both have their JSON (prunedTrees), else whole.
func diffTrees(a, b Document) (any, any, error) {
	if a.json != nil && b.json != nil {
		return prunedTrees(a.json, b.json)
	}
	av, err := a.tree()
	if err != nil {
		return nil, nil, err
	}
	bv, err := b.tree()
	return av, bv, err
}

// DiffValues is the semantic diff of two decoded YAML/JSON values: maps by key, lists of named
// things (every element a map with a unique "name") by name, other lists by position.
func DiffValues(a, b any) []Change {
	var out []Change
	diffValue("", a, b, &out)
	return pairMoves(out)
}

// pairMoves turns "removed L1[x]" + "added L2[x]" of two sibling lists (same parent, same element
// name, both maps) into one move across lists followed by the field changes of x, so that
// istio-proxy becoming a native sidecar reads as a move to initContainers plus
// initContainers[istio-proxy].restartPolicy added, not as a whole container removed and added.
func pairMoves(in []Change) []Change {
	type ref struct {
		parent, list, name string
	}
	split := func(p string) (ref, bool) {
		if !strings.HasSuffix(p, "]") {
			return ref{}, false
		}
		open := strings.LastIndexByte(p, '[')
		if open < 0 {
			return ref{}, false
		}
		list := p[:open]
		dot := strings.LastIndexByte(list, '.')
		return ref{parent: list[:max(dot, 0)], list: list, name: p[open+1 : len(p)-1]}, true
	}
	removed := map[[2]string]int{} // (parent, name) -> index in "in"
	for i, c := range in {
		if _, isMap := c.Old.(map[string]any); c.Kind == Removed && isMap {
			if r, ok := split(c.Path); ok {
				removed[[2]string{r.parent, r.name}] = i
			}
		}
	}
	if len(removed) == 0 {
		return in
	}
	pair := map[int]int{} // added index -> removed index
	drop := map[int]bool{}
	for i, c := range in {
		if _, isMap := c.New.(map[string]any); c.Kind != Added || !isMap {
			continue
		}
		r, ok := split(c.Path)
		if !ok {
			continue
		}
		if j, ok := removed[[2]string{r.parent, r.name}]; ok && in[j].Path != c.Path && !drop[j] {
			pair[i], drop[j] = j, true
		}
	}
	out := make([]Change, 0, len(in))
	for i, c := range in {
		switch j, paired := pair[i]; {
		case drop[i]:
		case paired:
			out = append(out, Change{Path: c.Path, Kind: Moved, OldPath: in[j].Path})
			diffValue(c.Path, in[j].Old, c.New, &out)
		default:
			out = append(out, c)
		}
	}
	return out
}

func diffValue(path string, a, b any, out *[]Change) {
	switch av := a.(type) {
	case map[string]any:
		if bv, ok := b.(map[string]any); ok {
			diffMap(path, av, bv, out)
			return
		}
	case []any:
		if bv, ok := b.([]any); ok {
			diffList(path, av, bv, out)
			return
		}
	}
	if !reflect.DeepEqual(a, b) {
		*out = append(*out, Change{Path: path, Kind: Changed, Old: a, New: b})
	}
}

func diffMap(path string, a, b map[string]any, out *[]Change) {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := yamldoc.JoinKey(path, k)
		av, inA := a[k]
		bv, inB := b[k]
		switch {
		case !inA:
			// A new list of named things reads better (and pairs into moves) element by element.
			if l, ok := bv.([]any); ok && len(l) > 0 {
				if _, named := names(l); named {
					diffList(p, nil, l, out)
					continue
				}
			}
			*out = append(*out, Change{Path: p, Kind: Added, New: bv})
		case !inB:
			if l, ok := av.([]any); ok && len(l) > 0 {
				if _, named := names(l); named {
					diffList(p, l, nil, out)
					continue
				}
			}
			*out = append(*out, Change{Path: p, Kind: Removed, Old: av})
		default:
			diffValue(p, av, bv, out)
		}
	}
}

func diffList(path string, a, b []any, out *[]Change) {
	an, aok := names(a)
	bn, bok := names(b)
	if !aok || !bok || (len(a) == 0 && len(b) == 0) {
		if diffIptablesArgs(path, a, b, out) {
			return
		}
		if scalars(a) && scalars(b) && len(a)*len(b) <= 1<<20 {
			diffScalars(path, a, b, out)
			return
		}
		diffPositional(path, a, b, out)
		return
	}
	aIdx := make(map[string]int, len(an))
	for i, n := range an {
		aIdx[n] = i
	}
	bIdx := make(map[string]int, len(bn))
	for i, n := range bn {
		bIdx[n] = i
	}
	// Order of the names both sides share; elements outside their longest common subsequence moved.
	var ac, bc []string
	for _, n := range an {
		if _, ok := bIdx[n]; ok {
			ac = append(ac, n)
		}
	}
	for _, n := range bn {
		if _, ok := aIdx[n]; ok {
			bc = append(bc, n)
		}
	}
	stay := lcs(ac, bc)
	for _, n := range an {
		if _, ok := bIdx[n]; !ok {
			*out = append(*out, Change{Path: path + "[" + n + "]", Kind: Removed, Old: a[aIdx[n]]})
		}
	}
	for _, n := range bn {
		p := path + "[" + n + "]"
		i, ok := aIdx[n]
		if !ok {
			*out = append(*out, Change{Path: p, Kind: Added, New: b[bIdx[n]]})
			continue
		}
		if !stay[n] {
			*out = append(*out, Change{Path: p, Kind: Moved, From: i, To: bIdx[n]})
		}
		diffValue(p, a[i], b[bIdx[n]], out)
	}
}

func diffPositional(path string, a, b []any, out *[]Change) {
	for i := range max(len(a), len(b)) {
		p := fmt.Sprintf("%s[%d]", path, i)
		switch {
		case i >= len(a):
			*out = append(*out, Change{Path: p, Kind: Added, New: b[i]})
		case i >= len(b):
			*out = append(*out, Change{Path: p, Kind: Removed, Old: a[i]})
		default:
			diffValue(p, a[i], b[i], out)
		}
	}
}

// scalars reports whether no element of l is a map or a list.
func scalars(l []any) bool {
	for _, e := range l {
		switch e.(type) {
		case map[string]any, []any:
			return false
		}
	}
	return true
}

// diffScalars aligns two lists of scalars (container args, ports lists) on their longest common
// subsequence, so an inserted "-o 3306" reads as two additions, not as every later element
// changing. Removed elements carry their old index, added ones their new index.
func diffScalars(path string, a, b []any, out *[]Change) {
	n, m := len(a), len(b)
	dp := lcsTable(a, b, func(x, y any) bool { return reflect.DeepEqual(x, y) })
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && reflect.DeepEqual(a[i], b[j]):
			i++
			j++
		case i < n && j < m && dp[i+1][j+1] == dp[i][j]:
			// Replacing a[i] by b[j] keeps the alignment optimal: a change in place.
			*out = append(*out, Change{Path: fmt.Sprintf("%s[%d]", path, j), Kind: Changed, Old: a[i], New: b[j]})
			i++
			j++
		case j < m && (i == n || dp[i][j+1] >= dp[i+1][j]):
			*out = append(*out, Change{Path: fmt.Sprintf("%s[%d]", path, j), Kind: Added, New: b[j]})
			j++
		default:
			*out = append(*out, Change{Path: fmt.Sprintf("%s[%d]", path, i), Kind: Removed, Old: a[i]})
			i++
		}
	}
}

// names returns the "name" of every element if the list is a list of uniquely named maps.
func names(l []any) ([]string, bool) {
	out := make([]string, 0, len(l))
	seen := make(map[string]bool, len(l))
	for _, e := range l {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, false
		}
		n, ok := m["name"].(string)
		if !ok || n == "" || seen[n] {
			return nil, false
		}
		seen[n] = true
		out = append(out, n)
	}
	return out, true
}

// lcs returns the members of a longest common subsequence of a and b (sequences of distinct
// names). On a tie the element that comes first in b is the one left out, so "X was put first"
// reads as X moving rather than everything else.
func lcs(a, b []string) map[string]bool {
	n, m := len(a), len(b)
	dp := lcsTable(a, b, func(x, y string) bool { return x == y })
	keep := map[string]bool{}
	for i, j := 0, 0; i < n && j < m; {
		switch {
		case a[i] == b[j]:
			keep[a[i]] = true
			i++
			j++
		case dp[i][j+1] >= dp[i+1][j]:
			j++
		default:
			i++
		}
	}
	return keep
}

// lcsTable is the dynamic-programming table of a longest common subsequence of a and b under eq:
// t[i][j] is the length of one of a[i:] and b[j:]. Both the named-list and the scalar-list
// alignments walk it.
func lcsTable[T any](a, b []T, eq func(x, y T) bool) [][]int {
	n, m := len(a), len(b)
	t := make([][]int, n+1)
	for i := range t {
		t[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if eq(a[i], b[j]) {
				t[i][j] = t[i+1][j+1] + 1
			} else {
				t[i][j] = max(t[i+1][j], t[i][j+1])
			}
		}
	}
	return t
}

// FormatValue renders a changed value on one line: scalars as YAML would show them, maps and
// lists as compact JSON.
func FormatValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		if x == "" || strings.ContainsAny(x, "\n\"") || strings.TrimSpace(x) != x {
			b, _ := json.Marshal(x)
			return string(b)
		}
		return x
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return fmt.Sprint(x)
		}
		return string(b)
	}
}

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
