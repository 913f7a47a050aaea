package main

import (
	"testing"
	"time"
)

// patience bounds every wait of these tests: far above what any machine, however busy, takes
// for what is waited for, so that it only turns a hang into a failure. No test here waits a
// fixed time for something to happen; it waits for the thing (waitFor).
const patience = 2 * time.Minute

// farAway is the request timeout the tests' servers run with: a deadline only a hang reaches, so
// that no answer depends on the machine's speed.
const farAway = time.Hour

// waitFor polls cond until it holds; if it does not within patience, the test fails saying what
// it waited for.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(patience); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %v", what, patience)
		}
	}
}
