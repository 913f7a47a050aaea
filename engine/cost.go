package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"

	yaml "go.yaml.in/yaml/v3"

	"github.com/sidecarlab/sidecarlab/engine/yamldoc"
)

// Cost is what a timeline will take, estimated before any of it is done from what a cheap first
// read knows: how many documents, how large and how deeply nested each is, and how many rows
// are not in the memo. A server compares it with its limits (Limits.Check) to refuse work that
// cannot finish in time and to run heavy work apart from light work; the CLI does not look at it.
type Cost struct {
	// Documents is how many documents the manifest has, Rows how many timeline rows must be
	// computed (the rows already memoised cost nothing).
	Documents, Rows int
	// Units is the estimated work: for each row to compute, each document's units, one for
	// every 4 KiB begun. One unit is about one injection of a small workload.
	Units int64
	// Depth bounds how deeply the deepest document's values nest (collections within
	// collections, aliases followed; from the text, so it may be a few levels over), and
	// DeepDoc and DeepLine say where that document is.
	Depth, DeepDoc, DeepLine int
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
}

// Check says which limit c is over, as an error for the person who sent it (which limit, and how
// to split the input), or nil.
func (l Limits) Check(c Cost) error {
	if l.MaxDepth > 0 && c.Depth > l.MaxDepth {
		return &InputError{Doc: c.DeepDoc, Line: c.DeepLine, Field: "manifest", ID: "too-deep",
			Params: errParams("depth", strconv.Itoa(c.Depth), "max", strconv.Itoa(l.MaxDepth)),
			Msg:    fmt.Sprintf("its values nest up to %d levels deep; at most %d are read here (a workload nests about 15): flatten or remove the deep value", c.Depth, l.MaxDepth)}
	}
	if l.MaxUnits > 0 && c.Units > l.MaxUnits {
		// How many documents would fit with these rows, to say how to split.
		per := max(int64(1), c.Units/int64(max(1, c.Documents)))
		fit := max(int64(1), l.MaxUnits/per)
		return &InputError{Field: "manifest", ID: "too-costly",
			Params: errParams("documents", strconv.Itoa(c.Documents), "rows", strconv.Itoa(c.Rows), "units", strconv.FormatInt(c.Units, 10),
				"max", strconv.FormatInt(l.MaxUnits, 10), "fit", strconv.FormatInt(fit, 10)),
			Msg: fmt.Sprintf("%d documents through %d rows of the timeline is %d units of work; at most %d fit in one request: split the manifest into parts of about %d documents, or use fewer steps", c.Documents, c.Rows, c.Units, l.MaxUnits, fit)}
	}
	return nil
}

// Estimate is the cost of Timeline(ctx, manifest, steps, s), read without injecting anything.
// The nesting of a manifest is measured once and kept (by the manifest's hash), so a toggle of
// a manifest already seen costs a hash and a lookup. It returns an error only for a manifest
// that cannot be cut into documents, or when ctx ends.
func (e *Engine) Estimate(ctx context.Context, manifest []byte, steps []Step, s Settings) (Cost, error) {
	sum := sha256.Sum256(manifest)
	inHash := hex.EncodeToString(sum[:])
	shape, _, err := e.shapes.get(inHash, func() (*manifestShape, error) { return e.measure(ctx, manifest) })
	if err != nil {
		return Cost{}, err
	}
	c := Cost{Documents: shape.documents, Depth: shape.depth, DeepDoc: shape.deepDoc, DeepLine: shape.deepLine}
	if !s.Install.IsDefault() {
		in, ok := e.installs.peek(s.Install.Hash())
		c.Render = !ok
		c.Worker = ok && in.custom && e.opts.Isolator != nil
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
// row, and its deepest nesting.
type manifestShape struct {
	documents                int
	units                    int64
	depth, deepDoc, deepLine int
}

func (m *manifestShape) size() int64 { return 64 }

// followDepth is the deepest text whose aliases Estimate follows (by parsing it): past it, the
// text alone is over any sensible Limits.MaxDepth.
const followDepth = 1000

// measure reads a manifest's shape: its documents as istioctl cuts them, and a bound on each
// one's nesting read from its bytes (yamldoc.DepthBound: parsing deep nesting is itself the
// cost to avoid), with aliases followed by a parse where there are some. More documents than
// the engine injects at once are refused here, as Timeline refuses them, before any is read.
func (e *Engine) measure(ctx context.Context, manifest []byte) (*manifestShape, error) {
	// A manifest that cannot be cut fails on the same error when it runs; its shape is what
	// was read.
	docs, _ := yamldoc.Split(manifest) // the documents only: Timeline cuts them again into its chunks
	if err := e.documentsAllowed(len(docs)); err != nil {
		return nil, err
	}
	m := &manifestShape{documents: len(docs)}
	for i, c := range docs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		m.units += int64(1 + len(c.Raw)/unitBytes)
		d, aliases := yamldoc.DepthBound(c.Raw)
		if aliases && d <= followDepth {
			// An alias nests the anchored node wherever it stands: parsed, which costs little
			// at this depth, and followed.
			var n yaml.Node
			_ = yaml.Unmarshal(c.Raw, &n)
			d = max(d, nodeDepth(&n, map[*yaml.Node]int{}))
		}
		if d > m.depth {
			m.depth, m.deepDoc, m.deepLine = d, i+1, c.Line
		}
	}
	return m, nil
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
func rowKeys(s Settings, inHash string, steps []Step) []string {
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
