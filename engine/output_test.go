package engine

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/sidecarlab/sidecarlab/engine/input"
)

// TestWithJSONLongKey: an output JSONToYAML cannot write (a key too long for a YAML simple key)
// carries JSONToYAML's error at once, as istioctl reports it; any other output's YAML is left
// until it is read and is then what JSONToYAML writes.
func TestWithJSONLongKey(t *testing.T) {
	var failed, lazy int
	for _, key := range []string{"a", strings.Repeat("k", 500), strings.Repeat("k", 990), strings.Repeat("k", 1000),
		strings.Repeat("k", 1020), strings.Repeat("k", 1024), strings.Repeat("k", 1100), strings.Repeat("k", 5000),
		strings.Repeat("\x01", 200), strings.Repeat(`"`, 600)} {
		for _, long := range []bool{false, true} {
			obj := map[string]any{"metadata": map[string]any{"annotations": map[string]string{key: "v"}}}
			if long { // a long value is no trouble
				obj = map[string]any{"metadata": map[string]any{"annotations": map[string]string{"k": key + key}}}
			}
			j, err := json.Marshal(obj)
			if err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("key of %d bytes, in the value %v", len(key), long)
			want, wantErr := yaml.JSONToYAML(j)
			d := Document{Index: 2, Line: 7}.withJSON(j)
			switch {
			case wantErr != nil:
				failed++
				if d.Error == nil || d.Error.Text() != wantErr.Error() || d.Error.Line != 7 || d.Error.Doc != 2 {
					t.Errorf("%s: error %+v, want JSONToYAML's %q at document 2, line 7", name, d.Error, wantErr)
				}
			case d.Error != nil:
				t.Errorf("%s: error %v, but JSONToYAML writes it", name, d.Error)
			default:
				if d.output.j != nil {
					lazy++
					if d.outputSize() != len(j) {
						t.Errorf("%s: before its YAML is made, counted %d bytes, want the JSON's %d", name, d.outputSize(), len(j))
					}
				}
				if got := d.Output(); got != string(want) {
					t.Errorf("%s: output %q, want %q", name, got, want)
				}
				if d.outputSize() != len(want) {
					t.Errorf("%s: counted %d bytes once made, want %d", name, d.outputSize(), len(want))
				}
			}
		}
	}
	if failed == 0 || lazy == 0 {
		t.Fatalf("%d cases JSONToYAML refuses, %d left until read: want both", failed, lazy)
	}
}

// TestOutputMadeWhenRead: a timeline row's YAML is not made by injecting, diffing or checking it,
// and once it is read the memo counts it.
func TestOutputMadeWhenRead(t *testing.T) {
	e := testEngine(t)
	base, err := os.ReadFile("testdata/corpus/lab-base.yaml")
	if err != nil {
		t.Fatal(err)
	}
	manifest := strings.Replace(string(base), "name: ", "name: made-when-read-", 1)
	tl, err := e.Timeline(t.Context(), []byte(manifest), []input.Step{{Key: "sidecar.istio.io/proxyCPU", Value: "123m"}}, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	last := tl.Steps[len(tl.Steps)-1]
	if len(changesOf(t, last)) == 0 || len(changesOf(t, tl.Steps[0])) == 0 {
		t.Fatal("no changes")
	}
	d := last.Documents[0]
	if d.output == nil || d.output.j == nil {
		t.Fatal("the injected document's output was not left to be made")
	}
	if d.output.size.Load() != 0 {
		t.Fatal("the YAML was made by injecting and diffing")
	}
	before := last.size()
	want, err := yaml.JSONToYAML(d.json)
	if err != nil {
		t.Fatal(err)
	}
	if got := last.Output(); got != string(want)+"---\n" {
		t.Fatalf("output %q, want %q", got, want)
	}
	// The row counts the YAML instead of the JSON it was counted by, and the memo counts the row
	// as it is now.
	if got, want := last.size()-before, 3*int64(len(want)-len(d.json)); got != want {
		t.Fatalf("the row's size changed by %d once its YAML was made, want %d", got, want)
	}
	e.steps.mu.Lock()
	defer e.steps.mu.Unlock()
	for _, el := range e.steps.entries {
		if en := el.Value.(*lruEntry[*StepResult]); en.val == last && en.size != last.size() {
			t.Fatalf("the memo counts the row as %d bytes, the row is %d", en.size, last.size())
		}
	}
}
