package engine

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/diff"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

// istioCase is one case of Istio's own TestInjection / TestInjectionOlderVersion, read from
// inject_test.go in the module cache.
type istioCase struct {
	in, want, inFilePath, expectedError string
	setFlags                            []string
	// custom is set when the case needs Go code we cannot express as install options (a mesh
	// config mutator, a feature flag flipped in setup) or a non-literal value.
	custom string
}

func (c istioCase) defaultConfig() bool {
	return c.custom == "" && len(c.setFlags) == 0 && c.inFilePath == ""
}

// readIstioCases parses the named test function in Istio's inject_test.go and returns its cases:
// the explicit ones, and (for TestInjection) every other X.yaml with an X.yaml.injected, which
// Istio's test adds automatically with the default configuration.
func readIstioCases(t *testing.T, fn string) []istioCase {
	t.Helper()
	src := filepath.Join(testkit.IstioDir(t), "pkg/kube/inject/inject_test.go")
	f, err := parser.ParseFile(token.NewFileSet(), src, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var cases []istioCase
	ast.Inspect(f, func(n ast.Node) bool {
		fd, ok := n.(*ast.FuncDecl)
		if !ok || fd.Name.Name != fn {
			return true
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			as, ok := n.(*ast.AssignStmt)
			if !ok || len(as.Lhs) != 1 || len(as.Rhs) != 1 {
				return true
			}
			if id, ok := as.Lhs[0].(*ast.Ident); !ok || id.Name != "cases" {
				return true
			}
			lit, ok := as.Rhs[0].(*ast.CompositeLit)
			if !ok {
				return true
			}
			for _, el := range lit.Elts {
				cases = append(cases, parseIstioCase(el.(*ast.CompositeLit)))
			}
			return false
		})
		return false
	})
	if len(cases) == 0 {
		t.Fatalf("found no cases in %s of %s: did Istio's test change shape?", fn, src)
	}
	if fn != "TestInjection" {
		return cases
	}
	tested := map[string]bool{}
	for _, c := range cases {
		if c.want != "" {
			tested[c.want] = true
		} else {
			tested[c.in+".injected"] = true
		}
	}
	entries, err := os.ReadDir(filepath.Dir(istioTestdata(t, "x")))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		n := e.Name()
		if !strings.HasSuffix(n, ".yaml") || strings.HasSuffix(n, ".iop.yaml") || tested[n+".injected"] {
			continue
		}
		cases = append(cases, istioCase{in: n, want: n + ".injected"})
	}
	return cases
}

func parseIstioCase(lit *ast.CompositeLit) istioCase {
	var c istioCase
	str := func(e ast.Expr, field string) string {
		if bl, ok := e.(*ast.BasicLit); ok && bl.Kind == token.STRING {
			s, _ := strconv.Unquote(bl.Value)
			return s
		}
		c.custom = field + " is not a literal"
		return ""
	}
	for _, el := range lit.Elts {
		kv := el.(*ast.KeyValueExpr)
		switch key := kv.Key.(*ast.Ident).Name; key {
		case "in":
			c.in = str(kv.Value, key)
		case "want":
			c.want = str(kv.Value, key)
		case "inFilePath":
			c.inFilePath = str(kv.Value, key)
		case "expectedError":
			c.expectedError = str(kv.Value, key)
		case "setFlags":
			for _, v := range kv.Value.(*ast.CompositeLit).Elts {
				c.setFlags = append(c.setFlags, str(v, key))
			}
		case "skipWebhook", "expectedLog":
			// Not about kube-inject output.
		case "skipInjection":
			c.custom = "skipInjection"
		default:
			c.custom = key
		}
	}
	if c.want == "" {
		c.want = c.in + ".injected"
	}
	return c
}

var istioStatusVersion = regexp.MustCompile(`sidecar.istio.io/status: '{"version":"([0-9a-f]+)",`)

// runIstioCase injects one of Istio's golden inputs through the engine and compares with Istio's
// expected output. It returns "" when they match, else why not.
func runIstioCase(t *testing.T, e *Engine, c istioCase, s Settings) string {
	t.Helper()
	s.Install = InstallOptions{Set: c.setFlags}
	if c.inFilePath != "" {
		s.Install.Overlay = string(readFile(t, istioTestdata(t, c.inFilePath)))
	}
	r, err := e.Inject(t.Context(), readFile(t, istioTestdata(t, c.in)), nil, s)
	if c.expectedError != "" {
		var msg string
		if err != nil {
			msg = err.Error()
		} else if errs := r.Errors(); len(errs) > 0 {
			msg = errs[0].Error()
		}
		if !strings.Contains(strings.ToLower(msg), c.expectedError) {
			return "want an error containing " + strconv.Quote(c.expectedError) + ", got " + strconv.Quote(msg)
		}
		return ""
	}
	if err != nil {
		return err.Error()
	}
	if errs := r.Errors(); len(errs) > 0 {
		return errs[0].Error()
	}
	got := istioStatusVersion.ReplaceAllLiteralString(r.Output(), `sidecar.istio.io/status: '{"version":"",`)
	want := string(readFile(t, istioTestdata(t, c.want)))
	if got != want {
		return "output differs:\n" + diff.Unified(want, got)
	}
	return ""
}

// TestIstioGoldenCorpus runs Istio's own injection golden files through the engine: TestInjection's
// cases in webhook mode on Kubernetes 1.34 (Istio's test gives its fake cluster 1.33 and 1.34
// nodes, so native sidecars), and TestInjectionOlderVersion's on 1.28 (classic). Every case must
// reproduce byte for byte: those with the default configuration, and those with install options
// (--set flags, IstioOperator files), which run through our install options. Cases that need Go
// code (mesh mutators, feature flags flipped in setup) cannot be expressed and are counted.
//
// Istio's test gives its injector the manifests as written, where a cluster's webhook sees them
// with the API server's defaults (apidefaults.go); so this engine's webhook mode injects them as
// written (clusters.asWritten), as Istio's test does.
func TestIstioGoldenCorpus(t *testing.T) {
	t.Parallel()
	e, err := New(t.Context(), Options{InstallPolicy: TrustedInstalls()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	e.clusters.asWritten = true
	suites := []struct {
		fn       string
		settings Settings
	}{
		{"TestInjection", Settings{Mode: ModeWebhook, KubernetesVersion: "1.34"}},
		{"TestInjectionOlderVersion", Settings{Mode: ModeWebhook, KubernetesVersion: "1.28"}},
	}
	for _, suite := range suites {
		t.Run(suite.fn, func(t *testing.T) {
			var defOK, defAll, optOK, optAll, custom int
			var optFailed []string
			for _, c := range readIstioCases(t, suite.fn) {
				if c.custom != "" {
					custom++
					continue
				}
				name := c.want
				if c.expectedError != "" {
					name = c.in + " (error)"
				}
				isDefault := c.defaultConfig()
				if isDefault {
					defAll++
				} else {
					optAll++
				}
				t.Run(name, func(t *testing.T) {
					if why := runIstioCase(t, e, c, suite.settings); why != "" {
						t.Error(why)
						if !isDefault {
							optFailed = append(optFailed, name+": "+firstLine(why))
						}
						return
					}
					if isDefault {
						defOK++
					} else {
						optOK++
					}
				})
			}
			slices.Sort(optFailed)
			t.Logf("%s: default configuration %d/%d reproduce; with install options %d/%d; %d need Go code and were not run",
				suite.fn, defOK, defAll, optOK, optAll, custom)
			for _, f := range optFailed {
				t.Logf("  not reproduced: %s", f)
			}
			if defAll == 0 {
				t.Fatal("no default-configuration cases found")
			}
		})
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
