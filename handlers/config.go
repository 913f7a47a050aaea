package handlers

import (
	"net/netip"
	"runtime"
	"time"

	"github.com/go-chi/httprate"

	"github.com/sidecarlab/sidecarlab/engine"
)

// Config holds the knobs of the HTTP surface.
type Config struct {
	// MaxBodyBytes bounds a POSTed form or API request (default 1 MiB).
	MaxBodyBytes int64
	// MaxConcurrent bounds injections running at once (default 2 × GOMAXPROCS); a request waits
	// up to QueueWait for a slot (default 5 s), then gets 503 with Retry-After.
	MaxConcurrent int
	QueueWait     time.Duration
	// Work bounds one request's work, estimated before it starts (engine.Estimate): deeper,
	// costlier or more expanded input is refused with a 422 that says which limit and how to
	// split it. Defaults: 100 levels; as many units as finish within RequestTimeout (unitTime:
	// 1,500 in the default 15 s, about 1,500 small documents, or 15 through 100 steps); the
	// aliases may expand the manifest to MaxBodyBytes, what a POST may carry, but may not make
	// objects (List items) of their own: a server always refuses those (WrittenOut).
	Work engine.Limits
	// HeavyUnits is the estimate above which a request is heavy (default 200 units, about half
	// a second of work); so is one whose install options must be rendered first, and one whose
	// own templates run in a worker (their cost is not known before they run). Heavy requests
	// run HeavySlots at a time (default 1), apart from the MaxConcurrent slots of the others, so
	// light requests never wait behind heavy ones. Sharing by cost rather than by address keeps
	// a workshop behind one NAT as fast as one person.
	HeavyUnits int64
	HeavySlots int
	// RequestTimeout bounds one request's work (default 15 s).
	RequestTimeout time.Duration
	// RatePerMinute limits requests per client address (default 6000, a workshop behind one
	// NAT), WriteRatePerMinute the shares among them (link-store writes, default 60); a negative
	// value turns a limit off. The probes and /metrics are never limited.
	RatePerMinute      int
	WriteRatePerMinute int
	// rateCounter, when set, makes each limit's counter (tests: one that counts without the
	// clock, so that a minute's boundary between two requests does not refill it).
	rateCounter func() httprate.LimitCounter
	// TrustedProxies are the proxies (an ingress, a load balancer) whose X-Forwarded-For or
	// Forwarded header names the client; from any other peer those headers are ignored.
	TrustedProxies []netip.Prefix
	// Links stores shared links; nil turns sharing off.
	Links LinkStore
	// Cluster is the cluster whose mesh and namespaces the page offers (serve --cluster-read);
	// nil offers none.
	Cluster Cluster
	// StoreTimeout bounds one call to the link store (default 3 s), so that a hung database
	// answers "sharing is unavailable" instead of holding the request.
	StoreTimeout time.Duration
	// PublicURL is the server's public address (https://sidecarlab.example.com), which the share
	// API puts before /s/<id>; empty, it answers the path alone. Never taken from a request's
	// Host header, which the client chooses.
	PublicURL string
}

// Defaults are the limits a server has when its Config leaves them zero: the one table of them,
// which New fills a Config from and serve's flags show as their defaults.
func Defaults() Config {
	return Config{
		MaxBodyBytes:       1 << 20,
		MaxConcurrent:      2 * runtime.GOMAXPROCS(0),
		QueueWait:          5 * time.Second,
		Work:               engine.Limits{MaxDepth: 100, MaxUnits: unitsWithin(15 * time.Second), MaxBytes: 1 << 20},
		HeavyUnits:         200,
		HeavySlots:         1,
		RequestTimeout:     15 * time.Second, // Work.MaxUnits follows it
		RatePerMinute:      6000,
		WriteRatePerMinute: 60,
		StoreTimeout:       3 * time.Second,
	}
}

// withDefaults is c with each limit it leaves zero taken from Defaults.
func (c Config) withDefaults() Config {
	d := Defaults()
	orDefault(&c.MaxBodyBytes, d.MaxBodyBytes)
	orDefault(&c.MaxConcurrent, d.MaxConcurrent)
	orDefault(&c.QueueWait, d.QueueWait)
	orDefault(&c.Work.MaxDepth, d.Work.MaxDepth)
	orDefault(&c.HeavyUnits, d.HeavyUnits)
	orDefault(&c.HeavySlots, d.HeavySlots)
	orDefault(&c.RequestTimeout, d.RequestTimeout)
	// What finishes within this server's timeout, and what a POST to it may carry.
	orDefault(&c.Work.MaxUnits, unitsWithin(c.RequestTimeout))
	orDefault(&c.Work.MaxBytes, c.MaxBodyBytes)
	c.Work.WrittenOut = true // a server shows what is written out (engine.Limits.WrittenOut)
	orDefault(&c.RatePerMinute, d.RatePerMinute)
	orDefault(&c.WriteRatePerMinute, d.WriteRatePerMinute)
	orDefault(&c.StoreTimeout, d.StoreTimeout)
	return c
}

// unitTime is what one unit of estimated work (engine.Cost) takes through a whole request on
// the route that does the most per unit, with a margin: BenchmarkUnitTime measured 4–7 ms for
// small documents and up to 11 ms for a List's items on this project's 2-core machine, beside
// other work (BENCHMARKS.md, "The unit limit"). A request is admitted only if its units finish
// within its timeout at this pace, so what is admitted finishes on a quiet machine and what
// cannot is refused up front with a 422 that says how to split it, not cut at the deadline.
const unitTime = 10 * time.Millisecond

// unitsWithin is how many units of work finish within d (unitTime).
func unitsWithin(d time.Duration) int64 { return max(1, int64(d/unitTime)) }

// orDefault sets *v to d when it is zero.
func orDefault[T comparable](v *T, d T) {
	var zero T
	if *v == zero {
		*v = d
	}
}
