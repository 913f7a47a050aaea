package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

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
