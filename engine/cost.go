package engine

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"

	yaml "go.yaml.in/yaml/v3"

	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/engine/yamldoc"
)

// Cost is what a timeline will take, estimated before any of it is done from what a cheap first
// read knows: how many documents, how large and how deeply nested each is, and how many rows
// are not in the memo. A server compares it with its limits (Limits.Check) to refuse work that
// cannot finish in time and to run heavy work apart from light work; the CLI does not look at it.
type Cost struct {
	// Documents is how many documents the manifest has, Objects how many objects Istio injects
	// one by one (the documents, a List's items in place of the List), Rows how many timeline
	// rows must be computed (the rows already memoised cost nothing).
	Documents, Objects, Rows int
	// Aliased is how many of the objects are not written out: List items written as an alias of
	// another item (items: [&d {…}, *d, *d]).
	Aliased int
	// Units is the estimated work: for each row to compute, each document's units, one for
	// every 4 KiB begun of what it reads as (Expanded), or for a List, one per item and per
	// 4 KiB. One unit is about one injection of a small workload.
	Units int64
	// Expanded is the bytes the manifest reads as: its text, with each alias's anchored node
	// counted again wherever the alias stands (as far as Kubernetes' reader follows them);
	// Written is its text's bytes.
	Expanded, Written int64
	// Depth bounds how deeply the deepest document's values nest (collections within
	// collections, aliases followed; from the text, so it may be a few levels over), and
	// DeepDoc and DeepLine say where that document is.
	Depth, DeepDoc, DeepLine int
	// AliasDoc and AliasLine are where the alias the refusals of aliases name stands: the first
	// of the first document with aliased objects, or else of the document its aliases add most to.
	AliasDoc, AliasLine int
	// Render is set when the install options' installation must be rendered first (about half a
	// second, then kept), Worker when the injections run templates of the user's in a worker
	// process (Options.Isolator), whose cost is not known before they run: both are heavy
	// whatever the units.
	Render, Worker bool
}

// unitBytes is the size of a document that costs one unit of work per row.
const unitBytes = 4 << 10

// Limits are a server's bounds on one request's work. The zero value bounds nothing.
type Limits struct {
	// MaxDepth bounds how deeply a document's values nest. Kubernetes reads up to 10,000 levels;
	// a workload has about 15, a large CRD's schema about 60. Every layer that walks a value
	// (the diff, the secret scan, the lifecycle) costs more per level, and a few bytes of
	// brackets buy thousands.
	MaxDepth int
	// MaxUnits bounds Cost.Units: what would not finish before the request's deadline.
	MaxUnits int64
	// MaxBytes bounds Cost.Expanded: a few hundred bytes of aliases read as megabytes, and
	// everything after the reader (the injections, the outputs, the answer) grows with them.
	MaxBytes int64
	// WrittenOut refuses objects that are not written out (Cost.Aliased), and aliases that add
	// more than the manifest's own text and aliasSlack (Cost.Expanded over twice Cost.Written
	// and aliasSlack), so that what an answer shows of a manifest is bounded by what the
	// manifest has written: a List of 300 bytes whose items are one Deployment and its aliases is
	// 1,500 workloads to inject and show, a Pod of 4 KB whose containers are one alias 1,000
	// containers. An anchor as people use them (an env list shared by the containers) adds far
	// less than its manifest.
	WrittenOut bool
}

// aliasSlack is what aliases may add to a manifest besides as much as it has written.
const aliasSlack = 16 << 10

// Check says which limit c is over, as an error for the person who sent it (which limit, and how
// to split the input), or nil.
func (l Limits) Check(c Cost) error {
	if l.MaxDepth > 0 && c.Depth > l.MaxDepth {
		return &input.Error{Doc: c.DeepDoc, Line: c.DeepLine, Field: "manifest", ID: "too-deep",
			Params: input.Params("depth", strconv.Itoa(c.Depth), "max", strconv.Itoa(l.MaxDepth)),
		}
	}
	if l.WrittenOut && c.Aliased > 0 {
		return &input.Error{Doc: c.AliasDoc, Line: c.AliasLine, Field: "manifest", ID: "aliased-items",
			Params: input.Params("count", strconv.Itoa(c.Aliased)),
		}
	}
	if l.MaxBytes > 0 && c.Expanded > l.MaxBytes {
		return &input.Error{Doc: c.AliasDoc, Line: c.AliasLine, Field: "manifest", ID: "too-expanded",
			Params: input.Params("size", strconv.FormatInt(c.Expanded, 10), "max", strconv.FormatInt(l.MaxBytes, 10)),
		}
	}
	if l.WrittenOut && c.Expanded > 2*c.Written+aliasSlack {
		return &input.Error{Doc: c.AliasDoc, Line: c.AliasLine, Field: "manifest", ID: "aliases-expand",
			Params: input.Params("size", strconv.FormatInt(c.Expanded, 10), "written", strconv.FormatInt(c.Written, 10), "max", strconv.FormatInt(2*c.Written+aliasSlack, 10)),
		}
	}
	if l.MaxUnits > 0 && c.Units > l.MaxUnits {
		// How many documents (or objects, with the items of Lists) would fit with these rows,
		// to say how to split.
		objects := max(c.Objects, c.Documents)
		fit := max(int64(1), l.MaxUnits*int64(objects)/c.Units)
		if objects > c.Documents {
			return &input.Error{Field: "manifest", ID: "too-costly-items",
				Params: input.Params("objects", strconv.Itoa(objects), "rows", strconv.Itoa(c.Rows), "units", strconv.FormatInt(c.Units, 10),
					"max", strconv.FormatInt(l.MaxUnits, 10), "fit", strconv.FormatInt(fit, 10)),
			}
		}
		return &input.Error{Field: "manifest", ID: "too-costly",
			Params: input.Params("documents", strconv.Itoa(c.Documents), "rows", strconv.Itoa(c.Rows), "units", strconv.FormatInt(c.Units, 10),
				"max", strconv.FormatInt(l.MaxUnits, 10), "fit", strconv.FormatInt(fit, 10)),
		}
	}
	return nil
}

// Estimate is the cost of Timeline(ctx, manifest, steps, s), read without injecting anything.
// The nesting of a manifest is measured once and kept (by the manifest's hash), so a toggle of
// a manifest already seen costs a hash and a lookup. It returns an error only for a manifest
// that cannot be cut into documents, or when ctx ends.
func (e *Engine) Estimate(ctx context.Context, manifest []byte, steps []input.Step, s Settings) (Cost, error) {
	sum := sha256.Sum256(manifest)
	inHash := hex.EncodeToString(sum[:])
	shape, _, err := e.shapes.get(inHash, func() (*manifestShape, error) { return e.measure(ctx, manifest) })
	if err != nil {
		return Cost{}, err
	}
	c := Cost{Documents: shape.documents, Objects: shape.objects, Aliased: shape.aliased, Expanded: shape.expanded, Written: int64(len(manifest)), Depth: shape.depth, DeepDoc: shape.deepDoc, DeepLine: shape.deepLine,
		AliasDoc: shape.aliasDoc, AliasLine: shape.aliasLine}
	if !s.Install.IsDefault() {
		in, ok := e.installs.peek(s.Install.Hash())
		c.Render = !ok
		c.Worker = ok && in != nil && in.custom && e.opts.Isolator != nil
	}
	for _, key := range rowKeys(s, inHash, steps) {
		if !e.steps.has(key) {
			c.Rows++
		}
	}
	c.Units = int64(c.Rows) * shape.units
	return c, nil
}

// manifestShape is what Estimate keeps of a manifest: its documents, their units of work per
// row, the bytes they read as (aliases resolved), and its deepest nesting.
type manifestShape struct {
	documents, objects       int
	aliased                  int
	units, expanded          int64
	depth, deepDoc, deepLine int
	aliasDoc, aliasLine      int
	aliasAdds                int64 // what the aliases of aliasDoc add, when it has no aliased objects
}

func (m *manifestShape) size() int64 { return 64 }

// followDepth is the deepest text whose aliases Estimate follows (by parsing it): past it, the
// text alone is over any sensible Limits.MaxDepth.
const followDepth = 1000

// measure reads a manifest's shape: its documents as istioctl cuts them, and a bound on each
// one's nesting read from its bytes (yamldoc.DepthBound: parsing deep nesting is itself the
// cost to avoid). A document with aliases, or one that may be a List, is parsed too, and what
// it expands to counted (expand): the aliases followed as Kubernetes' reader follows them,
// and each List item, which Istio injects on its own. More documents than the engine injects
// at once are refused here, as Timeline refuses them, before any is read.
func (e *Engine) measure(ctx context.Context, manifest []byte) (*manifestShape, error) {
	// A manifest that cannot be cut fails on the same error when it runs; its shape is what
	// was read.
	docs, _ := yamldoc.Split(manifest) // the documents only: Timeline cuts them again into its chunks
	if err := e.documentsAllowed(len(docs)); err != nil {
		return nil, err
	}
	m := &manifestShape{documents: len(docs), objects: len(docs)}
	for i, c := range docs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		units, expanded := int64(1+len(c.Raw)/unitBytes), int64(len(c.Raw))
		d, aliases := yamldoc.DepthBound(c.Raw)
		if (aliases || bytes.Contains(c.Raw, []byte("List"))) && d <= followDepth {
			// Parsed, which costs little at this depth: an alias nests the anchored node
			// wherever it stands, and adds it again to what the reader decodes.
			var n yaml.Node
			_ = yaml.Unmarshal(c.Raw, &n)
			if aliases {
				d = max(d, nodeDepth(&n, map[*yaml.Node]int{}))
			}
			x := expand(&n)
			// What the reader decodes, in bytes of this document's text: the text as often as
			// its scalars' bytes are decoded. Each List item is an injection of its own.
			expanded = int64(float64(len(c.Raw)) * float64(x.content) / float64(max(1, x.writtenContent)))
			units = max(1, x.items) + expanded/unitBytes
			m.objects += int(min(x.items, math.MaxInt32))
			if x.firstAlias > 0 {
				adds := expanded - int64(len(c.Raw))
				switch {
				case x.aliased > 0 && m.aliased == 0:
					m.aliasDoc, m.aliasLine, m.aliasAdds = i+1, c.Line+x.firstAlias-1, math.MaxInt64
				case adds > m.aliasAdds:
					m.aliasDoc, m.aliasLine, m.aliasAdds = i+1, c.Line+x.firstAlias-1, adds
				}
			}
			m.aliased += int(min(x.aliased, math.MaxInt32))
			if x.items > 0 {
				m.objects-- // the List itself
			}
		}
		m.units, m.expanded = satAdd(m.units, units), satAdd(m.expanded, expanded)
		if d > m.depth {
			m.depth, m.deepDoc, m.deepLine = d, i+1, c.Line
		}
	}
	return m, nil
}

// satAdd is a + b, or the largest int64 where that would overflow (both are never negative).
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// expansion is what Kubernetes' YAML reader (sigs.k8s.io/yaml, which decodes with go-yaml v2)
// makes of one document: the nodes it decodes — every node, and an alias's anchored node again
// wherever the alias stands — and how many items of a List (and of Lists inside it) Istio's
// IntoObject injects one by one.
type expansion struct {
	written, decodes, items int64
	// content is the bytes of the scalars decoded, two more for each node (its punctuation);
	// writtenContent the same of the document as written, an alias as its name.
	content, writtenContent int64
	// aliased is how many of the items are an alias of another (items: [&d {…}, *d, *d]).
	aliased int64
	// firstAlias is the line of the document's first alias, 0 when it has none.
	firstAlias int
}

// The reader's bound on aliases (go-yaml v2's decoder.unmarshal): past 100 nodes decoded inside
// an alias and 1,000 in all, the share of the decoded nodes that came from an alias may be 99 %
// up to 400,000 nodes, 10 % from 4,000,000, and in between from one to the other in a line;
// past it the reader stops with "document contains excessive aliasing". So a document's
// aliases can never add much more than 400,000 nodes, whatever they nest.
const (
	aliasRatioLow, aliasRatioHigh = 400_000, 4_000_000
)

func allowedAliasRatio(decodes int64) float64 {
	switch {
	case decodes <= aliasRatioLow:
		return 0.99
	case decodes >= aliasRatioHigh:
		return 0.10
	default:
		return 0.99 - 0.89*float64(decodes-aliasRatioLow)/float64(aliasRatioHigh-aliasRatioLow)
	}
}

// expand counts what the reader decodes of n, node by node in its order, stopping where the
// reader stops (its alias bound, or an alias inside its own anchor): the walk is bounded as the
// reader is, never by what the aliases would expand to.
func expand(n *yaml.Node) expansion {
	w := &expander{active: map[*yaml.Node]bool{}}
	w.count(n)
	x := expansion{decodes: w.decodes, content: w.content, firstAlias: w.firstAlias}
	x.written, x.writtenContent = countWritten(n)
	if !w.stopped {
		x.items, x.aliased = listItems(n, 0)
	}
	return x
}

type expander struct {
	decodes, aliased, content int64
	firstAlias                int
	aliasDepth                int
	active                    map[*yaml.Node]bool
	stopped                   bool
}

func (w *expander) count(n *yaml.Node) {
	if n == nil || w.stopped {
		return
	}
	w.decodes++
	if w.aliasDepth > 0 {
		w.aliased++
	}
	if w.aliased > 100 && w.decodes > 1000 && float64(w.aliased)/float64(w.decodes) > allowedAliasRatio(w.decodes) {
		w.stopped = true
		return
	}
	if n.Kind != yaml.AliasNode {
		w.content += int64(len(n.Value)) + 2
	}
	switch n.Kind {
	case yaml.AliasNode:
		if w.firstAlias == 0 {
			w.firstAlias = n.Line
		}
		if w.active[n.Alias] {
			w.stopped = true // "anchor '…' value contains itself"
			return
		}
		w.active[n.Alias] = true
		w.aliasDepth++
		w.count(n.Alias)
		w.aliasDepth--
		delete(w.active, n.Alias)
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i]; k.Kind != yaml.ScalarNode || k.Tag != "!!merge" {
				w.count(k) // a merge key is not decoded, its value is
			}
			w.count(n.Content[i+1])
		}
	default:
		for _, c := range n.Content {
			w.count(c)
		}
	}
}

// countWritten is how many nodes n has as written (an alias is one), and their content as
// expander counts it (an alias's is its name).
func countWritten(n *yaml.Node) (nodes, content int64) {
	if n == nil {
		return 0, 0
	}
	nodes, content = 1, int64(len(n.Value))+2
	if n.Kind != yaml.AliasNode {
		for _, k := range n.Content {
			kn, kc := countWritten(k)
			nodes, content = nodes+kn, content+kc
		}
	}
	return nodes, content
}

// maxListNesting bounds how deeply listItems follows Lists inside Lists (each nested List is
// read again by Istio from its JSON, so it has no aliases left to follow).
const maxListNesting = 10

// listItems is how many objects IntoObject injects one by one in n when it is a List (a
// document whose kind is List): each item, or a List item's own items; 0 when n is not a List.
// aliased is how many of them were written as an alias of another item (with the items of a
// List written so). The reader has already decoded the whole document (expand), which bounds
// what is counted.
func listItems(n *yaml.Node, nesting int) (items, aliased int64) {
	if n == nil || nesting > maxListNesting {
		return 0, 0
	}
	if n = yamldoc.Deref(n); n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = yamldoc.Deref(n.Content[0])
	}
	_, kind := yamldoc.MappingEntry(n, "kind")
	_, list := yamldoc.MappingEntry(n, "items")
	if kind == nil || list == nil || yamldoc.Deref(kind).Value != "List" || yamldoc.Deref(list).Kind != yaml.SequenceNode {
		return 0, 0
	}
	for _, it := range yamldoc.Deref(list).Content {
		in, ia := listItems(it, nesting+1)
		in = max(1, in)
		if it.Kind == yaml.AliasNode || list.Kind == yaml.AliasNode {
			ia = in
		}
		items, aliased = satAdd(items, in), satAdd(aliased, ia)
	}
	return items, aliased
}

// nodeDepth is how many collections nest in n, aliases followed (each anchored node measured
// once: seen holds the anchored nodes measured, so a document of many aliases costs its size,
// not more).
func nodeDepth(n *yaml.Node, seen map[*yaml.Node]int) int {
	if n == nil {
		return 0
	}
	anchored := n.Anchor != ""
	if anchored {
		if d, ok := seen[n]; ok {
			return d
		}
		seen[n] = 0 // an alias back to a node being measured (Istio's reader refuses it anyway)
	}
	d := 0
	switch n.Kind {
	case yaml.AliasNode:
		d = nodeDepth(n.Alias, seen)
	case yaml.DocumentNode:
		for _, c := range n.Content {
			d = max(d, nodeDepth(c, seen))
		}
	case yaml.MappingNode, yaml.SequenceNode:
		for _, c := range n.Content {
			d = max(d, nodeDepth(c, seen))
		}
		d++
	}
	if anchored {
		seen[n] = d
	}
	return d
}

// rowKeys are the memo keys of a timeline's rows: the settings, the input and each prefix of
// the steps (row k is row k−1 plus step k).
func rowKeys(s Settings, inHash string, steps []input.Step) []string {
	keys := make([]string, 0, len(steps)+1)
	prefix := sha256.New()
	fmt.Fprintf(prefix, "%s\x00%s\x00", s.key(), inHash)
	for k := 0; k <= len(steps); k++ {
		if k > 0 {
			fmt.Fprintf(prefix, "%d\x00%s\x00%s\x00", boolInt(steps[k-1].Remove), steps[k-1].Key, steps[k-1].Value)
		}
		keys = append(keys, hex.EncodeToString(prefix.Sum(nil)))
	}
	return keys
}
