package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	yaml "go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

// cpuSteps are n steps that each set the proxy's CPU request to another value.
func cpuSteps(n int) []input.Step {
	steps := make([]input.Step, n)
	for i := range steps {
		steps[i] = input.Step{Key: "sidecar.istio.io/proxyCPU", Value: fmt.Sprintf("%dm", 150+i)}
	}
	return steps
}

// TestEstimateDepth: the nesting is bounded from the text as the parser reads it — block and
// flow collections, one level over at most for these (the pod's own node) — with aliases
// followed, and Limits.Check refuses only what is deeper than its bound, naming the document and
// its line.
func TestEstimateDepth(t *testing.T) {
	e := testEngine(t)
	// An alias chain: each anchor holds the one before inside 30 lists, so the text nests 30
	// deep and the value, as a reader builds it, 2 + 4 × 30.
	var chain strings.Builder
	chain.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a0: &a0 x\n")
	for i := 1; i <= 4; i++ {
		fmt.Fprintf(&chain, "  a%d: &a%d %s*a%d%s\n", i, i, strings.Repeat("[", 30), i-1, strings.Repeat("]", 30))
	}
	// A block-style value 60 maps deep, as a large CRD's schema is.
	var crd strings.Builder
	crd.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: crd\ndata:\n")
	for i := range 58 {
		fmt.Fprintf(&crd, "%sk%d:\n", strings.Repeat("  ", i+1), i)
	}
	fmt.Fprintf(&crd, "%sleaf: x\n", strings.Repeat("  ", 59))
	// The same as JSON over lines, as kubectl get -o json writes it: each open collection counts
	// once, not once more on every line inside it.
	var js strings.Builder
	js.WriteString("{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"crd\"}, \"data\": {\n")
	for i := range 58 {
		fmt.Fprintf(&js, "%s\"k%d\": {\n", strings.Repeat("  ", i+1), i)
	}
	fmt.Fprintf(&js, "%s\"leaf\": \"x\"\n%s}\n", strings.Repeat("  ", 59), strings.Repeat("}", 59))
	limits := Limits{MaxDepth: 100}
	for _, c := range []struct {
		name      string
		manifest  string
		depth     int
		refused   bool
		doc, line int
	}{
		{"a Deployment", readFileString(t, "testdata/corpus/deployment.yaml"), 0, false, 0, 0},
		{"a CRD-like 60 levels", crd.String(), 61, false, 1, 1},
		{"at the bound", testkit.Pods(1, 98), 100, false, 1, 1},
		{"one past it", testkit.Pods(1, 99), 101, true, 1, 1},
		{"the attack's 9,000", testkit.Pods(1, 0) + "\n---\n" + testkit.Pods(2, 9000), 9002, true, 2, 11},
		{"aliases followed", chain.String(), 122, true, 1, 1},
		{"a CRD-like 60 levels in JSON", js.String(), 62, false, 1, 1},
		// A byte order mark is no place to hide the attack: the parser skips it.
		{"the attack behind a byte order mark", "\ufeff" + strings.Repeat("[", 9000) + strings.Repeat("]", 9000) + "\n", 9002, true, 1, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			cost, err := e.Estimate(context.Background(), []byte(c.manifest), nil, Settings{})
			if err != nil {
				t.Fatal(err)
			}
			if c.depth > 0 && cost.Depth != c.depth {
				t.Errorf("depth %d, want %d", cost.Depth, c.depth)
			}
			if c.depth == 0 && (cost.Depth < 5 || cost.Depth > 20) {
				t.Errorf("a Deployment nests %d deep, want about 15", cost.Depth)
			}
			err = limits.Check(cost)
			var ie *input.Error
			if got := errors.As(err, &ie); got != c.refused {
				t.Fatalf("refused: %v, want %v (%v)", got, c.refused, err)
			}
			if c.refused && (ie.ID != "too-deep" || ie.Doc != c.doc || ie.Line != c.line || !strings.Contains(ie.Text(), fmt.Sprintf("nest up to %d levels", c.depth))) {
				t.Errorf("the refusal: %+v, want too-deep at document %d, line %d", ie, c.doc, c.line)
			}
		})
	}
}

func readFileString(t *testing.T, path string) string { return string(readFile(t, path)) }

// TestEstimateRows: only the rows not memoised cost work; a document costs a unit per 4 KiB
// begun, per row.
func TestEstimateRows(t *testing.T) {
	e := testEngine(t)
	m := []byte(testkit.Pods(3, 0) + "\n# estimate rows\n")
	cost, err := e.Estimate(context.Background(), m, cpuSteps(4), Settings{})
	if err != nil {
		t.Fatal(err)
	}
	if cost.Documents != 3 || cost.Rows != 5 || cost.Units != 15 {
		t.Fatalf("before any row is made: %+v, want 3 documents, 5 rows, 15 units", cost)
	}
	if _, err := e.Timeline(context.Background(), m, cpuSteps(3), Settings{}); err != nil {
		t.Fatal(err)
	}
	if cost, _ = e.Estimate(context.Background(), m, cpuSteps(4), Settings{}); cost.Rows != 1 || cost.Units != 3 {
		t.Fatalf("with rows 0-3 memoised: %+v, want 1 row, 3 units", cost)
	}
	big := []byte(testkit.Pods(1, 0) + "\n# " + strings.Repeat("x", 9000) + "\n")
	if cost, _ = e.Estimate(context.Background(), big, nil, Settings{}); cost.Units != 3 {
		t.Fatalf("a 9 KB document: %d units, want 3", cost.Units)
	}
}

// TestLimitsCostly: past MaxUnits the refusal says the numbers and how many documents fit.
func TestLimitsCostly(t *testing.T) {
	l := Limits{MaxUnits: 4000}
	if err := l.Check(Cost{Documents: 10, Rows: 101, Units: 1010}); err != nil {
		t.Fatalf("under the bound: %v", err)
	}
	err := l.Check(Cost{Documents: 2000, Rows: 3, Units: 6000})
	var ie *input.Error
	if !errors.As(err, &ie) || ie.ID != "too-costly" || ie.Params["fit"] != "1333" || !strings.Contains(ie.Text(), "parts of about 1333 documents") {
		t.Fatalf("over the bound: %#v", err)
	}
}

// expiring is a context whose deadline passes once the engine has injected `after` more
// documents: a deadline in units of work, not of the machine's time.
type expiring struct {
	context.Context
	e            *Engine
	start, after int64
	once         sync.Once
	done         chan struct{}
}

func newExpiring(e *Engine, after int64) *expiring {
	return &expiring{Context: context.Background(), e: e, start: e.Stats().Injections, after: after, done: make(chan struct{})}
}

func (c *expiring) Err() error {
	if c.e.Stats().Injections-c.start >= c.after {
		c.once.Do(func() { close(c.done) })
		return context.DeadlineExceeded
	}
	return nil
}

func (c *expiring) Done() <-chan struct{} { _ = c.Err(); return c.done }

// TestDeadlineBetweenDocuments: once the deadline has passed, the engine injects no further
// document — the one document running when it passed is all that outlives it (neither Istio's
// reader nor its injector takes a context). Held on issue 21's inputs: 2,000 Pods in one row,
// and 10 Pods through 100 steps.
func TestDeadlineBetweenDocuments(t *testing.T) {
	e := testEngine(t)
	for _, c := range []struct {
		name     string
		manifest string
		steps    []input.Step
	}{
		{"2,000 Pods", testkit.Pods(2000, 0) + "\n# deadline\n", nil},
		{"10 Pods through 100 steps", testkit.Pods(10, 0) + "\n# deadline\n", cpuSteps(100)},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := newExpiring(e, 25)
			_, err := e.Timeline(ctx, []byte(c.manifest), c.steps, Settings{})
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("want the deadline's error, got %v", err)
			}
			if n := e.Stats().Injections - ctx.start; n != 25 {
				t.Fatalf("%d documents injected; the deadline passed at the 25th", n)
			}
		})
	}
}

// TestRowViewsPastDeadline: a row's changes, unified diff and findings are made within the
// caller's deadline, document by document; cut short, they are not kept, and the next caller
// (with time left) gets them whole, as a row made without a deadline has them.
func TestRowViewsPastDeadline(t *testing.T) {
	e := testEngine(t)
	m := []byte(testkit.Pods(40, 0) + "\n# row views past the deadline\n")
	tl, err := e.Timeline(context.Background(), m, cpuSteps(1), Settings{})
	if err != nil {
		t.Fatal(err)
	}
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	for _, row := range tl.Steps {
		if _, err := row.Changes(gone); !errors.Is(err, context.Canceled) {
			t.Fatalf("row %d's changes past the deadline: %v", row.Index, err)
		}
		if _, err := row.Unified(gone, 0); !errors.Is(err, context.Canceled) {
			t.Fatalf("row %d's unified diff past the deadline: %v", row.Index, err)
		}
		if _, err := row.Unified(gone, 3); !errors.Is(err, context.Canceled) {
			t.Fatalf("row %d's first documents' diff past the deadline: %v", row.Index, err)
		}
	}
	// A fresh engine makes the same rows with no deadline at all: what the first one keeps after
	// the cut-short calls must be the same.
	fresh, err := New(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	want, err := fresh.Timeline(context.Background(), m, cpuSteps(1), Settings{})
	if err != nil {
		t.Fatal(err)
	}
	for k, row := range tl.Steps {
		if got, want := changesOf(t, row), changesOf(t, want.Steps[k]); len(got) == 0 || !reflect.DeepEqual(got, want) {
			t.Fatalf("row %d: %d changes after a cut-short call, want the %d of a fresh engine", k, len(got), len(want))
		}
		if got, want := unifiedOf(t, row), unifiedOf(t, want.Steps[k]); got == "" || got != want {
			t.Fatalf("row %d: the unified diff after a cut-short call differs from a fresh engine's", k)
		}
	}
	// A timeline whose findings' deadline passes fails with the deadline's error.
	if _, err := e.Timeline(gone, []byte(testkit.Pods(2, 0)+"\n# findings past the deadline\n"), nil, Settings{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("a timeline past its deadline: %v", err)
	}
}

// TestUnifiedHead: the unified diff of a row's first documents (what a page shows of a large
// manifest) holds those documents' changes and no later document's; asked for at least all of
// them, it is the whole diff.
func TestUnifiedHead(t *testing.T) {
	e := testEngine(t)
	tl, err := e.Timeline(context.Background(), []byte(testkit.Pods(6, 0)), cpuSteps(1), Settings{})
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range tl.Steps {
		head, err := row.Unified(context.Background(), 2)
		if err != nil {
			t.Fatal(err)
		}
		whole := unifiedOf(t, row)
		if row.Index == 0 && (!strings.Contains(head, "name: p1\n") || strings.Contains(head, "name: p2\n") || !strings.Contains(whole, "name: p5\n")) {
			t.Fatalf("row 0's head names the wrong Pods:\n%s", head)
		}
		if row.Index == 1 && (strings.Count(head, "+        cpu: 150m") != 4 || strings.Count(whole, "+        cpu: 150m") != 12) {
			// Two per Pod: istio-proxy's and istio-init's requests.
			t.Fatalf("row 1: the head has %d of the CPU changes (want 4), the whole diff %d (want 12)",
				strings.Count(head, "+        cpu: 150m"), strings.Count(whole, "+        cpu: 150m"))
		}
		if all, _ := row.Unified(context.Background(), 6); all != whole {
			t.Fatalf("row %d: the head of all six documents is not the whole diff", row.Index)
		}
	}
}

// TestEstimateRender: install options whose installation is not rendered yet cost a render
// (heavy, whatever the units); once it is kept, they cost what the default does. Without an
// isolator nothing runs in a worker.
func TestEstimateRender(t *testing.T) {
	e := testEngine(t)
	m := []byte(testkit.Pods(1, 0))
	o := InstallOptions{Set: []string{"values.global.proxy.holdApplicationUntilProxyStarts=true", "meshConfig.defaultConfig.concurrency=3"}}
	if c, _ := e.Estimate(context.Background(), m, nil, Settings{}); c.Render || c.Worker {
		t.Fatalf("the default installation: %+v", c)
	}
	if c, _ := e.Estimate(context.Background(), m, nil, Settings{Install: o}); !c.Render || c.Worker {
		t.Fatalf("options not rendered yet: %+v, want Render", c)
	}
	if _, err := e.Install(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if c, _ := e.Estimate(context.Background(), m, nil, Settings{Install: o}); c.Render || c.Worker {
		t.Fatalf("options rendered and kept: %+v, want neither", c)
	}
}

// TestWorkersInjectAlike: an engine that injects a request's documents on several workers (the
// CLI's) gives the documents, in order, that one worker gives — outputs, warnings, errors,
// findings — in every mode, and so does its InjectInOrder; and it still stops at the deadline.
// The race detector (make test's race pass) watches the shared installation and injector.
func TestWorkersInjectAlike(t *testing.T) {
	files, err := filepath.Glob("testdata/corpus/*.yaml")
	if err != nil || len(files) < 10 {
		t.Fatalf("corpus: %v, %d files", err, len(files))
	}
	var manifest []byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		manifest = append(append(manifest, b...), "\n---\n"...)
	}
	manifest = append(manifest, "kind: Pod\nmetadata: {name: broken\nspec: [\n"...) // a document Istio's reader rejects
	one := testEngine(t)
	many, err := New(context.Background(), Options{InstallPolicy: TrustedInstalls(), Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer many.Close()
	steps := []input.Step{{Key: "sidecar.istio.io/proxyCPU", Value: "250m"}}
	for _, mode := range []Mode{ModeKubeInject, ModeNative, ModeWebhook} {
		s := Settings{Mode: mode}
		a, err := one.Inject(context.Background(), manifest, steps, s)
		if err != nil {
			t.Fatal(err)
		}
		b, err := many.Inject(context.Background(), manifest, steps, s)
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Errors()) == 0 {
			t.Fatal("the broken document was not rejected: the case proves nothing about errors")
		}
		if a.Output() != b.Output() || !reflect.DeepEqual(a.Warnings(), b.Warnings()) ||
			!reflect.DeepEqual(a.Errors(), b.Errors()) || !reflect.DeepEqual(a.Findings, b.Findings) {
			t.Errorf("%s: three workers inject differently from one", mode)
		}
		// InjectInOrder (the CLI injects again in order, for Istio's log in istioctl's order)
		// on the engine of three workers injects as one worker does.
		c, err := many.InjectInOrder(context.Background(), manifest, steps, s)
		if err != nil {
			t.Fatal(err)
		}
		if a.Output() != c.Output() || !reflect.DeepEqual(a.Warnings(), c.Warnings()) ||
			!reflect.DeepEqual(a.Errors(), c.Errors()) || !reflect.DeepEqual(a.Findings, c.Findings) {
			t.Errorf("%s: in order, three workers inject differently from one", mode)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := many.Inject(ctx, manifest, nil, Settings{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("past the deadline: %v", err)
	}
}

// laughs is the "billion laughs": levels of lists, each of ten aliases of the one before.
func laughs(levels int) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lol}\ndata:\n  l0: &l0 [lol]\n")
	for i := 1; i <= levels; i++ {
		fmt.Fprintf(&b, "  l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d,", i-1), 10), ","))
	}
	return b.String()
}

// TestEstimateExpansion: the estimate counts what a manifest expands to, not its bytes: a List
// of aliases is as many objects and units as it has items, and its bytes are what the reader
// decodes; Limits refuses it by its objects (saying how many objects fit) or by its expanded
// bytes. A List written out costs what the same List of aliases costs.
func TestEstimateExpansion(t *testing.T) {
	e := testEngine(t)
	estimate := func(t *testing.T, m string) Cost {
		t.Helper()
		c, err := e.Estimate(context.Background(), []byte(m), nil, Settings{})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	small := estimate(t, testkit.Deployment)
	if small.Objects != 1 || small.Units != 1 || small.Expanded != int64(len(testkit.Deployment)) {
		t.Fatalf("one Deployment: %+v, want 1 object, 1 unit, its bytes", small)
	}
	list := estimate(t, testkit.AliasList(5000))
	if list.Documents != 1 || list.Objects != 5000 || list.Units < 5000 || list.Expanded < 500_000 {
		t.Fatalf("5,000 aliases of a Deployment in a List (%d bytes): %+v, want 5,000 objects, at least as many units, ~1 MB expanded", len(testkit.AliasList(5000)), list)
	}
	// The same List written out, in the same flow style: the same objects, about the same units.
	var written strings.Builder
	written.WriteString("apiVersion: v1\nkind: List\nitems: [")
	for i := range 300 {
		if i > 0 {
			written.WriteString(", ")
		}
		written.WriteString("{apiVersion: apps/v1, kind: Deployment, metadata: {name: web}, spec: {selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: web, image: nginx}]}}}}")
	}
	written.WriteString("]\n")
	out, aliased := estimate(t, written.String()), estimate(t, testkit.AliasList(300))
	if out.Objects != 300 || aliased.Objects != 300 || aliased.Units < out.Units*9/10 || aliased.Units > out.Units*11/10 {
		t.Fatalf("300 items written out: %+v; as aliases: %+v, want the same objects and units within 10 %%", out, aliased)
	}
	// A List inside a List counts its items; an item that is not a List counts one.
	nested := estimate(t, "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: List, items: [{kind: Pod}, {kind: Pod}, {kind: Pod}]}\n- {apiVersion: v1, kind: Pod}\n")
	if nested.Objects != 4 {
		t.Fatalf("a List of a 3-item List and a Pod: %d objects, want 4", nested.Objects)
	}

	var ie *input.Error
	if err := (Limits{MaxUnits: 2000}).Check(list); !errors.As(err, &ie) || ie.ID != "too-costly-items" || ie.Params["objects"] != "5000" ||
		!strings.Contains(ie.Text(), "5000 objects") || ie.Params["fit"] != fmt.Sprint(2000*5000/list.Units) {
		t.Fatalf("5,000 aliases under 2,000 units: %v", err)
	}
	if err := (Limits{MaxUnits: 2000}).Check(aliased); err != nil {
		t.Fatalf("300 aliases under 2,000 units: %v", err)
	}
	// Objects not written out: every alias of an item, with the items of a List aliased.
	if list.Aliased != 4999 || out.Aliased != 0 || nested.Aliased != 0 {
		t.Fatalf("aliased objects: %d of 5,000 aliases, %d written out, %d nested, want 4999, 0, 0", list.Aliased, out.Aliased, nested.Aliased)
	}
	if c := estimate(t, "apiVersion: v1\nkind: List\nitems:\n- &l {apiVersion: v1, kind: List, items: [{kind: Pod}, {kind: Pod}]}\n- *l\n"); c.Objects != 4 || c.Aliased != 2 {
		t.Fatalf("a List item aliasing a 2-item List: %+v, want 4 objects, 2 aliased", c)
	}
	if err := (Limits{WrittenOut: true}).Check(aliased); !errors.As(err, &ie) || ie.ID != "aliased-items" || ie.Params["count"] != "299" {
		t.Fatalf("300 aliases where objects must be written out: %v", err)
	}
	if err := (Limits{WrittenOut: true}).Check(out); err != nil {
		t.Fatalf("300 items written out: %v", err)
	}
	// The refusal names the document and the line of its first alias.
	second := estimate(t, testkit.Deployment+"---\napiVersion: v1\nkind: List\nitems:\n- &d {kind: Pod, metadata: {name: a}}\n- *d\n")
	if err := (Limits{WrittenOut: true}).Check(second); !errors.As(err, &ie) || ie.ID != "aliased-items" || ie.Doc != 2 || ie.Line != 22 {
		t.Fatalf("an aliased item (*d) in document 2, line 22: %+v", err)
	}
	// Aliases inside an object may add as much as is written and 16 KiB: a Pod whose 1,000
	// containers are one alias is refused, containers that share an env list are not.
	many := estimate(t, "apiVersion: v1\nkind: Pod\nmetadata: {name: many}\nspec:\n  containers: [&c {name: app, image: nginx}"+strings.Repeat(", *c", 999)+"]\n")
	if err := (Limits{WrittenOut: true}).Check(many); !errors.As(err, &ie) || ie.ID != "aliases-expand" || many.Written > 5000 || many.Expanded < 30000 {
		t.Fatalf("a Pod of 1,000 aliased containers (%+v): %v", many, err)
	}
	var env strings.Builder
	env.WriteString("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: env}\nspec:\n  template:\n    spec:\n      containers:\n      - name: a\n        image: x\n        env: &env\n")
	for i := range 20 {
		fmt.Fprintf(&env, "        - {name: SETTING_%d, value: \"value %d\"}\n", i, i)
	}
	for _, n := range []string{"b", "c", "d"} {
		fmt.Fprintf(&env, "      - name: %s\n        image: x\n        env: *env\n", n)
	}
	if c := estimate(t, env.String()); (Limits{WrittenOut: true}).Check(c) != nil || c.Expanded <= c.Written {
		t.Fatalf("containers sharing an env list by alias (%+v): %v", c, (Limits{WrittenOut: true}).Check(c))
	}
	// An alias inside an object (an env list, as people write them) is not an object.
	if c := estimate(t, "apiVersion: v1\nkind: List\nitems:\n- {kind: Pod, spec: {containers: [{name: a, env: &e [{name: A}]}, {name: b, env: *e}]}}\n"); c.Aliased != 0 || c.Objects != 1 {
		t.Fatalf("an alias inside a List item: %+v", c)
	}
	if err := (Limits{MaxBytes: 1 << 20}).Check(estimate(t, testkit.AliasList(8000))); !errors.As(err, &ie) || ie.ID != "too-expanded" {
		t.Fatalf("8,000 aliases under 1 MiB: %v", err)
	}
	if err := (Limits{MaxBytes: 1 << 20}).Check(estimate(t, testkit.AliasList(3000))); err != nil {
		t.Fatalf("3,000 aliases (under 1 MiB expanded): %v", err)
	}
}

// TestExpansionAsKubernetesReads: expand stops exactly where Kubernetes' reader stops (the
// excessive-aliasing bound, an alias inside its own anchor), and where it does not, its count
// of decoded nodes is what makes the reader's work: the billion laughs costs what the reader
// decodes before it gives up, not 10⁹ nodes.
func TestExpansionAsKubernetesReads(t *testing.T) {
	for _, c := range []struct {
		name    string
		doc     string
		stopped bool
	}{
		{"a Deployment", testkit.Deployment, false},
		{"5,000 aliases of a Deployment", testkit.AliasList(5000), false},
		{"anchors in env, as people write them", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: a\n    image: x\n    env: &env [{name: A, value: b}]\n  - name: b\n    image: x\n    env: *env\n", false},
		{"the billion laughs, 9 levels", laughs(9), true},
		{"3 levels of laughs (under 99 % aliases)", laughs(3), false},
		{"4 levels of laughs (over 99 %)", laughs(4), true},
		{"an alias inside its own anchor", "a: &a [x, *a]\n", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var n yaml.Node
			if err := yaml.Unmarshal([]byte(c.doc), &n); err != nil {
				t.Fatal(err)
			}
			x := expand(&n)
			var v any
			err := sigsyaml.Unmarshal([]byte(c.doc), &v)
			if refused := err != nil; refused != c.stopped {
				t.Fatalf("Kubernetes' reader refused: %v (%v), want %v", refused, err, c.stopped)
			}
			if stopped := x.decodes < countExpanded(&n, 10_000_000); stopped != c.stopped {
				t.Fatalf("expand stopped after %d decodes: %v, want %v", x.decodes, stopped, c.stopped)
			}
			if x.decodes > 5_000_000 {
				t.Fatalf("expand walked %d nodes", x.decodes)
			}
		})
	}
}

// countExpanded is how many nodes n has with every alias replaced by its anchored node, up to
// limit: the walk expand must stop short of when the reader does.
func countExpanded(n *yaml.Node, limit int64) int64 {
	var c int64
	var walk func(n *yaml.Node, depth int)
	walk = func(n *yaml.Node, depth int) {
		if n == nil || c >= limit || depth > 1000 {
			c = limit
			return
		}
		c++
		if n.Kind == yaml.AliasNode {
			walk(n.Alias, depth+1)
			return
		}
		for _, k := range n.Content {
			walk(k, depth+1)
		}
	}
	walk(n, 0)
	return c
}

// countingDeadline is a context whose deadline passes at its after-th Err: a deadline in checks
// of it, so that a test can see whether the engine checks it while one document runs.
type countingDeadline struct {
	context.Context
	calls, after int
	done         chan struct{}
}

func (c *countingDeadline) Err() error {
	c.calls++
	if c.calls >= c.after {
		if c.calls == c.after {
			close(c.done)
		}
		return context.DeadlineExceeded
	}
	return nil
}

func (c *countingDeadline) Done() <-chan struct{} { return c.done }

// TestDeadlineInsideList: a List is one document, which Istio injects item by item without a
// context; the engine's injector checks the deadline before each item, so a List of 300 Pods
// stops within the item the deadline passed at (checks: about one per item, where between
// documents alone there are a handful in all).
func TestDeadlineInsideList(t *testing.T) {
	e := testEngine(t)
	list := testkit.PodList(300)
	ctx := &countingDeadline{Context: context.Background(), after: 50, done: make(chan struct{})}
	_, err := e.Timeline(ctx, []byte(list), nil, Settings{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want the deadline's error, got %v (%d checks)", err, ctx.calls)
	}
	if ctx.calls > 60 {
		t.Fatalf("%d checks of the deadline: the List went on past it", ctx.calls)
	}
	// With time left, the same List is injected whole, every item.
	tl, err := e.Timeline(context.Background(), []byte(list), nil, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(tl.Steps[0].Output(), "name: istio-proxy"); n != 300 {
		t.Fatalf("%d items injected, want 300", n)
	}
}
