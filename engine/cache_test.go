package engine

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/input"
)

func TestLRU(t *testing.T) {
	c := newLRU[int](2, 0, nil)
	calls := 0
	get := func(k string) (int, bool) {
		v, hit, err := c.get(k, func() (int, error) { calls++; return len(k), nil })
		if err != nil {
			t.Fatal(err)
		}
		return v, hit
	}
	if v, hit := get("a"); v != 1 || hit {
		t.Fatalf("first get: %d, hit %v", v, hit)
	}
	if _, hit := get("a"); !hit {
		t.Fatal("second get missed")
	}
	get("bb")
	get("a")   // a is now most recent
	get("ccc") // evicts bb
	if c.len() != 2 {
		t.Fatalf("len %d, want 2", c.len())
	}
	if _, hit := get("bb"); hit {
		t.Fatal("bb should have been evicted")
	}
	if _, hit := get("ccc"); !hit {
		t.Fatal("ccc should still be cached")
	}
	if calls != 4 {
		t.Fatalf("%d computations, want 4", calls)
	}
}

func TestLRUErrorsAndPanicsAreNotCached(t *testing.T) {
	c := newLRU[int](4, 0, nil)
	boom := errors.New("boom")
	if _, _, err := c.get("k", func() (int, error) { return 0, boom }); err != boom {
		t.Fatalf("got %v", err)
	}
	if _, _, err := c.get("k", func() (int, error) { panic("bad") }); err == nil {
		t.Fatal("a panic must become an error")
	}
	v, hit, err := c.get("k", func() (int, error) { return 7, nil })
	if v != 7 || hit || err != nil {
		t.Fatalf("got %d %v %v", v, hit, err)
	}
}

// TestLRUKeepsLastingErrors: a lasting error is kept like a value (asked again, the work does not
// run again, and the key counts as kept); an input.Error that is not lasting is not kept.
func TestLRUKeepsLastingErrors(t *testing.T) {
	c := newLRU[*int](4, 1<<10, func(*int) int64 { return 8 })
	calls := 0
	lasting := &input.Error{ID: "template-output-too-large", Msg: "too much", Lasting: true}
	for i := range 3 {
		v, hit, err := c.get("k", func() (*int, error) { calls++; return nil, fmt.Errorf("rendering: %w", lasting) })
		if !errors.Is(err, lasting) || v != nil || hit != (i > 0) {
			t.Fatalf("ask %d: %v %v %v; want the lasting error, a hit after the first", i+1, v, hit, err)
		}
	}
	if calls != 1 {
		t.Errorf("the failing work ran %d times, want once", calls)
	}
	if v, ok := c.peek("k"); !ok || v != nil || !c.has("k") {
		t.Errorf("peek: %v %v; a kept error is kept, with no value", v, ok)
	}
	if c.held() == 0 {
		t.Error("a kept error holds no bytes")
	}
	c.remeasure("k") // no value to measure: nothing happens
	plain := &input.Error{ID: "manifest-empty", Msg: "empty"}
	calls = 0
	for range 2 {
		if _, hit, err := c.get("p", func() (*int, error) { calls++; return nil, plain }); err != plain || hit {
			t.Fatalf("got %v %v", hit, err)
		}
	}
	if calls != 2 || c.has("p") {
		t.Errorf("an error that is not lasting ran %d times (want 2) and is kept: %v", calls, c.has("p"))
	}
}

func TestLRUCollapsesConcurrentComputations(t *testing.T) {
	c := newLRU[int](4, 0, nil)
	var calls atomic.Int32
	release := make(chan struct{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, _, _ := c.get("k", func() (int, error) { calls.Add(1); <-release; return 42, nil })
			if v != 42 {
				t.Errorf("got %d", v)
			}
		}()
	}
	for c.inflightLen() == 0 {
		runtime.Gosched()
	}
	close(release)
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Fatalf("%d computations, want 1", n)
	}
}

// TestLRUBytes: the cache is bounded by the bytes its values hold, not only by their number.
func TestLRUBytes(t *testing.T) {
	c := newLRU(100, 10, func(v string) int64 { return int64(len(v)) })
	put := func(k, v string) {
		if _, _, err := c.get(k, func() (string, error) { return v, nil }); err != nil {
			t.Fatal(err)
		}
	}
	put("a", "xxxx")
	put("b", "xxxx")
	if c.len() != 2 || c.held() != 8 {
		t.Fatalf("len %d, held %d; want 2, 8", c.len(), c.held())
	}
	put("c", "xxxx") // 12 bytes: evicts a
	if c.len() != 2 || c.held() != 8 {
		t.Fatalf("len %d, held %d; want 2, 8", c.len(), c.held())
	}
	if _, hit, _ := c.get("a", func() (string, error) { return "", nil }); hit {
		t.Fatal("a should have been evicted for bytes")
	}
	// A value larger than the whole bound is answered but not kept, and evicts nothing.
	before := c.len()
	if v, _, _ := c.get("huge", func() (string, error) { return "xxxxxxxxxxxxxxxx", nil }); v != "xxxxxxxxxxxxxxxx" {
		t.Fatal("the huge value was not returned")
	}
	if c.len() != before || c.held() > 10 {
		t.Fatalf("after a huge value: len %d (was %d), held %d", c.len(), before, c.held())
	}
}

// TestLRURemeasure: a kept value that grows is counted again; the least recently used go when the
// bound is passed, and a value that alone outgrows the bound goes itself.
func TestLRURemeasure(t *testing.T) {
	type grows struct{ n int64 }
	c := newLRU(100, 10, func(v *grows) int64 { return v.n })
	vals := map[string]*grows{}
	put := func(k string, n int64) {
		vals[k] = &grows{n}
		if _, _, err := c.get(k, func() (*grows, error) { return vals[k], nil }); err != nil {
			t.Fatal(err)
		}
	}
	kept := func(k string) bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		_, ok := c.entries[k]
		return ok
	}
	put("a", 3)
	put("b", 3)
	vals["b"].n = 5
	c.remeasure("b")
	if c.held() != 8 || !kept("a") || !kept("b") {
		t.Fatalf("after b grew within the bound: held %d, a %v, b %v", c.held(), kept("a"), kept("b"))
	}
	vals["b"].n = 8
	c.remeasure("b") // 11 bytes: a, the least recently used, goes
	if c.held() != 8 || kept("a") || !kept("b") {
		t.Fatalf("after b grew past the bound: held %d, a %v, b %v", c.held(), kept("a"), kept("b"))
	}
	vals["b"].n = 12
	c.remeasure("b") // larger than the whole bound: b goes too
	if c.held() != 0 || kept("b") {
		t.Fatalf("after b outgrew the bound: held %d, b %v", c.held(), kept("b"))
	}
	c.remeasure("gone") // a key not kept: nothing happens
	if c.held() != 0 || c.len() != 0 {
		t.Fatalf("remeasure of a missing key: held %d, len %d", c.held(), c.len())
	}
}

// TestLRUWaiterDoesNotInheritCancellation: when the caller computing a value gives up (its
// context ends), a caller waiting for the same key computes it under its own context instead of
// failing with the first caller's cancellation.
func TestLRUWaiterDoesNotInheritCancellation(t *testing.T) {
	c := newLRU[int](4, 0, nil)
	started, release := make(chan struct{}), make(chan struct{})
	firstErr := make(chan error, 1)
	go func() {
		_, _, err := c.get("k", func() (int, error) {
			close(started)
			<-release
			return 0, fmt.Errorf("injecting: %w", context.Canceled)
		})
		firstErr <- err
	}()
	<-started
	waiter := make(chan error, 1)
	var got int
	go func() {
		v, _, err := c.get("k", func() (int, error) { return 42, nil })
		got = v
		waiter <- err
	}()
	for c.waiting("k") == 0 {
		runtime.Gosched()
	}
	close(release)
	if err := <-firstErr; !errors.Is(err, context.Canceled) {
		t.Fatalf("first caller: %v", err)
	}
	if err := <-waiter; err != nil || got != 42 {
		t.Fatalf("waiter: %d, %v; want 42 and no error", got, err)
	}
}
