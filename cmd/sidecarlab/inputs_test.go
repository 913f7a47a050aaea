package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/google/go-cmp/cmp"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/diff"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

// writeFiles writes files (relative name → content) under a new directory and returns it.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	testkit.WriteFiles(t, dir, files)
	return dir
}

func podNamed(name string) string {
	return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\nspec:\n  containers:\n  - name: app\n    image: nginx\n"
}

// TestReadInputsDirectories: a directory gives its own *.yaml, *.yml and *.json files without
// -R, and its whole tree with it, in the order kubectl walks it; a file named explicitly is read
// whatever its name; - is standard input.
func TestReadInputsDirectories(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"b.yaml":          podNamed("b"),
		"a.yml":           podNamed("a"),
		"c.json":          `{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "c"}}`,
		"notes.txt":       "not a manifest",
		"upper.YAML":      podNamed("upper"),
		"sub/d.yaml":      podNamed("d"),
		"sub/deep/e.yaml": podNamed("e"),
		"sub/x.md":        "# not a manifest",
		"z.yaml":          podNamed("z"),
	})
	rel := func(names ...string) []string {
		for i, n := range names {
			if n != stdinName {
				names[i] = filepath.Join(dir, n)
			}
		}
		return names
	}
	cases := []struct {
		name      string
		args      []string
		recursive bool
		want      []string
	}{
		{"directory", []string{dir}, false, rel("a.yml", "b.yaml", "c.json", "z.yaml")},
		{"tree", []string{dir}, true, rel("a.yml", "b.yaml", "c.json", "sub/d.yaml", "sub/deep/e.yaml", "z.yaml")},
		{"subdirectory", []string{filepath.Join(dir, "sub")}, false, rel("sub/d.yaml")},
		{"explicit file of any name, then stdin, then a directory", []string{filepath.Join(dir, "notes.txt"), "-", filepath.Join(dir, "sub")}, true,
			rel("notes.txt", stdinName, "sub/d.yaml", "sub/deep/e.yaml")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cl := &cli{stdin: strings.NewReader(podNamed("stdin"))}
			inputs, err := readInputs(cl, c.args, c.recursive)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, in := range inputs {
				got = append(got, in.name)
				if in.name == stdinName && string(in.data) != podNamed("stdin") {
					t.Errorf("stdin read %q", in.data)
				}
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("inputs (-want +got):\n%s", diff)
			}
		})
	}

	// Errors: a directory with nothing to read (and a hint when -R would find some), a missing
	// file, standard input twice.
	empty := writeFiles(t, map[string]string{"only/deeper.yaml": podNamed("x"), "readme.txt": "x"})
	if _, err := readInputs(&cli{}, []string{empty}, false); err == nil || !strings.Contains(err.Error(), "no .yaml, .yml or .json files") || !strings.Contains(err.Error(), "-R") {
		t.Errorf("a directory with no manifests of its own: %v", err)
	}
	if in, err := readInputs(&cli{}, []string{empty}, true); err != nil || len(in) != 1 {
		t.Errorf("the same with -R: %d inputs, %v", len(in), err)
	}
	if _, err := readInputs(&cli{}, []string{filepath.Join(dir, "missing.yaml")}, false); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("a missing file: %v", err)
	}
	if _, err := readInputs(&cli{stdin: strings.NewReader("")}, []string{"-", "-"}, false); exitCodeOf(err) != 2 {
		t.Errorf("stdin twice: %v", err)
	}
}

// TestDirectoryThroughTheCommands: -f DIR and -R reach every command that reads manifests.
func TestDirectoryThroughTheCommands(t *testing.T) {
	dir := writeFiles(t, map[string]string{"a.yaml": podNamed("alpha"), "sub/b.yaml": podNamed("beta")})
	for _, cmd := range []string{"inject", "batch", "diff"} {
		out, stderr, err := runCLI(t, "", cmd, "-f", dir)
		if err != nil || !strings.Contains(out, "alpha") || strings.Contains(out, "beta") {
			t.Errorf("%s -f DIR: %v %s\n%s", cmd, err, stderr, out)
		}
		out, stderr, err = runCLI(t, "", cmd, "-f", dir, "-R")
		if err != nil || !strings.Contains(out, "alpha") || !strings.Contains(out, "beta") {
			t.Errorf("%s -f DIR -R: %v %s\n%s", cmd, err, stderr, out)
		}
	}
}

// Inputs that cut into documents in awkward ways: separators at the start and the end, a comment
// after one, no newline at the end, CRLF line ends.
var awkward = map[string]string{
	"plain.yaml":     testkit.Deployment,
	"leading.yaml":   "---\n" + podNamed("leading"),
	"trailing.yaml":  podNamed("trailing") + "---\n",
	"comment.yaml":   podNamed("one") + "--- # two\n" + podNamed("two") + "--- # end\n",
	"nonewline.yaml": strings.TrimSuffix(podNamed("nonewline"), "\n"),
	"crlf.yaml":      strings.ReplaceAll(podNamed("crlf"), "\n", "\r\n"),
	"blank.yaml":     "\n  \n",
	"svc.yaml":       "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: svc\n---\n",
}

// TestSeveralFilesInjectAsEachAlone: inject of several files prints exactly what inject of each
// prints, one after the other — so the output is istioctl's for each file — whatever the files'
// separators and line ends.
func TestSeveralFilesInjectAsEachAlone(t *testing.T) {
	dir := writeFiles(t, awkward)
	names := []string{"trailing.yaml", "leading.yaml", "plain.yaml", "blank.yaml", "nonewline.yaml", "svc.yaml", "comment.yaml", "trailing.yaml", "crlf.yaml", "svc.yaml", "leading.yaml"}
	var want strings.Builder
	args := []string{"inject"}
	for _, n := range names {
		p := filepath.Join(dir, n)
		args = append(args, "-f", p)
		if n == "blank.yaml" {
			continue // alone, it is an empty manifest (an error); among others, nothing
		}
		out, stderr, err := runCLI(t, "", "inject", "-f", p)
		if err != nil {
			t.Fatalf("%s: %v %s", n, err, stderr)
		}
		want.WriteString(out)
	}
	got, stderr, err := runCLI(t, "", args...)
	if err != nil {
		t.Fatalf("%v %s", err, stderr)
	}
	if got != want.String() {
		t.Fatalf("inject of the files together differs from each alone:\n%s", diff.Unified(want.String(), got))
	}
	// And the same files, comma-separated in one -f as kubectl takes them.
	got2, _, err := runCLI(t, "", "inject", "-f", filepath.Join(dir, "plain.yaml")+","+filepath.Join(dir, "svc.yaml"))
	if err != nil || !strings.Contains(got2, "name: web") || !strings.Contains(got2, "name: svc") {
		t.Fatalf("-f a,b: %v\n%s", err, got2)
	}
}

// badDoc is a Pod Istio cannot read (containers must be a list); badYAML does not parse, and
// neither does badIndent, whose ninth line (ports) is indented less than the key before it: go-yaml's
// parser names the line before it (engine.TestYAMLErrorLine).
const (
	badDoc    = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: broken\nspec:\n  containers: nope\n"
	badYAML   = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: bad\n   x: : y\n"
	badIndent = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: indent\nspec:\n  containers:\n  - name: app\n    image: nginx\n   ports: []\n"
)

// TestErrorsNameTheFile: an error in one of several files names that file, and the document and
// line within it — the same document and line inject of that file alone names.
func TestErrorsNameTheFile(t *testing.T) {
	files := map[string]string{
		"good.yaml":     testkit.Deployment + "---\n" + podNamed("second"),
		"trailing.yaml": podNamed("trailing") + "---\n",
		"leading.yaml":  "---\n" + podNamed("leading"),
		"baddoc.yaml":   podNamed("fine") + "---\n" + badDoc,
		"badyaml.yaml":  "# a comment\n---\n" + podNamed("fine") + "---\n" + badYAML,
		"indent.yaml":   "# a comment\n---\n" + podNamed("fine") + "---\n" + badIndent,
		"badsep.yaml":   podNamed("fine") + "--- not a separator\n" + podNamed("never"),
	}
	dir := writeFiles(t, files)
	cases := []struct {
		bad  string
		want string // what inject of the file alone says, pinned once
	}{
		{"baddoc.yaml", "document 2, line 15, manifest: error unmarshaling JSON"}, // the line of containers: nope
		{"badyaml.yaml", "document 3, line 16, manifest: error converting YAML to JSON: yaml: line 5:"},
		// The file's line 20 is badIndent's ninth.
		{"indent.yaml", "document 3, line 20, manifest: error converting YAML to JSON: yaml: line 8: did not find expected key"},
		{"badsep.yaml", "document 2, line 9, manifest: invalid Yaml document separator: not a separator"},
	}
	for _, c := range cases {
		t.Run(c.bad, func(t *testing.T) {
			bad := filepath.Join(dir, c.bad)
			_, alone, err := runCLI(t, "", "inject", "-f", bad)
			if exitCodeOf(err) != 1 || !strings.Contains(alone+errText(err), bad+": ") || !strings.Contains(alone+errText(err), c.want) {
				t.Fatalf("alone: %v, stderr %q, want %q", err, alone, c.want)
			}
			alone = errorLine(t, err, alone)
			args := []string{"inject"}
			for _, n := range []string{"good.yaml", "trailing.yaml", "leading.yaml", c.bad, "good.yaml"} {
				args = append(args, "-f", filepath.Join(dir, n))
			}
			out, together, err := runCLI(t, "", args...)
			if exitCodeOf(err) != 1 {
				t.Fatalf("exit %d (%v)", exitCodeOf(err), err)
			}
			if together = errorLine(t, err, together); together != alone {
				t.Errorf("among other files: %q\nalone:             %q", together, alone)
			}
			// All or nothing: not one document on standard output.
			if out != "" {
				t.Errorf("stdout is not empty:\n%s", out)
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// errorLine is the one error a failed inject reported: on stderr, or returned.
func errorLine(t *testing.T, err error, stderr string) string {
	t.Helper()
	if err != errSilent {
		return err.Error()
	}
	var lines []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "sidecarlab: ") {
			lines = append(lines, strings.TrimPrefix(l, "sidecarlab: "))
		}
	}
	if len(lines) != 1 {
		t.Fatalf("want one error on stderr, got:\n%s", stderr)
	}
	return lines[0]
}

// TestInjectIsAllOrNothing: when a later document fails, inject prints nothing on standard output
// (a pipe into kubectl apply applies nothing) and exits 1; --partial prints exactly what
// istioctl kube-inject prints for the same file: the documents before the failing one, their
// warnings, and fails too.
func TestInjectIsAllOrNothing(t *testing.T) {
	manifest := hostNetworkPod + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n---\n" + testkit.Deployment + "---\n" + badDoc + "---\n" + podNamed("after")
	dir := writeFiles(t, map[string]string{"m.yaml": manifest, "ok.yaml": testkit.Deployment})
	file := filepath.Join(dir, "m.yaml")

	out, stderr, err := runCLI(t, "", "inject", "-f", file)
	if exitCodeOf(err) != 1 || out != "" {
		t.Fatalf("without --partial: exit %d, stdout:\n%s", exitCodeOf(err), out)
	}
	if !strings.Contains(stderr, file+": document 4, line 38") { // containers: nope
		t.Fatalf("the error does not name file, document and line: %s", stderr)
	}
	// The same with the good file first: still nothing.
	if out, _, err := runCLI(t, "", "inject", "-f", filepath.Join(dir, "ok.yaml"), "-f", file, "-o", "json"); exitCodeOf(err) != 1 || out != "" {
		t.Fatalf("two files, -o json: exit %d, stdout:\n%s", exitCodeOf(err), out)
	}

	partial, partialErr, err := runCLI(t, "", "inject", "--partial", "-f", file)
	if exitCodeOf(err) != 1 || !strings.Contains(partial, "name: istio-proxy") || strings.Contains(partial, "after") {
		t.Fatalf("--partial: exit %d, stdout:\n%s", exitCodeOf(err), partial)
	}

	// istioctl of the same Istio, given the engine's default installation (held equal to
	// `istioctl manifest generate`'s by engine.TestMatchesIstioctl).
	bin, cfg := istioctlWithDefaults(t)
	cmd := exec.Command(bin, append([]string{"kube-inject", "-f", file}, cfg...)...)
	var ctlOut, ctlErr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &ctlOut, &ctlErr
	if err := cmd.Run(); err == nil {
		t.Fatal("istioctl kube-inject did not fail on the broken document")
	}
	if partial != ctlOut.String() {
		t.Fatalf("--partial differs from istioctl kube-inject:\n%s", diff.Unified(ctlOut.String(), partial))
	}
	// Its warnings too: what istioctl prints before its error.
	ctlWarnings, _, _ := strings.Cut(ctlErr.String(), "Error: ")
	ourWarnings, _, _ := strings.Cut(partialErr, "sidecarlab: ")
	if !strings.Contains(ctlWarnings, "host networking") || strings.TrimSpace(ourWarnings) != strings.TrimSpace(ctlWarnings) {
		t.Fatalf("warnings: ours %q, istioctl's %q", ourWarnings, ctlWarnings)
	}
}

// TestInjectAnnotateAsWritten: --annotate is the annotation written into each workload of the
// file. Given a value Istio refuses, inject --partial prints what istioctl kube-inject prints for
// the file with the annotation written in (engine.AnnotatedInput): the documents before the first
// workload, here a Service, and fails with Istio's message for that workload — its validator's
// for a CIDR, its proxy config reader's own "could not parse proxy config" for a value that is
// not YAML. A value Istio accepts prints what istioctl prints and succeeds.
func TestInjectAnnotateAsWritten(t *testing.T) {
	service := "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  ports:\n  - port: 80\n"
	manifest := service + "---\n" + testkit.Deployment + "---\n" + podNamed("second")
	file := filepath.Join(writeFiles(t, map[string]string{"m.yaml": manifest}), "m.yaml")
	bin, cfg := istioctlWithDefaults(t)
	for _, c := range []struct {
		key, value string
		refused    bool
	}{
		{"traffic.sidecar.istio.io/includeOutboundIPRanges", "10.0.0.0", true},
		{"proxy.istio.io/config", "{bad", true},
		{"traffic.sidecar.istio.io/includeOutboundIPRanges", "10.0.0.0/8", false},
		{"proxy.istio.io/config", "{concurrency: 2}", false},
	} {
		t.Run(c.key+"="+c.value, func(t *testing.T) {
			annotated, err := engine.AnnotatedInput([]byte(manifest), []input.Step{{Key: c.key, Value: c.value}})
			if err != nil {
				t.Fatal(err)
			}
			in := filepath.Join(t.TempDir(), "annotated.yaml")
			if err := os.WriteFile(in, []byte(annotated), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bin, append([]string{"kube-inject", "-f", in}, cfg...)...)
			var ctlOut, ctlErr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &ctlOut, &ctlErr
			ctlFailed := cmd.Run() != nil
			if ctlFailed != c.refused {
				t.Fatalf("istioctl kube-inject failed: %v, want %v: %s", ctlFailed, c.refused, ctlErr.String())
			}

			out, stderr, err := runCLI(t, "", "inject", "--partial", "-f", file, "--annotate", c.key+"="+c.value)
			if out != ctlOut.String() {
				t.Fatalf("stdout differs from istioctl kube-inject's:\n%s", diff.Unified(ctlOut.String(), out))
			}
			if !c.refused {
				if err != nil || !strings.Contains(out, "name: istio-proxy") {
					t.Fatalf("%v: %s", err, stderr)
				}
				return
			}
			if exitCodeOf(err) != 1 || !strings.HasPrefix(out, service) || strings.Contains(out, "istio-proxy") {
				t.Fatalf("exit %d, stdout:\n%s", exitCodeOf(err), out)
			}
			// Istio's log first, as istioctl prints it (istioctl stops at the Deployment, sidecarlab
			// goes on to the Pod: its entries, if any, come after) — but for the entry that says
			// the error again, which sidecarlab says once.
			_, ctlMsg, _ := strings.Cut(ctlErr.String(), "Error: ")
			if ours, theirs := istioEntries(stderr), istioEntries(withoutRestated(ctlErr.String(), ctlMsg)); !strings.HasPrefix(ours, theirs) {
				t.Fatalf("Istio's entries:\n%s\nistioctl's:\n%s", ours, theirs)
			}
			// Then the first error, the Deployment's (document 2, line 9), in Istio's words, which
			// are istioctl's.
			want := "sidecarlab: " + file + ": document 2, line 9: " + strings.TrimSpace(ctlMsg)
			if _, ours, _ := strings.Cut(stderr, "sidecarlab: "); !strings.HasPrefix("sidecarlab: "+ours, want) {
				t.Fatalf("stderr:\n%s\nwant its first error to be:\n%s", stderr, want)
			}
		})
	}
}

// defaultInstall is the embedded Istio's default installation, as the engine renders it.
func defaultInstall(t *testing.T) *engine.Install {
	t.Helper()
	e, err := engine.New(t.Context(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	in, err := e.Install(t.Context(), engine.InstallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// istioctlWithDefaults is the pinned istioctl and the kube-inject flags that give it the engine's
// default installation, offline.
func istioctlWithDefaults(t *testing.T) (bin string, flags []string) {
	t.Helper()
	bin = testkit.Istioctl(t)
	in := defaultInstall(t)
	dir := writeFiles(t, map[string]string{"inject-config.yaml": in.InjectorConfig, "values.json": in.Values, "mesh.yaml": in.MeshConfigYAML})
	return bin, []string{"--revision", "default",
		"--injectConfigFile", filepath.Join(dir, "inject-config.yaml"),
		"--valuesFile", filepath.Join(dir, "values.json"),
		"--meshConfigFile", filepath.Join(dir, "mesh.yaml")}
}
