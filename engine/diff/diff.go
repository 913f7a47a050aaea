// Package diff compares two outputs of injection: the field diff (Values: maps by key, named
// lists by name, a move of istio-proxy across lists as one move, istio-iptables flags one by one),
// its JSON side (PrunedTrees: what is equal on both sides left out before the walk), the
// unified line diff (Unified, Lines, Patch: as GNU diff -u writes it) and the Change that each
// field difference is. It knows documents only as values and texts: the engine diffs its
// documents with it (engine.DiffDocuments) and attributes each change to the step that made it.
package diff

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/sidecarlab/sidecarlab/engine/yamldoc"
)

// Values is the semantic diff of two decoded YAML/JSON values: maps by key, lists of named
// things (every element a map with a unique "name") by name, other lists by position.
func Values(a, b any) []Change {
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
				if _, named := Names(l); named {
					diffList(p, nil, l, out)
					continue
				}
			}
			*out = append(*out, Change{Path: p, Kind: Added, New: bv})
		case !inB:
			if l, ok := av.([]any); ok && len(l) > 0 {
				if _, named := Names(l); named {
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
	an, aok := Names(a)
	bn, bok := Names(b)
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

// Names returns the "name" of every element if the list is a list of uniquely named maps: how
// the field diff pairs a list (by name, '[web]') rather than by position.
func Names(l []any) ([]string, bool) {
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
