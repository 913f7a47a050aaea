package secrets

import (
	"bytes"
	"os"
	"testing"
)

// BenchmarkScanSecrets is the share gate's scan of one Deployment and of 500 (a file of the
// size a person pastes, and the most a request holds), gitleaks' rules loaded before the clock
// starts (they load once per process, ~120 ms).
func BenchmarkScanSecrets(b *testing.B) {
	one, err := os.ReadFile("../testdata/corpus/deployment.yaml")
	if err != nil {
		b.Fatal(err)
	}
	many := bytes.Repeat(append([]byte("---\n"), one...), 500)
	leaks("warm up")
	for _, c := range []struct {
		name string
		in   []byte
	}{{"deployment", one}, {"500-deployments", many}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.in)))
			for b.Loop() {
				if _, n := Scan(c.in); n != 0 {
					b.Fatalf("%d findings", n)
				}
			}
		})
	}
}
