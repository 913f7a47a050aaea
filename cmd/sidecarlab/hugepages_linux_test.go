package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// heavyInits are the import paths whose package initialisation fills the heap that
// internal/hugepages prepares; it must run before each of them.
var heavyInits = []string{"google.golang.org/protobuf/", "k8s.io/", "sigs.k8s.io/", "istio.io/", "helm.sh/", "github.com/envoyproxy/"}

// TestHugePagesInitFirst: internal/hugepages helps only if Go's initialisation order runs it
// before the libraries whose initialisation fills the heap (an import of one of theirs, or of
// a package that waits on them, would put it after). The order is the binary's own, read from
// the runtime's init trace of this test binary, which imports what main imports.
func TestHugePagesInitFirst(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if msg := initOrder(string(out), "github.com/sidecarlab/sidecarlab/internal/hugepages", heavyInits); msg != "" {
		t.Fatal(msg)
	}
}

// initOrder says what is wrong with the order of an init trace: first missing, or a package
// with one of the prefixes initialised before it; "" when first comes before them all.
func initOrder(trace, first string, prefixes []string) string {
	var before []string
	for line := range strings.SplitSeq(trace, "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 || fields[0] != "init" {
			continue
		}
		if fields[1] == first {
			if len(before) > 0 {
				return first + " initialises after " + strings.Join(before, ", ")
			}
			return ""
		}
		for _, p := range prefixes {
			if strings.HasPrefix(fields[1], p) {
				before = append(before, fields[1])
				break
			}
		}
	}
	return first + " is not in the init trace (not imported, or without an init)"
}

func TestInitOrder(t *testing.T) {
	const trace = "init internal/bytealg @0 ms, 0 ms clock, 0 bytes, 0 allocs\n" +
		"init github.com/x/first @1 ms, 0.01 ms clock, 0 bytes, 0 allocs\n" +
		"init k8s.io/heavy @2 ms, 3 ms clock, 1000 bytes, 10 allocs\n"
	const late = "init k8s.io/heavy @1 ms, 3 ms clock, 1000 bytes, 10 allocs\n" +
		"init github.com/x/first @2 ms, 0.01 ms clock, 0 bytes, 0 allocs\n"
	for _, tc := range []struct{ trace, want string }{
		{trace, ""},
		{late, "github.com/x/first initialises after k8s.io/heavy"},
		{"init k8s.io/heavy @1 ms\n", "github.com/x/first is not in the init trace (not imported, or without an init)"},
	} {
		if got := initOrder(tc.trace, "github.com/x/first", []string{"k8s.io/"}); got != tc.want {
			t.Errorf("initOrder(%q) = %q, want %q", tc.trace, got, tc.want)
		}
	}
}
