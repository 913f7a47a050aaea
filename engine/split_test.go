package engine

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
)

// yamlReaderChunks is what istioctl's reader makes of the input.
func yamlReaderChunks(in []byte) ([][]byte, error) {
	r := k8syaml.NewYAMLReader(bufio.NewReaderSize(bytes.NewReader(in), 4096))
	var out [][]byte
	for {
		raw, err := r.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, bytes.Clone(raw))
	}
}

// checkSplit holds splitDocuments to YAMLReader: same documents, same error or none.
func checkSplit(t *testing.T, in []byte) {
	t.Helper()
	want, wantErr := yamlReaderChunks(in)
	got, gotErr := splitDocuments(in)
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("YAMLReader error %v, ours %v", wantErr, gotErr)
	}
	if len(got) != len(want) {
		t.Fatalf("YAMLReader gives %d documents, ours %d", len(want), len(got))
	}
	lines := bytes.Split(in, []byte("\n"))
	for i := range want {
		if !bytes.Equal(got[i].raw, want[i]) {
			t.Fatalf("document %d: YAMLReader %q, ours %q", i+1, want[i], got[i].raw)
		}
		// The line we report is where the document's first line is.
		first, _, _ := bytes.Cut(got[i].raw, []byte("\n"))
		if l := got[i].line; l < 1 || l > len(lines) || !(bytes.Equal(lines[l-1], first) || bytes.Equal(bytes.TrimSuffix(lines[l-1], []byte("\r")), first)) {
			t.Fatalf("document %d: line %d does not start with %q", i+1, l, first)
		}
	}
}

func TestSplitDocuments(t *testing.T) {
	cases := map[string]string{
		"one":                    "a: 1\n",
		"no final newline":       "a: 1",
		"two":                    "a: 1\n---\nb: 2\n",
		"leading separator":      "---\na: 1\n",
		"separator with comment": "a: 1\n--- # next\nb: 2\n",
		"empty documents":        "---\n---\na: 1\n---\n---\n",
		"crlf":                   "a: 1\r\n---\r\nb: 2\r\n",
		"bad separator":          "a: 1\n--- b\nc: 3\n",
		"dashes inside":          "a: |\n  ---x\n---\nb: 2\n",
		"long line":              "a: " + string(bytes.Repeat([]byte("x"), 10000)) + "\n---\nb: 1\n",
		"blank document":         "---\n\n---\n",
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) { checkSplit(t, []byte(in)) })
	}
	got, _ := splitDocuments([]byte("# c\n---\n\n\na: 1\n"))
	if got[1].line != 3 {
		t.Fatalf("second document starts on line %d, want 3", got[1].line)
	}
}

func FuzzSplitDocuments(f *testing.F) {
	paths, _ := filepath.Glob("testdata/corpus/*.yaml")
	for _, p := range paths {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Add([]byte("a\r\n---\r\n--- #x\n----\n"))
	f.Fuzz(func(t *testing.T, in []byte) { checkSplit(t, in) })
}

// FuzzInject feeds arbitrary manifests and annotation values to the engine: it must answer with
// documents or an *InputError, never a panic or another error.
func FuzzInject(f *testing.F) {
	paths, _ := filepath.Glob("testdata/corpus/*.yaml")
	for _, p := range paths {
		b, _ := os.ReadFile(p)
		f.Add(b, "sidecar.istio.io/proxyCPU", "100m")
	}
	f.Add([]byte("apiVersion: v1\nkind: List\nitems:\n- 1\n"), "proxy.istio.io/config", "concurrency: 1")
	f.Add([]byte("apiVersion: batch/v1\nkind: CronJob\nspec: {}\n"), "sidecar.istio.io/inject", "true")
	e := testEngine(f)
	f.Fuzz(func(t *testing.T, manifest []byte, key, value string) {
		var steps []Step
		if key != "" {
			steps = []Step{{Key: key, Value: value}}
		}
		r, err := e.Inject(t.Context(), manifest, steps, Settings{})
		if err != nil {
			asInputError(t, err)
			return
		}
		for _, d := range r.Documents {
			if d.Error != nil && d.Error.Msg == "" {
				t.Fatalf("document %d: error without a message", d.Index)
			}
		}
	})
}
