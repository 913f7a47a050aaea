package engine

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/diff"
	"github.com/sidecarlab/sidecarlab/engine/input"
)

func TestDiffDocumentsSkipsErrors(t *testing.T) {
	a := []Document{Document{Index: 1}.withOutput("a: 1\n"), Document{Index: 2}.withOutput("a: 1\n")}
	b := []Document{{Index: 1, Error: &input.Error{Msg: "x"}}, Document{Index: 2}.withOutput("a: 2\n")}
	got, err := DiffDocuments(t.Context(), a, b, "k=v")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Doc != 2 || got[0].Cause != "k=v" {
		t.Fatalf("got %+v", got)
	}
}

// TestChangeBounds: a value too large or too deeply nested is left out of the change, with its
// size; an ordinary value is kept. Without the bound, an 18 KB request nesting 9,000 lists in an
// extra field was copied into every answer (and indented into a 162 MB JSON body).
func TestChangeBounds(t *testing.T) {
	e := testEngine(t)
	pod := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: a\n    image: nginx\n"
	cases := []struct {
		name  string
		extra string
		kept  bool
	}{
		{"deep", "x: " + strings.Repeat("[", 9000) + strings.Repeat("]", 9000) + "\n", false},
		{"large", "x: \"" + strings.Repeat("a", 40<<10) + "\"\n", false},
		{"ordinary", "x: [1, 2, {a: b}]\n", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tl, err := e.Timeline(t.Context(), []byte(pod+c.extra), nil, Settings{})
			if err != nil {
				t.Fatal(err)
			}
			var x *diff.Change
			for i, ch := range changesOf(t, tl.Steps[0]) {
				if ch.Path == "x" {
					x = &changesOf(t, tl.Steps[0])[i]
				}
			}
			if x == nil || x.Kind != diff.Removed {
				t.Fatalf("no removal of x among %d changes", len(changesOf(t, tl.Steps[0])))
			}
			if c.kept {
				if x.Old == nil || x.OldBytes != 0 {
					t.Fatalf("an ordinary value was left out: %+v", x)
				}
				return
			}
			if x.Old != nil || x.OldBytes < len(c.extra)/2 {
				t.Fatalf("old value kept or size wrong: old %v, %d bytes", x.Old != nil, x.OldBytes)
			}
			if b, _ := json.MarshalIndent(tl, "", "  "); len(b) > 1<<20 {
				t.Fatalf("the timeline's JSON is %d bytes", len(b))
			}
		})
	}
}

// TestChangeCauseBounded: a change names its step with at most input.MaxCauseValue bytes of the value
// (the whole of it is the row's Step); a short value is named whole. Before, a 250,000-byte
// proxyMetadata value was copied into the cause of each of the five fields it set.
func TestChangeCauseBounded(t *testing.T) {
	e := testEngine(t)
	long := "proxyMetadata: {X: " + strings.Repeat("é", 1000) + "}"
	for _, c := range []struct {
		value string
		want  string
	}{
		{"proxyMetadata: {X: z}", "proxy.istio.io/config=proxyMetadata: {X: z}"},
		{long, "proxy.istio.io/config=" + long[:input.MaxCauseValue-1] + "…"}, // é is two bytes: cut at a character's start
	} {
		tl, err := e.Timeline(context.Background(), []byte(labDeployment), []input.Step{{Key: "proxy.istio.io/config", Value: c.value}}, Settings{})
		if err != nil {
			t.Fatal(err)
		}
		changes, err := tl.Steps[1].Changes(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(changes) == 0 {
			t.Fatal("the step changed nothing")
		}
		for _, ch := range changes {
			if ch.Cause != c.want {
				t.Errorf("%s: cause %.80q…, want %.80q…", ch.Path, ch.Cause, c.want)
			}
		}
	}
}
