package engine

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/diff"
)

// wholeAndPruned are the field diffs of two JSON outputs decoded whole and pruned (diff.PrunedTrees).
func wholeAndPruned(t testing.TB, a, b []byte) (whole, pruned []diff.Change) {
	t.Helper()
	var av, bv any
	if err := json.Unmarshal(a, &av); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &bv); err != nil {
		t.Fatal(err)
	}
	pa, pb, err := diff.PrunedTrees(a, b)
	if err != nil {
		t.Fatal(err)
	}
	return diff.Values(av, bv), diff.Values(pa, pb)
}

// TestPrunedTreesDiffTheSame: on every document of Istio's golden corpus and ours, through the
// eight steps of a timeline (resources, a hold that reorders containers, a native sidecar that
// moves istio-proxy across lists, injection turned off), the field diff of the pruned trees is
// that of the whole outputs, change for change, between each step and the one before and
// between the first and the last.
func TestPrunedTreesDiffTheSame(t *testing.T) {
	t.Parallel()
	e := testEngine(t)
	pairs, changes := 0, 0
	for _, f := range corpusManifests(t) {
		tl, err := e.Timeline(t.Context(), readFile(t, f), eightSteps, Settings{})
		if err != nil {
			continue // refused as istioctl refuses it: nothing to diff
		}
		check := func(x, y *StepResult) {
			for i := range min(len(x.Documents), len(y.Documents)) {
				a, b := x.Documents[i], y.Documents[i]
				if a.json == nil || b.json == nil {
					continue
				}
				want, got := wholeAndPruned(t, a.json, b.json)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s, document %d: the pruned diff differs from the whole one\npruned: %v\nwhole:  %v", f, i+1, got, want)
				}
				pairs++
				changes += len(want)
			}
		}
		for k := 2; k < len(tl.Steps); k++ {
			check(tl.Steps[k-1], tl.Steps[k])
		}
		check(tl.Steps[1], tl.Steps[len(tl.Steps)-1])
	}
	t.Logf("compared %d pairs, %d changes", pairs, changes)
	if pairs < 500 || changes < 2000 {
		t.Fatalf("compared %d pairs of documents with %d changes; the corpus should give more", pairs, changes)
	}
}
