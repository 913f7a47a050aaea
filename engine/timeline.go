package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/sidecarlab/sidecarlab/engine/diff"
	"github.com/sidecarlab/sidecarlab/engine/input"
)

// Timeline is a manifest followed through a list of annotation changes.
type Timeline struct {
	Settings Settings      `json:"settings"`
	Steps    []*StepResult `json:"steps"`
	// Findings are the pitfalls found in the last row.
	Findings []Finding `json:"findings"`
	// Ignored are the last row's findings the manifest opted out of (IgnoreAnnotation).
	Ignored []Finding `json:"ignored,omitempty"`
	// install is the installation the rows were injected with.
	install *Install
}

// Install is the installation the timeline's rows were injected with (its CNI agent decides
// which of the workloads join ambient: the batch's ambient column).
func (t *Timeline) Install() *Install { return t.install }

// Timeline injects the manifest as is (row 0) and after each step (row k = row k−1 plus step k),
// diffing each row against the one before. Rows are memoised by (installation, mode, input,
// steps prefix), so changing only the last step costs one injection.
func (e *Engine) Timeline(ctx context.Context, manifest []byte, steps []input.Step, s Settings) (*Timeline, error) {
	p, err := e.prepare(ctx, manifest, steps, s)
	if err != nil {
		return nil, err
	}
	t := &Timeline{Settings: s, Steps: make([]*StepResult, 0, len(steps)+1), install: p.install}
	var prev *StepResult
	for k, key := range rowKeys(s, p.inHash, steps) {
		before := prev
		r, hit, err := e.steps.get(key, func() (*StepResult, error) {
			var parsed []runtime.Object
			if k == 0 && !e.isolates(p) {
				var err error
				if parsed, err = p.parse(ctx); err != nil {
					return nil, err
				}
			}
			docs, err := e.injectAll(ctx, p, annotationsAt(steps, k), e.opts.Workers)
			if err != nil {
				return nil, err
			}
			r := &StepResult{Index: k, Documents: docs, parsed: parsed}
			// The row is kept measured: its documents' YAML and its views, once made, are counted.
			r.grew = func() { e.steps.remeasure(key) }
			for _, d := range docs {
				if d.output != nil {
					d.output.made = r.grew
				}
			}
			r.findings.f = func(ctx context.Context) (checked, error) {
				found, ignored, err := e.check(ctx, p, docs)
				return checked{found, ignored}, err
			}
			if k == 0 {
				// Row 0's changes are what injection itself did to the input.
				r.changes.f = func(ctx context.Context) ([]diff.Change, error) {
					inputs := make([]Document, len(docs))
					for i, d := range docs {
						inputs[i] = Document{Index: d.Index}.withOutput(d.Input)
					}
					changes, err := DiffDocuments(ctx, inputs, docs, "")
					if err != nil {
						return nil, err
					}
					ser, err := serialized(ctx, p.chunks)
					if err != nil {
						return nil, err
					}
					by, err := DiffDocuments(ctx, inputs, ser, "")
					markSerializer(changes, by)
					return changes, err
				}
				r.unified.f = func(ctx context.Context) (string, error) { return stepUnified(ctx, string(manifest), nil, docs, 0) }
				r.head = func(ctx context.Context, n int) (string, error) {
					return stepUnified(ctx, string(manifest), nil, docs, n)
				}
			} else {
				st := steps[k-1]
				r.Step = &st
				r.changes.f = func(ctx context.Context) ([]diff.Change, error) {
					return DiffDocuments(ctx, before.Documents, docs, st.Cause())
				}
				r.unified.f = func(ctx context.Context) (string, error) { return stepUnified(ctx, "", before.Documents, docs, 0) }
				r.head = func(ctx context.Context, n int) (string, error) {
					return stepUnified(ctx, "", before.Documents, docs, n)
				}
			}
			return r, nil
		})
		if err != nil {
			return nil, err
		}
		if hit {
			e.stepHits.Add(1)
		} else {
			e.stepMisses.Add(1)
		}
		t.Steps = append(t.Steps, r)
		prev = r
		if k == 0 {
			p.useParsed(r.parsed)
		}
	}
	// The row is memoised with everything its findings depend on (installation, mode, input,
	// steps), so they are computed once per row too.
	c, err := prev.findings.get(ctx)
	if err != nil {
		return nil, err
	}
	// The waypoint checks read the request's namespace, which the memo does not key: they run
	// on every request, onto copies of the row's findings.
	wf, wi, err := e.waypointChecks(ctx, p, prev.Documents)
	if err != nil {
		return nil, err
	}
	t.Findings, t.Ignored = c.found, c.ignored
	if len(wf) > 0 || len(wi) > 0 {
		t.Findings = append(slices.Clip(c.found), wf...)
		t.Ignored = append(slices.Clip(c.ignored), wi...)
	}
	return t, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// serialized is every document passed through kube-inject's decode and encode without injecting:
// Istio's FromRawToObject (a copy of what row 0 read, chunk.object), then the JSON and YAML
// marshalling finishChunk applies to an injected output. What it changes in the input, injection did not decide. Kinds Istio does not inject are
// written back as given (so nothing to mark); documents it cannot read carry an error and are
// not compared.
func serialized(ctx context.Context, chunks []chunk) ([]Document, error) {
	docs := make([]Document, len(chunks))
	for i, c := range chunks {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		docs[i] = Document{Index: i + 1, Line: c.line}.withOutput(c.text)
		obj, err := c.object()
		if runtime.IsNotRegisteredError(err) {
			continue
		}
		var j []byte
		if err == nil {
			j, err = json.Marshal(obj)
		}
		if err != nil {
			docs[i].Error = &input.Error{Doc: i + 1, Line: c.line, Msg: err.Error()}
			continue
		}
		docs[i] = docs[i].withJSON(j)
	}
	return docs, nil
}

// markSerializer marks the changes of row 0 that the serializer alone makes (the same document,
// path, kind and values).
func markSerializer(changes, serializer []diff.Change) {
	if len(serializer) == 0 {
		return
	}
	key := func(c diff.Change) string {
		return fmt.Sprintf("%d\x00%s\x00%s\x00%s\x00%s\x00%d\x00%d", c.Doc, c.Path, c.Kind, diff.FormatValue(c.Old), diff.FormatValue(c.New), c.OldBytes, c.NewBytes)
	}
	set := make(map[string]bool, len(serializer))
	for _, c := range serializer {
		set[key(c)] = true
	}
	for i := range changes {
		changes[i].Serializer = set[key(changes[i])]
	}
}

// StepResult is one row of a timeline: the manifest injected with the first Index steps applied,
// and what changed against the row before. The changes and the unified diff are computed the
// first time they are asked for (a page shows one or the other, a toggle's answer often neither
// for most rows), then kept with the row.
type StepResult struct {
	// Index is 0 for the manifest as pasted, k after the k-th change.
	Index int
	// Step is the change this row adds; nil for row 0.
	Step      *input.Step
	Documents []Document

	// parsed are row 0's documents as Istio's reader makes them (inject.FromRawToObject), before
	// any annotation, nil for one it did not make: the later rows start from a copy of them
	// instead of reading the YAML again (see chunk.parsed).
	parsed []runtime.Object

	changes  lazy[[]diff.Change]
	unified  lazy[string]
	findings lazy[checked]
	// head makes the unified diff of the first documents (Unified with docs > 0); headDocs and
	// headText are the last one made.
	head      func(ctx context.Context, docs int) (string, error)
	headMu    sync.Mutex
	headDocs  int
	headText  string
	headBytes atomic.Int64 // len(headText), for size

	viewsMu   sync.Mutex
	views     map[any]any
	viewBytes atomic.Int64 // what the views that say their size (Sizer) hold
	// grew is called when the row holds more than when it was kept (an output's YAML made, a
	// view kept), so that the memo counts it again; nil for a row not kept.
	grew func()
}

// Sizer is a view that says how many bytes it holds; the row counts it (View).
type Sizer interface{ Size() int64 }

// checked is a row's findings: those reported, and those the manifest opted out of.
type checked struct{ found, ignored []Finding }

// maxViews bounds the views kept with one row (the page keeps two a language: the rows of
// changes and the step's HTML).
const maxViews = 8

// View is a value an edge derives from the row to show it (the page's rows of changes, their
// values as YAML, its HTML), computed once per key and kept with the memoised row, so a row that
// did not change is not shaped again on the next request. The key is the edge's own type (a
// struct of what the view depends on), so that two edges never share a key and a view is read
// back as the type it was made. At most maxViews keys are kept; a view that says its size
// (Sizer) is counted with the row. make must not hold the row's lock (it may call the row's
// other methods).
func View[K comparable, V any](r *StepResult, key K, make func() V) V {
	r.viewsMu.Lock()
	v, ok := r.views[key]
	r.viewsMu.Unlock()
	if ok {
		return v.(V)
	}
	made := make()
	r.viewsMu.Lock()
	if prior, ok := r.views[key]; ok {
		r.viewsMu.Unlock()
		return prior.(V)
	}
	counted := false
	if len(r.views) < maxViews {
		if r.views == nil {
			r.views = map[any]any{}
		}
		r.views[key] = made
		if sz, ok := any(made).(Sizer); ok {
			r.viewBytes.Add(sz.Size())
			counted = true
		}
	}
	r.viewsMu.Unlock()
	if counted && r.grew != nil {
		r.grew()
	}
	return made
}

// lazy is a value computed by the first caller whose computation finishes, from a function that
// is then dropped (it holds the row before, or the input, which the row no longer needs once it
// is computed). A computation cut short by its caller's deadline is not kept: the next caller
// computes it again, under its own deadline. Callers wait for one another (one computes at a
// time), as they would for its result.
type lazy[T any] struct {
	mu   sync.Mutex
	done bool
	f    func(context.Context) (T, error)
	v    T
}

func (l *lazy[T]) get(ctx context.Context) (T, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done || l.f == nil {
		return l.v, nil
	}
	v, err := l.f(ctx)
	if err != nil {
		var zero T
		return zero, err
	}
	l.v, l.f, l.done = v, nil, true
	return v, nil
}

// Changes are the field-level differences against the previous row, each one caused by Step;
// for row 0, against the input: what injection itself changed. The error is ctx's, when its
// deadline passes first (the documents are compared one by one, the deadline checked between).
func (r *StepResult) Changes(ctx context.Context) ([]diff.Change, error) { return r.changes.get(ctx) }

// Unified is a line diff of the whole output against the previous row (row 0: the input), a
// patch that turns the one into the other; documents that failed in either row are left out of
// both sides (see stepUnified). With docs > 0, of the first docs documents only (what a page
// shows of a large manifest; the last such diff is kept with the row). The error is ctx's.
func (r *StepResult) Unified(ctx context.Context, docs int) (string, error) {
	if docs <= 0 || docs >= len(r.Documents) || r.head == nil {
		return r.unified.get(ctx)
	}
	r.headMu.Lock()
	if r.headDocs == docs {
		defer r.headMu.Unlock()
		return r.headText, nil
	}
	text, err := r.head(ctx, docs)
	if err == nil {
		r.headDocs, r.headText = docs, text
		r.headBytes.Store(int64(len(text)))
	}
	r.headMu.Unlock()
	if err != nil {
		return "", err
	}
	if r.grew != nil {
		r.grew()
	}
	return text, nil
}

// MarshalJSON writes the row with its changes and unified diff, computing them without a
// deadline: a server computes them first, under its request's (Changes, Unified).
func (r *StepResult) MarshalJSON() ([]byte, error) {
	changes, err := r.Changes(context.Background())
	if err != nil {
		return nil, err
	}
	unified, err := r.Unified(context.Background(), 0)
	if err != nil {
		return nil, err
	}
	return json.Marshal(struct {
		Index     int           `json:"index"`
		Step      *input.Step   `json:"step,omitempty"`
		Documents []Document    `json:"documents"`
		Changes   []diff.Change `json:"changes"`
		Unified   string        `json:"unified,omitempty"`
	}{r.Index, r.Step, r.Documents, changes, unified})
}

// size estimates the memory a memoised row holds: each document's input and output texts, the
// output's JSON and the typed objects decoded from it (counted as three times the JSON), and, as
// an allowance for the changes and the unified diff once they are computed (the changes' values
// are bounded, see DiffDocuments), twice the output again; the views that say their size; and
// row 0's parsed inputs (a typed object: counted as 2 KB, the size of an empty workload's
// structs, and three times its text).
func (r *StepResult) size() int64 {
	n := r.viewBytes.Load() + r.headBytes.Load()
	for i, d := range r.Documents {
		n += int64(len(d.Input)+3*d.outputSize()+4*len(d.json)) + 256
		for _, w := range d.Warnings {
			n += int64(len(w))
		}
		if i < len(r.parsed) && r.parsed[i] != nil {
			n += 2048 + 3*int64(len(d.Input))
		}
	}
	return n
}

// Errors are the row's document errors, in order.
func (r *StepResult) Errors() []*input.Error { return (&Injection{Documents: r.Documents}).Errors() }

// Output is the row's whole injected manifest as istioctl prints it.
func (r *StepResult) Output() string { return (&Injection{Documents: r.Documents}).Output() }

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
	var all []diff.Line
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
		all = append(all, diff.Lines(a, d.Output()+"---\n")...)
	}
	return diff.Patch(all), nil
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
