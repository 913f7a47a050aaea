package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/diff"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

// TestWriteOutputIsOutput: writeOutput writes exactly Injection.Output — documents of every kind,
// one that fails left out — and inject prints it.
func TestWriteOutputIsOutput(t *testing.T) {
	good := testkit.Deployment + "---\napiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n---\n" +
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n---\n" + hostNetworkPod
	manifest := good + "---\nkind: Pod\nmetadata: 5\n"
	e, err := engine.New(context.Background(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	r, err := e.Inject(context.Background(), []byte(manifest), nil, engine.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Errors()) != 1 || len(r.Documents) != 5 {
		t.Fatalf("want 5 documents, the last failing: %d documents, errors %v", len(r.Documents), r.Errors())
	}
	var b bytes.Buffer
	if err := writeOutput(&b, r.Documents); err != nil {
		t.Fatal(err)
	}
	if want := r.Output(); b.String() != want {
		t.Fatalf("writeOutput differs from Output:\n%s", diff.Unified(want, b.String()))
	}
	ok, err := e.Inject(context.Background(), []byte(good), nil, engine.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	out, stderr, err := runCLI(t, good, "inject", "-f", "-")
	if err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	if out != ok.Output() {
		t.Fatalf("inject printed other than Output:\n%s", diff.Unified(ok.Output(), out))
	}
}
