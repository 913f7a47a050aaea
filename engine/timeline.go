package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/runtime"
)

// Step is one annotation change the user makes: set Key to Value, or remove Key.
type Step struct {
	Key    string `json:"key"`
	Value  string `json:"value,omitempty"`
	Remove bool   `json:"remove,omitempty"`
}

// String renders a step as a person writes it: key=value, or -key for a removal.
func (s Step) String() string {
	if s.Remove {
		return "-" + s.Key
	}
	return s.Key + "=" + s.Value
}

// maxCauseValue is the most of a step's value a change's Cause repeats: the whole value is the
// row's Step, once, and a change names it instead of copying it (a 250,000-byte value set five
// fields, and every one of them carried it again).
const maxCauseValue = 120

// cause is what a change made by the step says caused it: String, with a value over
// maxCauseValue bytes cut at a character's start and ended by "…".
func (s Step) cause() string {
	if s.Remove || len(s.Value) <= maxCauseValue {
		return s.String()
	}
	n := maxCauseValue
	for n > 0 && !utf8.RuneStart(s.Value[n]) {
		n--
	}
	return s.Key + "=" + s.Value[:n] + "…"
}

// ParseStep reads "key=value" (set) or "-key" (remove).
func ParseStep(s string) (Step, error) {
	s = strings.TrimSpace(s)
	if k, ok := strings.CutPrefix(s, "-"); ok && !strings.Contains(k, "=") {
		return Step{Key: strings.TrimSpace(k), Remove: true}, nil
	}
	k, v, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(k) == "" {
		return Step{}, &InputError{Field: "annotation", ID: "step-format", Params: errParams("stepQ", quote(s)),
			Msg: fmt.Sprintf("%q: want KEY=VALUE (or -KEY to remove)", s)}
	}
	return Step{Key: strings.TrimSpace(k), Value: v}, nil
}

type annotationChange struct {
	key, value string
	remove     bool
}

// annotationsAt is the list of changes in force at step k: steps[:k], in order.
func annotationsAt(steps []Step, k int) []annotationChange {
	out := make([]annotationChange, 0, k)
	for _, s := range steps[:k] {
		out = append(out, annotationChange{key: s.Key, value: s.Value, remove: s.Remove})
	}
	return out
}

// StepResult is one row of a timeline: the manifest injected with the first Index steps applied,
// and what changed against the row before. The changes and the unified diff are computed the
// first time they are asked for (a page shows one or the other, a toggle's answer often neither
// for most rows), then kept with the row.
type StepResult struct {
	// Index is 0 for the manifest as pasted, k after the k-th change.
	Index int
	// Step is the change this row adds; nil for row 0.
	Step      *Step
	Documents []Document

	// parsed are row 0's documents as Istio's reader makes them (inject.FromRawToObject), before
	// any annotation, nil for one it did not make: the later rows start from a copy of them
	// instead of reading the YAML again (see chunk.parsed).
	parsed []runtime.Object

	changes  lazy[[]Change]
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
	views     map[string]any
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
// did not change is not shaped again on the next request. At most maxViews keys are kept; a view
// that says its size (Sizer) is counted with the row. make must not hold the row's lock (it may
// call the row's other methods).
func (r *StepResult) View(key string, make func() any) any {
	r.viewsMu.Lock()
	v, ok := r.views[key]
	r.viewsMu.Unlock()
	if ok {
		return v
	}
	v = make()
	r.viewsMu.Lock()
	if prior, ok := r.views[key]; ok {
		r.viewsMu.Unlock()
		return prior
	}
	counted := false
	if len(r.views) < maxViews {
		if r.views == nil {
			r.views = map[string]any{}
		}
		r.views[key] = v
		if sz, ok := v.(Sizer); ok {
			r.viewBytes.Add(sz.Size())
			counted = true
		}
	}
	r.viewsMu.Unlock()
	if counted && r.grew != nil {
		r.grew()
	}
	return v
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
func (r *StepResult) Changes(ctx context.Context) ([]Change, error) { return r.changes.get(ctx) }

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
		Index     int        `json:"index"`
		Step      *Step      `json:"step,omitempty"`
		Documents []Document `json:"documents"`
		Changes   []Change   `json:"changes"`
		Unified   string     `json:"unified,omitempty"`
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
func (r *StepResult) Errors() []*InputError { return (&Injection{Documents: r.Documents}).Errors() }

// Output is the row's whole injected manifest as istioctl prints it.
func (r *StepResult) Output() string { return (&Injection{Documents: r.Documents}).Output() }

// Timeline is a manifest followed through a list of annotation changes.
type Timeline struct {
	Settings Settings      `json:"settings"`
	Steps    []*StepResult `json:"steps"`
	// Findings are the pitfalls found in the last row.
	Findings []Finding `json:"findings"`
	// Ignored are the last row's findings the manifest opted out of (IgnoreAnnotation).
	Ignored []Finding `json:"ignored,omitempty"`
}

// Timeline injects the manifest as is (row 0) and after each step (row k = row k−1 plus step k),
// diffing each row against the one before. Rows are memoised by (installation, mode, input,
// steps prefix), so changing only the last step costs one injection.
func (e *Engine) Timeline(ctx context.Context, manifest []byte, steps []Step, s Settings) (*Timeline, error) {
	p, err := e.prepare(ctx, manifest, steps, s)
	if err != nil {
		return nil, err
	}
	t := &Timeline{Settings: s, Steps: make([]*StepResult, 0, len(steps)+1)}
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
			docs, err := e.injectAll(ctx, p, annotationsAt(steps, k))
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
				r.changes.f = func(ctx context.Context) ([]Change, error) {
					inputs := make([]Document, len(docs))
					for i, d := range docs {
						inputs[i] = Document{Index: d.Index}.withOutput(d.Input)
					}
					changes, err := diffDocuments(ctx, inputs, docs, "")
					if err != nil {
						return nil, err
					}
					ser, err := serialized(ctx, p.chunks)
					if err != nil {
						return nil, err
					}
					by, err := diffDocuments(ctx, inputs, ser, "")
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
				r.changes.f = func(ctx context.Context) ([]Change, error) {
					return diffDocuments(ctx, before.Documents, docs, st.cause())
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
	t.Findings, t.Ignored = c.found, c.ignored
	return t, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Text renders the timeline as `sidecarlab diff` prints it: a block per row, the field changes
// grouped by document (or, with unified, the line diff). The error is ctx's (see Changes).
func (t *Timeline) Text(ctx context.Context, unified bool) (string, error) {
	var w strings.Builder
	for _, st := range t.Steps {
		if st.Step == nil {
			w.WriteString("# step 0: injection (input → injected)\n")
		} else {
			fmt.Fprintf(&w, "# step %d: %s\n", st.Index, st.Step)
		}
		// A document Istio rejected has no output: the row says it failed, and neither diff
		// compares it (a failed row is not "no change").
		failed := false
		for _, d := range st.Documents {
			if d.Error != nil {
				fmt.Fprintf(&w, "injection failed: %s\n", d.Error)
				failed = true
			}
		}
		if unified {
			u, err := st.Unified(ctx, 0)
			if err != nil {
				return "", err
			}
			if u == "" && !failed {
				w.WriteString("(no change)\n")
			}
			w.WriteString(u)
			w.WriteString("\n")
			continue
		}
		changes, err := st.Changes(ctx)
		if err != nil {
			return "", err
		}
		if len(changes) == 0 && !failed {
			w.WriteString("(no change)\n")
		}
		// Changes come grouped by document; within one, what the serializer alone writes (row 0)
		// is listed last, under its own heading, so injection's own changes come first.
		for i := 0; i < len(changes); {
			doc := changes[i].Doc
			j := i
			for j < len(changes) && changes[j].Doc == doc {
				j++
			}
			d := st.Documents[doc-1]
			name := d.Name
			if d.Namespace != "" {
				name = d.Namespace + "/" + name
			}
			fmt.Fprintf(&w, "document %d: %s\n", doc, strings.TrimPrefix(d.Kind+"/"+name, "/"))
			for _, serializer := range []bool{false, true} {
				head := serializer
				for _, c := range changes[i:j] {
					if c.Serializer != serializer {
						continue
					}
					if head {
						w.WriteString("  # written by kube-inject's serializer (empty defaults), not by injection:\n")
						head = false
					}
					fmt.Fprintf(&w, "  %s\n", c)
				}
			}
			i = j
		}
		w.WriteString("\n")
	}
	return w.String(), nil
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
			docs[i].Error = &InputError{Doc: i + 1, Line: c.line, Msg: err.Error()}
			continue
		}
		docs[i] = docs[i].withJSON(j)
	}
	return docs, nil
}

// markSerializer marks the changes of row 0 that the serializer alone makes (the same document,
// path, kind and values).
func markSerializer(changes, serializer []Change) {
	if len(serializer) == 0 {
		return
	}
	key := func(c Change) string {
		return fmt.Sprintf("%d\x00%s\x00%s\x00%s\x00%s\x00%d\x00%d", c.Doc, c.Path, c.Kind, FormatValue(c.Old), FormatValue(c.New), c.OldBytes, c.NewBytes)
	}
	set := make(map[string]bool, len(serializer))
	for _, c := range serializer {
		set[key(c)] = true
	}
	for i := range changes {
		changes[i].Serializer = set[key(changes[i])]
	}
}
