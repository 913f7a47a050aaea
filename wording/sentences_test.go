package wording

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// sentenceRoots are the packages that return ids and parameters, never sentences
// (docs/architecture.md): every sentence a person reads is made here or in the catalogs.
var sentenceRoots = []string{"../engine", "../admission", "../clustermesh", "../report"}

// sentenceLike is a literal that reads as English prose: three words in a row.
var sentenceLike = regexp.MustCompile(`[A-Za-z][A-Za-z']* [A-Za-z][A-Za-z']* [A-Za-z][A-Za-z']*`)

// passedThrough are texts of others that the packages hold as they are, to pass on or to match:
// a file whose every literal is theirs (text empty), or one literal of a file. Each says whose.
var passedThrough = []passed{
	{"engine/catalog/proxyconfig_docs.go", "", "ProxyConfig's field docs, generated from Istio's proxy.proto"},
	{"engine/yamldoc/errline.go", "", "go-yaml's and apimachinery's error messages, matched to find the line they name"},
	{"engine/internal/protodoc/protodoc.go", "", "a build-time generator: the Go comments it writes into proxyconfig_docs.go, and its own failures"},
	{"engine/internal/protodoc/gen/main.go", "the Go file to write", "the generator's flag help, a build tool's"},
	{"engine/ambient/annotations.go", "For ambient pods, this is all the logic we need to run", "a comment of Istio's code, quoted as the row's evidence"},
	{"engine/ambient/annotations.go", "Handle healthcheck probes from the host node", "a comment of Istio's code, quoted as the row's evidence"},
	{"engine/catalog/catalog.go", "invalid value '%s' for annotation '%s': %s", "Istio's message for a refused annotation value, as istioctl prints it"},
	{"engine/diff/unified.go", "\\ No newline at end of file\n", "GNU diff's marker, which patch reads"},
	{"engine/inject.go", "===> Skipping injection because ", "the prefix of Istio's log line for a skipped pod, matched"},
	{"engine/modes.go", "Skipping due to policy check", "Istio's webhook's reason for a skipped pod"},
	{"engine/pod.go", "spec.template is required value", "Istio's own error for a workload without a pod template"},
	{"engine/ambient/enrolment.go", "failed to parse ambient enablement selector: %v", "Istio's CNI agent's own refusal of its selectors (cni/pkg/cmd/root.go), shown as the agent's error"},
	{"engine/authz.go", "ztunnel does not support HTTP attributes (found: ", "the start of Istio's status on a policy ztunnel cannot enforce, matched"},
	{"engine/yamldoc/yamldoc.go", "invalid Yaml document separator: %s", "Kubernetes' YAML reader's error, which istioctl prints"},
	{"admission/admission.go", "the namespace from the provided object %q does not match the namespace %q. You must pass '--namespace=%s' to perform this operation.", "kubectl's error for a namespace that differs from the request's"},
	{"admission/pod.go", "no matches for kind %q in version %q", "apimachinery's error for a kind the API server does not serve"},
}

// literal is a string literal of a file, as its file (relative to the repository) and text.
type literal struct{ file, text string }

// passed is someone else's text a file holds (text empty: every literal of the file), and whose.
type passed struct{ file, text, why string }

// sentenceLiterals are the literals of the Go files under roots (tests and testdata aside) that
// read as sentences, in file order; struct tags and import paths are not literals of prose.
func sentenceLiterals(t *testing.T, roots []string) []literal {
	t.Helper()
	var out []literal
	for _, root := range roots {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "testdata" {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			rel := filepath.ToSlash(strings.TrimPrefix(path, "../"))
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.ImportSpec:
					return false
				case *ast.Field:
					n.Tag = nil
				case *ast.BasicLit:
					if s, err := strconv.Unquote(n.Value); err == nil && n.Kind == token.STRING && sentenceLike.MatchString(s) {
						out = append(out, literal{rel, s})
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// unworded are the sentences of lits that are not someone else's text (theirs), and the entries
// of theirs that no literal matches any more (stale: the allow-list only names what is there).
func unworded(lits []literal, theirs []passed) (built, stale []string) {
	used := make([]bool, len(theirs))
	for _, l := range lits {
		ours := true
		for i, p := range theirs {
			if p.file == l.file && (p.text == "" || p.text == l.text) {
				used[i], ours = true, false
			}
		}
		if ours {
			built = append(built, l.file+": "+strconv.Quote(l.text))
		}
	}
	for i, p := range theirs {
		if !used[i] {
			stale = append(stale, p.file+": "+strconv.Quote(p.text))
		}
	}
	return built, stale
}

// TestNoSentencesBelowTheEdge: engine, admission, clustermesh and report build no English
// sentence — a literal that reads as one is someone else's text passed through (passedThrough,
// each saying whose and still in the code).
func TestNoSentencesBelowTheEdge(t *testing.T) {
	lits := sentenceLiterals(t, sentenceRoots)
	if len(lits) < len(passedThrough) {
		t.Fatalf("the scan found %d sentences; it reads no files", len(lits))
	}
	built, stale := unworded(lits, passedThrough)
	for _, b := range built {
		t.Errorf("an English sentence built below the edge (word it in package wording from an id and parameters): %s", b)
	}
	for _, g := range stale {
		t.Errorf("no longer in the code; take it off passedThrough: %s", g)
	}
	for _, p := range passedThrough {
		if p.why == "" {
			t.Errorf("%s: an entry of passedThrough says not whose text it is", p.file)
		}
	}
}

// TestUnwordedTrips: the check finds a sentence of ours, passes one of someone else's (by its
// text, or every literal of its file), and finds an entry no literal matches; a literal of three
// words is a sentence, a key, a path or two words are not.
func TestUnwordedTrips(t *testing.T) {
	lits := []literal{{"engine/x.go", "the value is too large"}, {"engine/y.go", "Istio says so here"}, {"engine/z.go", "all of this file"}}
	theirs := []passed{{"engine/y.go", "Istio says so here", "Istio's"}, {"engine/z.go", "", "a generator's"}, {"engine/y.go", "gone from the code", "Istio's"}}
	built, stale := unworded(lits, theirs)
	if !slices.Equal(built, []string{`engine/x.go: "the value is too large"`}) || !slices.Equal(stale, []string{`engine/y.go: "gone from the code"`}) {
		t.Fatalf("built %q, stale %q", built, stale)
	}
	for s, want := range map[string]bool{"a three word": true, "sidecar.istio.io/inject": false, "spec.template.spec": false, "two words": false, "%d of %d": false} {
		if got := sentenceLike.MatchString(s); got != want {
			t.Errorf("%q: sentence %v, want %v", s, got, want)
		}
	}
}
