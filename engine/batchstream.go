package engine

import (
	"bytes"
	"context"
	"runtime"
	"slices"
	"sync"

	"github.com/sidecarlab/sidecarlab/engine/input"
)

// BatchItem is one document of a streamed batch: its row, and its error (with the document's
// index and line, as Injection.Errors gives it) when Istio or YAML parsing rejected it.
type BatchItem struct {
	Row   BatchRow
	Error *input.Error
}

// BatchStream is a batch of any size injected on every core: each document's row and findings
// are computed as soon as it is injected and its output is dropped, and rows come out in input
// order. Memory is bounded by the window of rows waiting for an earlier one and by one
// document per worker, not by the batch's size. The rows and findings are those Engine.Inject
// and Batch give for the same manifest.
//
// Istio's injector is used concurrently with one shared installation, as Istio's own webhook
// uses it (its handler reads the templates, values and mesh config under a read lock and never
// writes them; IntoObject deep-copies the object and clones the mesh config before applying a
// pod's proxy.istio.io/config).
type BatchStream struct {
	e   *Engine
	p   *prepared
	ann []annotationChange
	// workers inject in parallel (default GOMAXPROCS); window bounds the documents handed out
	// ahead of the next row to emit (default 4 per worker).
	workers, window int
	// started, when set, is called as a worker starts a document (tests watch the window).
	started func(index int)
	// waypoint are the waypoint checks' findings, by document: they read several documents, so
	// they are found before the stream starts (see waypointFindings).
	waypoint map[int][]Finding
	// nsLabels are the labels of the batch's Namespace documents, by name.
	nsLabels map[string]map[string]string
}

// NamespaceLabels are the labels the batch's Namespace documents give their namespaces, by name
// (see Namespace.LabelsOf), read before the stream starts.
func (b *BatchStream) NamespaceLabels() map[string]map[string]string { return b.nsLabels }

// NewBatchStream validates the request as Inject does (settings, steps, the number of
// documents) and returns the batch ready to run.
func (e *Engine) NewBatchStream(ctx context.Context, manifest []byte, steps []input.Step, s Settings) (*BatchStream, error) {
	p, err := e.prepare(ctx, manifest, steps, s)
	if err != nil {
		return nil, err
	}
	b := &BatchStream{e: e, p: p, ann: annotationsAt(steps, len(steps))}
	var nsDocs []Document
	for i, c := range p.chunks {
		if bytes.Contains(c.raw, []byte("Namespace")) {
			d, _ := prepareChunk(c, i+1, nil)
			nsDocs = append(nsDocs, d)
		}
	}
	b.nsLabels = NamespaceLabels(nsDocs)
	if b.waypoint, err = b.waypointFindings(ctx); err != nil {
		return nil, err
	}
	return b, nil
}

// waypointFindings runs the waypoint checks on the batch's documents as read, with the steps
// applied, before any is injected: a policy's finding names the workloads it selects, wherever
// they are in the batch. A batch with no document that may be a policy is not read for them.
func (b *BatchStream) waypointFindings(ctx context.Context) (map[int][]Finding, error) {
	if !slices.ContainsFunc(b.p.chunks, func(c chunk) bool { return mayHavePolicy(c.raw) }) {
		return nil, nil
	}
	docs, err := b.written(ctx)
	if err != nil {
		return nil, err
	}
	found, _, err := b.e.waypointChecks(ctx, b.p, docs)
	if err != nil || len(found) == 0 {
		return nil, err
	}
	out := map[int][]Finding{}
	for _, f := range found {
		out[f.Doc] = append(out[f.Doc], f)
	}
	return out, nil
}

// written are the batch's documents as read, with the steps applied, none injected: what the
// passes that need every document before the stream starts read (the waypoint checks, Pods).
// Each document's own object stands for its output too, which to them only says that it has a
// pod template.
func (b *BatchStream) written(ctx context.Context) ([]Document, error) {
	docs := make([]Document, len(b.p.chunks))
	for i, c := range b.p.chunks {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		d, obj := prepareChunk(c, i+1, b.ann)
		d.in, d.out = obj, obj
		docs[i] = d
	}
	return docs, nil
}

// Len is the number of documents, and so of rows.
func (b *BatchStream) Len() int { return len(b.p.chunks) }

// Run injects every document and calls emit with each one's row, in input order, from the
// calling goroutine. It stops at the first error emit returns, or when ctx is done, and returns
// that error; its goroutines have ended when it returns.
func (b *BatchStream) Run(ctx context.Context, emit func(BatchItem) error) error {
	e, p := b.e, b.p
	if p.install.custom && e.opts.Isolator != nil {
		// The isolated worker takes all the documents in one job; the rows come from its answer.
		docs, err := e.injectAll(ctx, p, b.ann, e.opts.Workers)
		if err != nil {
			return err
		}
		found, _, err := e.check(ctx, p, docs)
		if err != nil {
			return err
		}
		wf, _, err := e.waypointChecks(ctx, p, docs)
		if err != nil {
			return err
		}
		for _, r := range Batch(docs, append(found, wf...)) {
			if err := emit(BatchItem{Row: r, Error: docs[r.Doc-1].Error}); err != nil {
				return err
			}
		}
		return nil
	}
	e.injections.Add(int64(len(p.chunks)))
	workers := b.workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	window := b.window
	if window <= 0 {
		window = 4 * workers
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type slot struct {
		item BatchItem
		done chan struct{}
	}
	type job struct {
		index int
		c     chunk
		s     *slot
	}
	// order holds the slots in input order: its capacity is the window. jobs hands the same
	// slots to the workers, which fill and close them in any order.
	order := make(chan *slot, window)
	jobs := make(chan job)
	var wg sync.WaitGroup
	wg.Add(1 + workers)
	go func() {
		defer wg.Done()
		defer close(order)
		defer close(jobs)
		for i, c := range p.chunks {
			s := &slot{done: make(chan struct{})}
			select {
			case order <- s:
			case <-ctx.Done():
				return
			}
			select {
			case jobs <- job{i + 1, c, s}:
			case <-ctx.Done():
				return
			}
		}
	}()
	for range workers {
		go func() {
			defer wg.Done()
			for j := range jobs {
				if ctx.Err() != nil {
					return
				}
				if b.started != nil {
					b.started(j.index)
				}
				j.s.item = b.one(ctx, j.index, j.c)
				close(j.s.done)
			}
		}()
	}

	var err error
	for s := range order {
		select {
		case <-s.done:
		case <-ctx.Done():
		}
		if err = ctx.Err(); err != nil {
			break
		}
		if err = emit(s.item); err != nil {
			break
		}
	}
	cancel()
	wg.Wait()
	return err
}

// one injects one document and keeps only its row and error: the output is dropped here.
func (b *BatchStream) one(ctx context.Context, index int, c chunk) BatchItem {
	docs := []Document{injectChunk(ctx, b.p.install, b.p.injector, c, index, b.ann)}
	found, _, _ := b.e.check(context.Background(), b.p, docs) // one document: nothing to stop between
	found = append(found, b.waypoint[index]...)
	return BatchItem{Row: Batch(docs, found)[0], Error: docs[0].Error}
}
