package secrets

import (
	"bytes"
	"fmt"
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
	// A ConfigMap holding a 2,000-line properties file without a secret: every line is read
	// by textSecrets (issue 40), half of them past its trigger words.
	var file bytes.Buffer
	file.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  application.properties: |\n")
	for i := range 1000 {
		fmt.Fprintf(&file, "    app.feature%d.enabled=true\n    app.auth%d.token-ttl=3600\n", i, i)
	}
	leaks("warm up")
	for _, c := range []struct {
		name string
		in   []byte
	}{{"deployment", one}, {"500-deployments", many}, {"properties-file", file.Bytes()}} {
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
