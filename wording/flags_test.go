package wording

import (
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/diff"
)

// TestIptablesFlags: every short flag the engine names has words, and a flag outside Istio's set
// has none.
func TestIptablesFlags(t *testing.T) {
	for _, f := range []string{"-p", "-z", "-e", "-u", "-g", "-m", "-b", "-d", "-c", "-i", "-x", "-q", "-o", "-k", "-t", "-r", "-n", "--redirect-dns", "--log_output_level=x"} {
		if English.IptablesFlag(diff.IptablesFlagName(f)) == "" {
			t.Errorf("no words for %s (%s)", f, diff.IptablesFlagName(f))
		}
	}
	if got := English.IptablesFlag(diff.IptablesFlagName("-o")); got != "outbound ports not redirected to Envoy (excludeOutboundPorts)" {
		t.Errorf("-o: %q", got)
	}
	if got := English.IptablesFlag(diff.IptablesFlagName("--no-such-flag")); got != "" {
		t.Errorf("--no-such-flag: %q", got)
	}
}
