package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/sidecarlab/sidecarlab/engine/diff"
	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/i18n"
)

// Document is the result for one YAML document of the input.
type Document struct {
	// Index is the 1-based position of the document in the input, as a person counts them.
	Index int `json:"index"`
	// Line is the input line the document starts on.
	Line       int    `json:"line"`
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Name       string `json:"name,omitempty"`
	Namespace  string `json:"namespace,omitempty"`
	// Injectable is false for kinds Istio does not inject (Service, ConfigMap, …); those pass
	// through unchanged, as istioctl passes them.
	Injectable bool `json:"injectable"`
	// Skipped is true when Istio looked at the workload and chose not to inject it;
	// SkipReason is Istio's own message.
	Skipped    bool   `json:"skipped,omitempty"`
	SkipReason string `json:"skipReason,omitempty"`
	// Input is the document as given (before annotation steps).
	Input string `json:"input"`
	// output is the document as `istioctl kube-inject` prints it; see Output.
	output *outputText
	// Warnings are Istio's warnings for this document.
	Warnings []string `json:"warnings,omitempty"`
	// Error is set when Istio (or YAML parsing) rejected the document; Output is then empty.
	Error *input.Error `json:"error,omitempty"`

	// json is Output as JSON, when the engine produced it; in and out are the typed input (steps
	// applied) and output, which the checks, the lifecycle and the batch rows read.
	json    []byte
	in, out runtime.Object
	// panicked is what Istio's injector panicked with on this document, if it did; the
	// document then carries an error, and FuzzInject fails on it.
	panicked any
	// labels are the document's metadata.labels (Workloads gives them to the Cluster view).
	labels map[string]string
}

// Output is the document as `istioctl kube-inject` prints it (without the "---" after it). An
// injected document's YAML is made from its JSON the first time it is asked for: a toggle on the
// diff tab, the batch rows and the checks read the JSON and the typed objects, not the YAML.
func (d Document) Output() string {
	if d.output == nil {
		return ""
	}
	return d.output.get()
}

// InjectsImage reports whether the document's output has a container of image: in its JSON,
// when it has one (no YAML is made for this), else in its text.
func (d Document) InjectsImage(image string) bool {
	if image == "" {
		return false
	}
	if d.json != nil {
		q, _ := json.Marshal(image)
		return bytes.Contains(d.json, append([]byte(`"image":`), q...))
	}
	return strings.Contains(d.Output(), "image: "+image+"\n")
}

// outputText is a document's output: given, or made from its JSON when first read.
type outputText struct {
	once sync.Once
	j    []byte // the JSON to make it from; nil when given
	text string
	size atomic.Int64 // len(text) once it is there
	// made is called once the text is made, so a memo holding the document counts it. It is set
	// before the document is shared.
	made func()
}

func (o *outputText) get() string {
	o.once.Do(func() {
		if o.j == nil {
			return
		}
		b, _ := yaml.JSONToYAML(o.j) // cannot fail: no key is long (longKey)
		o.text = string(b)
		o.size.Store(int64(len(o.text)))
		if o.made != nil {
			o.made()
		}
	})
	return o.text
}

// withOutput is d with the output text it is known by.
func (d Document) withOutput(text string) Document {
	d.output = &outputText{text: text}
	d.output.size.Store(int64(len(text)))
	return d
}

// withJSON is d with its output's JSON j; the YAML (what yaml.Marshal writes: JSONToYAML of the
// JSON) is made when it is first read. JSONToYAML fails on a key it cannot write as a YAML simple
// key; such an output is converted now, so that the document carries the error istioctl reports.
func (d Document) withJSON(j []byte) Document {
	if longKey(j) {
		b, err := yaml.JSONToYAML(j)
		if err != nil {
			d.Error = &input.Error{Doc: d.Index, Line: d.Line, Msg: err.Error()}
			return d
		}
		d.json = j
		return d.withOutput(string(b))
	}
	d.json = j
	d.output = &outputText{j: j}
	return d
}

// maxSimpleKey is the longest object key (in bytes, with its quotes) that go.yaml.in/yaml/v2 reads
// back from JSON; a longer one makes JSONToYAML fail (TestWithJSONLongKey).
const maxSimpleKey = 1000

// longKey says whether JSON text j (as json.Marshal writes it) has an object key longer than
// maxSimpleKey bytes.
func longKey(j []byte) bool {
	for i := 0; i < len(j); i++ {
		if j[i] != '"' {
			continue
		}
		end := diff.JSONStringEnd(j, i)
		if end < 0 {
			return false
		}
		if end < len(j) && j[end] == ':' && end-i > maxSimpleKey {
			return true
		}
		i = end - 1
	}
	return false
}

// sameOutput says whether two documents' outputs are the same, comparing their JSON when both
// have it (the YAML is made from it; equal JSON, equal YAML) so that no YAML is made for it.
func sameOutput(a, b Document) bool {
	if a.json != nil && b.json != nil {
		return bytes.Equal(a.json, b.json)
	}
	return a.Output() == b.Output()
}

// outputSize is the length of the document's output, or, before its YAML is made, of the JSON it
// is made from; a memo that holds the document measures it again once the YAML is made
// (outputText.made).
func (d Document) outputSize() int {
	if d.output == nil {
		return 0
	}
	if n := d.output.size.Load(); n > 0 || d.output.j == nil {
		return int(n)
	}
	return len(d.output.j)
}

// MarshalJSON writes the document with its output.
func (d Document) MarshalJSON() ([]byte, error) {
	type plain Document
	return json.Marshal(struct {
		plain
		Output string `json:"output,omitempty"`
	}{plain(d), d.Output()})
}

// Status is what happened to a document.
type Status string

const (
	// StatusInjected: Istio injected the workload.
	StatusInjected Status = "injected"
	// StatusSkipped: Istio looked at the workload and chose not to inject it.
	StatusSkipped Status = "skipped"
	// StatusPassedThrough: a kind Istio does not inject (Service, ConfigMap, …), written back as is.
	StatusPassedThrough Status = "passed through"
	// StatusError: Istio (or YAML parsing) rejected the document.
	StatusError Status = "error"
)

// Status classifies the document and says why: Istio's own message for a skipped or rejected
// document, the reason a kind passes through (the English catalog's, results.status.
// passed-through-reason: the edges word it in the reader's language), nothing for an injected one.
func (d Document) Status() (Status, string) {
	switch {
	case d.Error != nil:
		return StatusError, d.Error.Text()
	case d.Skipped:
		return StatusSkipped, d.SkipReason
	case !d.Injectable:
		return StatusPassedThrough, i18n.For(i18n.Default).T("results.status.passed-through-reason")
	}
	return StatusInjected, ""
}

// tree decodes the document's output for diffing.
func (d *Document) tree() (any, error) {
	var v any
	if d.json != nil {
		err := json.Unmarshal(d.json, &v)
		return v, err
	}
	err := yaml.Unmarshal([]byte(d.Output()), &v)
	return v, err
}

// DiffDocuments compares two injections of the same input, document by document, and attributes
// every change to cause; ctx's deadline is checked before each document. Documents that failed on
// either side are not compared (their errors are reported on the documents). Values beyond the
// bounds are left out of the changes (diff.Change.Bound).
func DiffDocuments(ctx context.Context, before, after []Document, cause string) ([]diff.Change, error) {
	var out []diff.Change
	for i := range min(len(before), len(after)) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		a, b := before[i], after[i]
		if a.Error != nil || b.Error != nil || sameOutput(a, b) {
			continue
		}
		av, bv, err := diffTrees(a, b)
		if err != nil {
			continue
		}
		for _, c := range diff.Values(av, bv) {
			c.Doc = after[i].Index
			c.Cause = cause
			c.Bound()
			out = append(out, c)
		}
	}
	return out, nil
}

// diffTrees are two documents' outputs decoded for diff.Values: only the parts that differ when
// both have their JSON (diff.PrunedTrees), else whole.
func diffTrees(a, b Document) (any, any, error) {
	if a.json != nil && b.json != nil {
		return diff.PrunedTrees(a.json, b.json)
	}
	av, err := a.tree()
	if err != nil {
		return nil, nil, err
	}
	bv, err := b.tree()
	return av, bv, err
}
