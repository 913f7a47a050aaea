package handlers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/httprate"
)

// farAway is the request timeout and queue wait of the test servers: a deadline only a hang
// reaches, so that no test's outcome depends on how fast the machine is (a busy 2-core machine
// once turned the 15 s default into 503s). A test of a deadline injects its own (withDeadline)
// and an engine that takes until it (slowEngine), rather than racing real work against a timer.
const farAway = time.Hour

// testConfig is cfg with farAway for the deadlines it leaves at zero (the defaults).
func testConfig(cfg Config) Config {
	if cfg.RequestTimeout == 0 {
		cfg.RequestTimeout = farAway
		// The work a default server admits: a far-away deadline does not lift it.
		if cfg.Work.MaxUnits == 0 {
			cfg.Work.MaxUnits = Defaults().Work.MaxUnits
		}
	}
	if cfg.QueueWait == 0 {
		cfg.QueueWait = farAway
	}
	if cfg.rateCounter == nil {
		cfg.rateCounter = func() httprate.LimitCounter { return &endlessWindow{counts: map[string]int{}} }
	}
	return cfg
}

// endlessWindow is a rate limit's counter whose window never ends: it counts each key's
// requests whatever the clock says. httprate's own counter refills at each minute's boundary
// (and weighs the minute before), so three requests that happen to straddle one could all pass
// a limit of three; the tests hold our limits' wiring, not the clock.
type endlessWindow struct {
	mu     sync.Mutex
	counts map[string]int
}

func (c *endlessWindow) Config(int, time.Duration)                 {}
func (c *endlessWindow) Increment(key string, now time.Time) error { return c.IncrementBy(key, now, 1) }
func (c *endlessWindow) IncrementBy(key string, _ time.Time, n int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts[key] += n
	return nil
}
func (c *endlessWindow) Get(key string, _, _ time.Time) (int, int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counts[key], 0, nil
}

// withDeadline is req with a deadline of its own, d from now, ahead of the server's farAway:
// what the request timeout does to a request, without a server whose every request races it.
// Only a request whose engine takes until its context ends (slowEngine, a template that loops
// for hours) should carry one, so that the deadline is not raced against real work.
func withDeadline(t *testing.T, req *http.Request, d time.Duration) *http.Request {
	t.Helper()
	ctx, cancel := context.WithTimeout(req.Context(), d)
	t.Cleanup(cancel)
	return req.WithContext(ctx)
}

// doMeasured is do, and the bytes the server allocated while it answered: how much work the
// request did, in a unit that does not depend on the machine's speed or load. The package's
// tests do not run in parallel, so the process's allocations are the request's.
func doMeasured(t *testing.T, h http.Handler, req *http.Request) (response, uint64) {
	t.Helper()
	rec := httptest.NewRecorder()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	h.ServeHTTP(rec, req)
	runtime.ReadMemStats(&after)
	return recorded(t, rec), after.TotalAlloc - before.TotalAlloc
}

// answerWithin serves req in the background and fails the test if no answer comes within limit,
// a bound far above any machine's time, so that what should be cut short (a hung store) fails
// the test instead of holding it until go test's own timeout.
func answerWithin(t *testing.T, h http.Handler, req *http.Request, limit time.Duration, what string) response {
	t.Helper()
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(rec, req)
	}()
	select {
	case <-done:
		return recorded(t, rec)
	case <-time.After(limit):
		t.Fatalf("%s: no answer after %v", what, limit)
		return response{}
	}
}
