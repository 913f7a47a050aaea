package engine

import (
	"container/list"
	"fmt"
	"sync"
)

// lru is a bounded, concurrency-safe least-recently-used cache that also collapses concurrent
// computations of the same key into one (a request for a key that is being computed waits for
// that computation instead of starting its own). Errors are not cached.
type lru[V any] struct {
	mu       sync.Mutex
	max      int
	order    *list.List // of *lruEntry[V], most recent first
	entries  map[string]*list.Element
	inflight map[string]*call[V]
}

type lruEntry[V any] struct {
	key string
	val V
}

type call[V any] struct {
	done chan struct{}
	val  V
	err  error
}

func newLRU[V any](max int) *lru[V] {
	if max < 1 {
		max = 1
	}
	return &lru[V]{max: max, order: list.New(), entries: map[string]*list.Element{}, inflight: map[string]*call[V]{}}
}

// get returns the cached value for key, computing it with fn when absent. hit reports whether no
// computation was needed by this caller.
func (c *lru[V]) get(key string, fn func() (V, error)) (val V, hit bool, err error) {
	c.mu.Lock()
	if el, ok := c.entries[key]; ok {
		c.order.MoveToFront(el)
		v := el.Value.(*lruEntry[V]).val
		c.mu.Unlock()
		return v, true, nil
	}
	if cl, ok := c.inflight[key]; ok {
		c.mu.Unlock()
		<-cl.done
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
	if cl.err == nil {
		c.entries[key] = c.order.PushFront(&lruEntry[V]{key: key, val: cl.val})
		for c.order.Len() > c.max {
			last := c.order.Back()
			c.order.Remove(last)
			delete(c.entries, last.Value.(*lruEntry[V]).key)
		}
	}
	c.mu.Unlock()
	return cl.val, false, cl.err
}

// len reports how many values are cached.
func (c *lru[V]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

func (c *lru[V]) inflightLen() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.inflight)
}
