package engine

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"
)

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
