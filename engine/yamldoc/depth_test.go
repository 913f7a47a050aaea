package yamldoc

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"

	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

// nodeDepth is how many collections nest in n as go.yaml.in/yaml/v3 parses it (aliases not
// followed: DepthBound is a bound of the text).
func nodeDepth(n *yaml.Node) int {
	d := 0
	for _, c := range n.Content {
		d = max(d, nodeDepth(c))
	}
	if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
		d++
	}
	return d
}

// checkBound fails when DepthBound is below the depth the parser finds in a document it parses,
// and says whether the parser read it.
func checkBound(t *testing.T, doc string) (parsed bool) {
	t.Helper()
	var n yaml.Node
	if yaml.Unmarshal([]byte(doc), &n) != nil {
		return false
	}
	if b, _ := DepthBound([]byte(doc)); b < nodeDepth(&n) {
		t.Fatalf("bound %d, but the parser nests %d deep (%q)", b, nodeDepth(&n), doc)
	}
	return true
}

// TestDepthBound: the bound is never below the parsed depth, on the corpora's manifests and on
// the texts that could fool a scanner (brackets in quotes, plain scalars, comments and block
// scalars, which are not structure; "- " entries and keys after them, which are); it is close
// for ordinary manifests, and it finds issue 21's 9,000 brackets.
func TestDepthBound(t *testing.T) {
	cases := []struct {
		doc     string
		max     int // the bound may be at most this (0: not checked)
		aliases bool
	}{
		{"a: 1\n", 3, false},
		{"a:\n  b:\n    c: [1, {d: [2]}]\n", 10, false},
		{"extra: " + strings.Repeat("[", 9000) + strings.Repeat("]", 9000) + "\n", 0, false},
		{"a: \"[[[[[[[[[[\"\nb: '[[[[[[[[[['\nc: x[[[[[[[[[[\n# [[[[[[[[[[\nd: |\n  [[[[[[[[[[\ne: 1\n", 6, false},
		{"- name: app\n  image: nginx\n  ports:\n  - containerPort: 80\n    env:\n    - name: A\n      valueFrom:\n        secretKeyRef: {name: x, key: y}\n", 0, false},
		{"- script: |\n    [[[[\n  next:\n    deeper:\n      deepest: [[1]]\n", 0, false},
		{"key: text\n  [\nnext:\n  a:\n    b:\n      c: [[1]]\n", 0, false},
		{"a: &x [[1]]\nb: *x\n", 0, true},
		{"[foo \"bar, [[[[1]]]]]\n", 0, false},
		{"a: !!seq [[1]]\nb: &c {d: [1]}\n", 0, false},
		{"- - - - [1]\n", 0, false},
		{"? [a, [b]]\n: [c]\n", 0, false},
		{"{\"a\":{\"b\":[{\"c\":[1]}]}}\n", 0, false},
		// A key in a flow sequence nests a single-pair mapping in it (FuzzDepthBound); a flow
		// mapping's keys do not, so a line of JSON with many keys stays close.
		{"0: [0: [?0]]\n", 7, false},
		{"a: [b: [c: [d]], e: f]\n", 9, false},
		// In block context ":x" begins a plain scalar, so a quote after it is text (FuzzDepthBound);
		// in a flow collection ":" is the value indicator wherever a token begins.
		{":\": [?0]\n", 5, false},
		{":x: [[1]]\n:y: \"[[\"\n", 5, false},
		{"- :\"[[\n", 3, false},
		{`{"a":"[[[[", "b": [[1]]}` + "\n", 5, false},
		// A block scalar on a line of its own at its mapping's column: its indicator counts from
		// that column, so "  02:" ends it (the generator's find).
		{"- 00:\n  |1-\n    ]}{\n  02: {a: [[1]]}\n", 0, false},
		{`{"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": [1, 2], "g": {"h": [3]}}` + "\n", 5, false},
	}
	for _, c := range cases {
		if !checkBound(t, c.doc) {
			t.Errorf("%q does not parse: it checks no bound", c.doc)
		}
		b, aliases := DepthBound([]byte(c.doc))
		if c.max > 0 && b > c.max {
			t.Errorf("bound %d for %q, want at most %d", b, c.doc, c.max)
		}
		if aliases != c.aliases {
			t.Errorf("aliases %v for %q", aliases, c.doc)
		}
	}
	if b, _ := DepthBound([]byte(cases[2].doc)); b < 9000 {
		t.Fatalf("9,000 brackets: bound %d", b)
	}
	files, _ := filepath.Glob("../testdata/corpus/*.yaml")
	if len(files) < 10 {
		t.Fatalf("%d corpus files", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs, _ := Split(b)
		for _, d := range docs {
			checkBound(t, string(d.Raw))
			if bound, _ := DepthBound(d.Raw); bound > 40 {
				t.Errorf("%s: bound %d for an ordinary manifest", f, bound)
			}
		}
	}
}

// TestDepthBoundIstioDocuments: on every document of the pinned Istio module's YAML files that
// the parser reads (its charts' templates are not YAML until rendered) — Kubernetes objects,
// CRDs with deep schemas, mesh configs, test inputs — the bound is never below the depth, and
// close to it: a CRD 60 deep stays under the server's MaxDepth of 100. (The bound before this
// test was below the depth on 188 of them: compact entries, "- k:", were not counted on the lines
// under them.)
func TestDepthBoundIstioDocuments(t *testing.T) {
	root := testkit.IstioDir(t)
	seen := map[string]bool{}
	docs := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") || strings.Contains(path, "/templates/") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		split, _ := Split(b)
		for _, doc := range split {
			if seen[string(doc.Raw)] {
				continue
			}
			seen[string(doc.Raw)] = true
			var n yaml.Node
			if yaml.Unmarshal(doc.Raw, &n) != nil {
				continue
			}
			docs++
			depth := nodeDepth(&n)
			if bound, _ := DepthBound(doc.Raw); bound < depth || bound > depth+8 {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s line %d: bound %d, depth %d", rel, doc.Line, bound, depth)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if docs < 2000 {
		t.Fatalf("%d documents read from %s", docs, root)
	}
}

// TestDepthBoundGenerated: on 4,000 generated documents (depthgen_test.go; about 1,800 of them
// parse), the bound is never below the depth.
func TestDepthBoundGenerated(t *testing.T) {
	parsed := 0
	for _, doc := range generatedDocs(2, 4000) {
		if checkBound(t, doc) {
			parsed++
		}
	}
	if parsed < 1000 {
		t.Fatalf("%d of 4,000 generated documents parse", parsed)
	}
}

// FuzzDepthBound: on any document go.yaml.in/yaml/v3 parses, DepthBound is at least the depth
// it finds (a bound below it would let deep nesting past the server's limit unparsed). Its seeds
// are a few documents and 300 generated ones (depthgen_test.go), which the fuzzer starts from;
// each seed costs the fuzzer's start ~2.5 ms of gathering coverage, so TestDepthBoundGenerated
// checks more.
func FuzzDepthBound(f *testing.F) {
	for _, s := range []string{"a: [1, {b: c}]\n", "- a\n- - b\n", "a: |\n  [[\nb: 1\n", "k: 'x''[' \nl: \"\\\"[\"\n", "? a\n: [b]\n", "a: &x [1]\nb: *x\n"} {
		f.Add(s)
	}
	for _, s := range generatedDocs(1, 300) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		if len(doc) > 4096 {
			return
		}
		checkBound(t, doc)
	})
}
