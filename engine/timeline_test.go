package engine

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/diff"
	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/i18n"
)

var eightSteps = []input.Step{
	{Key: "sidecar.istio.io/proxyCPU", Value: "200m"},
	{Key: "sidecar.istio.io/proxyMemory", Value: "256Mi"},
	{Key: "proxy.istio.io/config", Value: "holdApplicationUntilProxyStarts: true"},
	{Key: "traffic.sidecar.istio.io/excludeOutboundPorts", Value: "3306"},
	{Key: "sidecar.istio.io/logLevel", Value: "debug"},
	{Key: "sidecar.istio.io/proxyCPU", Remove: true},
	{Key: "sidecar.istio.io/nativeSidecar", Value: "true"},
	{Key: "sidecar.istio.io/inject", Value: "false"},
}

func TestTimeline(t *testing.T) {
	e := testEngine(t)
	deploy := readFile(t, "testdata/corpus/deployment.yaml")
	tl, err := e.Timeline(t.Context(), deploy, eightSteps, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tl.Steps) != 9 {
		t.Fatalf("%d rows, want 9", len(tl.Steps))
	}
	// Row k is the manifest injected with the first k steps.
	for k, row := range tl.Steps {
		want := mustInject(t, e, deploy, eightSteps[:k], Settings{}).Output()
		if row.Output() != want {
			t.Fatalf("row %d differs from injecting with steps[:%d]", k, k)
		}
		if k > 0 && (row.Step == nil || *row.Step != eightSteps[k-1]) {
			t.Fatalf("row %d names step %v", k, row.Step)
		}
	}
	// Row 0's changes are injection's own.
	if !strings.Contains(changeText(t, tl.Steps[0]), "+ spec.template.spec.containers[istio-proxy]: ") {
		t.Fatal("row 0 does not show istio-proxy added")
	}
	// Removing proxyCPU (row 6) brings the request back to the default.
	if !strings.Contains(changeText(t, tl.Steps[6]), "- spec.template.metadata.annotations[\"sidecar.istio.io/proxyCPU\"]: 200m") {
		t.Fatalf("row 6:\n%s", changeText(t, tl.Steps[6]))
	}
}

func changeText(t testing.TB, r *StepResult) string {
	var b strings.Builder
	for _, c := range changesOf(t, r) {
		b.WriteString(c.Line(i18n.For(i18n.Default).T))
		b.WriteByte('\n')
	}
	return b.String()
}

// TestTimelineMemo: re-running a timeline where only the last step changed costs one injection;
// the same timeline again costs none; another mode costs all of them again.
func TestTimelineMemo(t *testing.T) {
	e, err := New(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	deploy := readFile(t, "testdata/corpus/deployment.yaml")
	run := func(steps []input.Step, s Settings) int64 {
		t.Helper()
		before := e.injections.Load()
		if _, err := e.Timeline(t.Context(), deploy, steps, s); err != nil {
			t.Fatal(err)
		}
		return e.injections.Load() - before
	}
	if n := run(eightSteps, Settings{}); n != 9 {
		t.Fatalf("cold timeline: %d injections, want 9", n)
	}
	retoggled := append([]input.Step(nil), eightSteps...)
	retoggled[7] = input.Step{Key: "sidecar.istio.io/inject", Value: "true"}
	if n := run(retoggled, Settings{}); n != 1 {
		t.Fatalf("last step changed: %d injections, want 1", n)
	}
	if n := run(retoggled, Settings{}); n != 0 {
		t.Fatalf("same timeline: %d injections, want 0", n)
	}
	if n := run(retoggled, Settings{Mode: ModeNative}); n != 9 {
		t.Fatalf("other mode: %d injections, want 9", n)
	}
	if n := run(retoggled[:3], Settings{}); n != 0 {
		t.Fatalf("a prefix: %d injections, want 0", n)
	}
}

func TestParseStep(t *testing.T) {
	cases := []struct {
		in   string
		want input.Step
		err  bool
	}{
		{"a/b=c", input.Step{Key: "a/b", Value: "c"}, false},
		{"a=b=c", input.Step{Key: "a", Value: "b=c"}, false},
		{"a=", input.Step{Key: "a", Value: ""}, false},
		{"-a/b", input.Step{Key: "a/b", Remove: true}, false},
		{"nokey", input.Step{}, true},
		{"=v", input.Step{}, true},
	}
	for _, c := range cases {
		got, err := input.ParseStep(c.in)
		if (err != nil) != c.err || got != c.want {
			t.Errorf("ParseStep(%q) = %+v, %v", c.in, got, err)
		}
		if err == nil && got.String() != strings.TrimSpace(c.in) {
			t.Errorf("String() = %q, want %q", got.String(), c.in)
		}
	}
}

// TestStepMemoBoundedByBytes: the memo of timeline rows is bounded by the memory the rows hold,
// not only by their number: distinct states of 1 MiB each (a Pod and a long comment) stay within
// the byte bound, where 512 rows of them would hold gigabytes.
func TestStepMemoBoundedByBytes(t *testing.T) {
	const bound = 8 << 20
	e, err := New(context.Background(), Options{StepCacheBytes: bound})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	comment := "# " + strings.Repeat("x", 1<<20) + "\n"
	for i := range 20 {
		manifest := fmt.Sprintf("%sapiVersion: v1\nkind: Pod\nmetadata:\n  name: p%d\nspec:\n  containers:\n  - name: a\n    image: nginx\n", comment, i)
		if _, err := e.Timeline(t.Context(), []byte(manifest), nil, Settings{}); err != nil {
			t.Fatal(err)
		}
		if held := e.Stats().StepBytes; held > bound {
			t.Fatalf("after %d states the memo holds %d bytes, over its bound of %d", i+1, held, bound)
		}
	}
	if held := e.Stats().StepBytes; held < 1<<20 {
		t.Fatalf("the memo holds %d bytes: the size estimate misses the manifests", held)
	}
}

// TestSerializerChanges: row 0 marks what kube-inject's decode and encode writes by itself, and
// only that; a kind Istio does not inject has nothing to mark.
func TestSerializerChanges(t *testing.T) {
	e := testEngine(t)
	// creationTimestamp: null, which older kubectl wrote, is dropped by the serializer.
	base := strings.Replace(string(readFile(t, "testdata/corpus/lab-base.yaml")), "metadata:\n  name: lab\n", "metadata:\n  name: lab\n  creationTimestamp: null\n", 1)
	manifest := append([]byte(base), []byte("---\napiVersion: v1\nkind: Service\nmetadata:\n  name: db\nspec:\n  ports:\n  - port: 3306\n")...)
	tl, err := e.Timeline(t.Context(), manifest, []input.Step{{Key: "sidecar.istio.io/proxyCPU", Value: "200m"}}, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	marked := map[string]bool{}
	for _, c := range changesOf(t, tl.Steps[0]) {
		marked[fmt.Sprintf("%d %s", c.Doc, c.Path)] = c.Serializer
	}
	want := map[string]bool{
		"1 spec.strategy":              true,
		"1 metadata.creationTimestamp": true,
		"1 status":                     true,
		"1 spec.template.spec.containers[app].resources":  true,
		"1 spec.template.spec.containers[istio-proxy]":    false,
		"1 spec.template.spec.initContainers[istio-init]": false,
		"1 spec.template.metadata.annotations":            false,
	}
	for p, w := range want {
		got, ok := marked[p]
		if !ok {
			t.Errorf("no row-0 change at %s", p)
		} else if got != w {
			t.Errorf("%s: serializer %v, want %v", p, got, w)
		}
	}
	for p := range marked {
		if strings.HasPrefix(p, "2 ") {
			t.Errorf("the Service changed: %s", p)
		}
	}
	for _, c := range changesOf(t, tl.Steps[1]) {
		if c.Serializer {
			t.Errorf("step 1 change %s marked as the serializer's", c.Path)
		}
	}
	// The CLI's text lists them last, under their own heading: wording's TestTimelineText.
}

// TestTimelineDiffsOnDemand: a row's field changes and unified diff are computed when first
// asked for, once, and are the same as computed eagerly.
func TestTimelineDiffsOnDemand(t *testing.T) {
	e, err := New(context.Background(), Options{}) // its own memo: no row computed by another test
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	deploy := readFile(t, "testdata/corpus/deployment.yaml")
	tl, err := e.Timeline(t.Context(), deploy, eightSteps[:2], Settings{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range tl.Steps {
		if r.changes.f == nil || r.unified.f == nil {
			t.Fatalf("row %d: diffs computed before anyone asked", r.Index)
		}
	}
	r := tl.Steps[2]
	changes := changesOf(t, r)
	if len(changes) == 0 || r.changes.f != nil {
		t.Fatalf("row 2: %d changes, function kept: %v", len(changes), r.changes.f != nil)
	}
	if r.unified.f == nil {
		t.Fatal("asking for the changes computed the unified diff too")
	}
	if got, _ := DiffDocuments(t.Context(), tl.Steps[1].Documents, r.Documents, eightSteps[1].String()); !reflect.DeepEqual(got, changes) {
		t.Fatal("the changes on demand differ from DiffDocuments of the two rows")
	}
	if got, want := unifiedOf(t, r), diff.Unified(tl.Steps[1].Output(), r.Output()); got != want {
		t.Fatal("the unified diff on demand differs from diff.Unified of the two rows")
	}
	// The memoised row is the same row: what was computed stays computed.
	again, err := e.Timeline(t.Context(), deploy, eightSteps[:2], Settings{})
	if err != nil {
		t.Fatal(err)
	}
	if again.Steps[2] != r || again.Steps[2].changes.f != nil {
		t.Fatal("the memoised row was not reused with its changes")
	}
}

// TestTimelineRowsFromParsedInput: the rows after row 0 start from a copy of the documents row 0
// read (chunk.parsed) instead of reading the YAML again; on every manifest of Istio's golden
// corpus and ours, a row made so is the manifest injected with the steps up to it, byte for byte
// and error for error — when row 0 was just made, and when it comes from the memo.
func TestTimelineRowsFromParsedInput(t *testing.T) {
	t.Parallel()
	e := testEngine(t)
	same := func(f string, row *StepResult, steps []input.Step) {
		t.Helper()
		want, err := e.Inject(t.Context(), readFile(t, f), steps, Settings{})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if row.Output() != want.Output() || errorsText(row.Errors()) != errorsText(want.Errors()) {
			t.Fatalf("%s: row %d is not the manifest injected with its %d steps:\n%s\n%s", f, row.Index, len(steps), errorsText(row.Errors()), errorsText(want.Errors()))
		}
	}
	reused := 0
	for _, f := range corpusManifests(t) {
		in := readFile(t, f)
		tl, err := e.Timeline(t.Context(), in, eightSteps, Settings{})
		if err != nil {
			continue // refused as istioctl refuses it
		}
		for _, p := range tl.Steps[0].parsed {
			if p != nil {
				reused++
			}
		}
		same(f, tl.Steps[1], eightSteps[:1])
		same(f, tl.Steps[8], eightSteps)
		// Row 0 from the memo, the last row new.
		retoggled := append(append([]input.Step(nil), eightSteps[:7]...), input.Step{Key: "sidecar.istio.io/proxyCPU", Value: "300m"})
		again, err := e.Timeline(t.Context(), in, retoggled, Settings{})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		same(f, again.Steps[8], retoggled)
	}
	if reused < 100 {
		t.Fatalf("%d documents read once for their timeline's rows; the corpus has more", reused)
	}
}

// errorsText is the errors' words, with the templates Istio lists in a missing template's error
// ("requested template … not found; have a, b") sorted: Istio lists them in a map's order, which
// differs from run to run.
func errorsText(errs []*input.Error) string {
	var out []string
	for _, e := range errs {
		msg := e.Error()
		if i := strings.Index(msg, "; have "); i >= 0 {
			names := strings.Split(msg[i+len("; have "):], ", ")
			slices.Sort(names)
			msg = msg[:i] + "; have " + strings.Join(names, ", ")
		}
		out = append(out, msg)
	}
	return strings.Join(out, "\n")
}

// TestMarkSerializer: a change of step 0 is marked as the serializer's only when the serializer
// alone makes that very change — the same document, path, kind and values; the same path with
// another value is injection's.
func TestMarkSerializer(t *testing.T) {
	serializer := []diff.Change{
		{Doc: 1, Path: "spec.template.metadata.creationTimestamp", Kind: diff.Added, New: nil},
		{Doc: 1, Path: "status", Kind: diff.Added, New: map[string]any{}},
	}
	changes := []diff.Change{
		{Doc: 1, Path: "spec.template.metadata.creationTimestamp", Kind: diff.Added, New: nil},
		{Doc: 1, Path: "status", Kind: diff.Added, New: map[string]any{"phase": "Pending"}},
		{Doc: 2, Path: "status", Kind: diff.Added, New: map[string]any{}},
		{Doc: 1, Path: "spec.template.spec.containers[istio-proxy]", Kind: diff.Added, New: map[string]any{"name": "istio-proxy"}},
	}
	markSerializer(changes, serializer)
	for i, want := range []bool{true, false, false, false} {
		if changes[i].Serializer != want {
			t.Errorf("change %d (%s %s in document %d, %v): serializer's %t, want %t", i, changes[i].Kind, changes[i].Path, changes[i].Doc, changes[i].New, changes[i].Serializer, want)
		}
	}
}
