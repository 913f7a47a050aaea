package yamldoc

import (
	"bufio"
	"bytes"
	"io"
	"strings"
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

// checkSplit holds Split to YAMLReader: same documents, same error or none.
func checkSplit(t *testing.T, in []byte) {
	t.Helper()
	want, wantErr := yamlReaderChunks(in)
	got, gotErr := Split(in)
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("YAMLReader error %v, ours %v", wantErr, gotErr)
	}
	if len(got) != len(want) {
		t.Fatalf("YAMLReader gives %d documents, ours %d", len(want), len(got))
	}
	lines := bytes.Split(in, []byte("\n"))
	for i := range want {
		if !bytes.Equal(got[i].Raw, want[i]) {
			t.Fatalf("document %d: YAMLReader %q, ours %q", i+1, want[i], got[i].Raw)
		}
		// The line we report is where the document's first line is.
		first, _, _ := bytes.Cut(got[i].Raw, []byte("\n"))
		if l := got[i].Line; l < 1 || l > len(lines) || !(bytes.Equal(lines[l-1], first) || bytes.Equal(bytes.TrimSuffix(lines[l-1], []byte("\r")), first)) {
			t.Fatalf("document %d: line %d does not start with %q", i+1, l, first)
		}
	}
}

func TestSplit(t *testing.T) {
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
		// A last line with no "\n" that fills bufio's 4,096-byte buffer exactly comes with io.EOF:
		// YAMLReader still checks it as a separator, and drops it otherwise (found by FuzzSplit).
		"a bad separator filling the buffer":  "---" + strings.Repeat("x", 4093),
		"a bad separator after a document":    "a: 1\n---" + strings.Repeat("x", 4093),
		"a good separator filling the buffer": "a: 1\n---" + strings.Repeat(" ", 4093),
		"a last line filling the buffer":      "a: 1\n" + strings.Repeat("y", 4096),
		"a last line longer than the buffer":  "a: 1\n" + strings.Repeat("y", 5000),
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) { checkSplit(t, []byte(in)) })
	}
	got, _ := Split([]byte("# c\n---\n\n\na: 1\n"))
	if got[1].Line != 3 {
		t.Fatalf("second document starts on line %d, want 3", got[1].Line)
	}
}

// TestSeparatorErrorDoc: a bad separator names the document it would have opened — the one
// after the open document, when one is — and its own line.
func TestSeparatorErrorDoc(t *testing.T) {
	cases := []struct {
		name, in  string
		doc, line int
	}{
		{"first line", "--- x\na: 1\n", 1, 1},
		{"after a document", "a: 1\n--- x\nb: 2\n", 2, 2},
		{"after a document and its separator", "a: 1\n---\n--- x\n", 2, 3},
		{"after two documents", "a: 1\n---\nb: 2\n--- x\n", 3, 4},
		{"after a separator alone, which is a document", "---\n--- x\n", 2, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkSplit(t, []byte(c.in)) // the same documents and error as YAMLReader
			docs, err := Split([]byte(c.in))
			se, ok := err.(*SeparatorError)
			if !ok {
				t.Fatalf("error %v, want a *SeparatorError", err)
			}
			if se.Doc != c.doc || se.Line != c.line || se.Text != "x" {
				t.Errorf("document %d, line %d, text %q; want document %d, line %d, text \"x\"", se.Doc, se.Line, se.Text, c.doc, c.line)
			}
			if se.Doc <= len(docs) {
				t.Errorf("document %d is among the %d documents before the error", se.Doc, len(docs))
			}
		})
	}
}

func FuzzSplit(f *testing.F) {
	f.Add([]byte("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n---\napiVersion: v1\nkind: Service\n"))
	f.Add([]byte("# comment\n---\n---\na: |\n  ---x\n--- # next\nb: 2"))
	f.Add([]byte("a\r\n---\r\n--- #x\n----\n"))
	f.Fuzz(func(t *testing.T, in []byte) { checkSplit(t, in) })
}
