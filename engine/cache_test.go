package engine

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

func TestLRU(t *testing.T) {
	c := newLRU[int](2)
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
	c := newLRU[int](4)
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

func TestLRUCollapsesConcurrentComputations(t *testing.T) {
	c := newLRU[int](4)
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
