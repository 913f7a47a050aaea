package main

import "time"

// farAway is the request timeout the tests' servers run with: a deadline only a hang reaches, so
// that no answer depends on the machine's speed. (Waits are testkit.WaitFor, bounded by
// testkit.Patience.)
const farAway = time.Hour
