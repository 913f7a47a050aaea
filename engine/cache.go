package engine

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/sidecarlab/sidecarlab/engine/input"
)

// lru is a bounded, concurrency-safe least-recently-used cache that also collapses concurrent
// computations of the same key into one (a request for a key that is being computed waits for
// that computation instead of starting its own). It is bounded twice: by entries and by the
// bytes its values hold (as size estimates them), so a few huge values cannot fill memory. Errors
// are not cached, except lasting ones (isLasting): those are kept like values, so that asking
// again costs a lookup, not the work that failed.
type lru[V any] struct {
	mu       sync.Mutex
	max      int
	maxBytes int64
	size     func(V) int64
	bytes    int64
	order    *list.List // of *lruEntry[V], most recent first
	entries  map[string]*list.Element
	inflight map[string]*call[V]
}

type lruEntry[V any] struct {
	key  string
	val  V
	err  error // a lasting error, kept instead of a value
	size int64
}

type call[V any] struct {
	done chan struct{}
	val  V
	err  error
	// waiters counts the callers waiting for it (under the cache's lock).
	waiters int
}

// newLRU makes a cache of at most max entries holding at most maxBytes (as size counts them; a
// value larger than that alone is returned but not kept).
func newLRU[V any](max int, maxBytes int64, size func(V) int64) *lru[V] {
	if max < 1 {
		max = 1
	}
	return &lru[V]{max: max, maxBytes: maxBytes, size: size, order: list.New(), entries: map[string]*list.Element{}, inflight: map[string]*call[V]{}}
}

// get returns the cached value for key, computing it with fn when absent. hit reports whether no
// computation was needed by this caller.
//
// A caller that waits on another's computation does not inherit that caller's cancellation: fn
// runs under its caller's context, so when it ends with a context error (that caller went away
// or ran out of time), each waiter computes the value itself, under its own context.
func (c *lru[V]) get(key string, fn func() (V, error)) (val V, hit bool, err error) {
	for {
		c.mu.Lock()
		if el, ok := c.entries[key]; ok {
			c.order.MoveToFront(el)
			e := el.Value.(*lruEntry[V])
			c.mu.Unlock()
			return e.val, true, e.err
		}
		cl, ok := c.inflight[key]
		if !ok {
			break // with c.mu held
		}
		cl.waiters++
		c.mu.Unlock()
		<-cl.done
		if isContextError(cl.err) {
			continue
		}
		return cl.val, true, cl.err
	}
	cl := &call[V]{done: make(chan struct{})}
	c.inflight[key] = cl
	c.mu.Unlock()

	func() {
		// A panic in fn becomes an error for this caller and every waiter; it is not cached.
		defer func() {
			if r := recover(); r != nil {
				cl.err = fmt.Errorf("panic: %v", r)
			}
			close(cl.done)
		}()
		cl.val, cl.err = fn()
	}()

	c.mu.Lock()
	delete(c.inflight, key)
	switch {
	case cl.err == nil:
		c.add(key, cl.val)
	case input.IsLasting(cl.err):
		c.addErr(key, cl.err)
	}
	c.mu.Unlock()
	return cl.val, false, cl.err
}

// add keeps a value and evicts the least recently used ones beyond the bounds. c.mu is held.
func (c *lru[V]) add(key string, v V) {
	var n int64
	if c.size != nil {
		n = c.size(v)
	}
	if c.maxBytes > 0 && n > c.maxBytes {
		return // would evict everything else and still not fit
	}
	c.entries[key] = c.order.PushFront(&lruEntry[V]{key: key, val: v, size: n})
	c.bytes += n
	c.trim()
}

// addErr keeps a lasting error for key, counted by its message's length. c.mu is held.
func (c *lru[V]) addErr(key string, err error) {
	n := int64(len(err.Error())) + 64
	c.entries[key] = c.order.PushFront(&lruEntry[V]{key: key, err: err, size: n})
	c.bytes += n
	c.trim()
}

// remeasure counts the value kept for key again (it has grown: something it holds was computed
// after it was kept) and evicts the least recently used ones beyond the bounds, the value itself
// when it alone no longer fits.
func (c *lru[V]) remeasure(key string) {
	if c.size == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return
	}
	e := el.Value.(*lruEntry[V])
	if e.err != nil {
		return
	}
	n := c.size(e.val)
	c.bytes += n - e.size
	e.size = n
	if c.maxBytes > 0 && n > c.maxBytes {
		c.evict(el)
	}
	c.trim()
}

// trim evicts the least recently used values beyond the bounds. c.mu is held.
func (c *lru[V]) trim() {
	for c.order.Len() > c.max || (c.maxBytes > 0 && c.bytes > c.maxBytes) {
		c.evict(c.order.Back())
	}
}

// evict drops one value. c.mu is held.
func (c *lru[V]) evict(el *list.Element) {
	e := el.Value.(*lruEntry[V])
	c.order.Remove(el)
	delete(c.entries, e.key)
	c.bytes -= e.size
}

func isContextError(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// len reports how many values are cached.
// has says whether key is kept, without making it more recent.
func (c *lru[V]) has(key string) bool {
	_, ok := c.peek(key)
	return ok
}

// peek is the value kept for key, if it is, without making it more recent: the zero value when
// what is kept is a lasting error.
func (c *lru[V]) peek(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		var zero V
		return zero, false
	}
	return el.Value.(*lruEntry[V]).val, true
}

func (c *lru[V]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

// held reports the bytes the cached values hold, as size counts them.
func (c *lru[V]) held() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}

// waiting reports how many callers wait for the computation of key.
func (c *lru[V]) waiting(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cl, ok := c.inflight[key]; ok {
		return cl.waiters
	}
	return 0
}

func (c *lru[V]) inflightLen() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.inflight)
}
