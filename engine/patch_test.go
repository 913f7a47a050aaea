package engine

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sidecarlab/sidecarlab/engine/diff"
	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

// patchBin is GNU patch (Debian's patch, which scripts/testenv.sh installs when missing). The
// test fails, not skips, without it: the promise that the unified diff is a patch goes untested.
func patchBin(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("patch")
	if err != nil {
		t.Fatalf("GNU patch is needed to check the unified diff (apt-get install patch): %v", err)
	}
	return p
}

// applyPatch applies a unified diff to text with patch, exactly (no fuzz: every context line
// must match), and returns the result.
func applyPatch(t *testing.T, bin, text, diff string) string {
	t.Helper()
	dir := t.TempDir()
	in, out := filepath.Join(dir, "before"), filepath.Join(dir, "after")
	if err := os.WriteFile(in, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--batch", "--silent", "--fuzz=0", "--no-backup-if-mismatch", "-o", out, in)
	cmd.Stdin = strings.NewReader(diff)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("patch refused the diff: %v\n%s\ndiff:\n%s", err, stderr.String(), diff)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestUnifiedDiffIsAPatch applies every step's unified diff of the lab's timelines (each row of
// the lab table, and all of them in one timeline) and of every input of the corpus (row 0), with
// and without a final newline, with Debian's patch, and checks that the patched text is the
// next row's output.
func TestUnifiedDiffIsAPatch(t *testing.T) {
	t.Parallel()
	bin := patchBin(t)
	e := testEngine(t)
	base := string(readFile(t, "testdata/corpus/lab-base.yaml"))
	var all []input.Step
	type timeline struct {
		name     string
		manifest string
		steps    []input.Step
	}
	var cases []timeline
	for _, row := range labRows {
		cases = append(cases, timeline{"lab/" + row.name, base, []input.Step{row.step}})
		all = append(all, row.step)
	}
	// Documents are diffed one by one and written as one patch: comments and separators between
	// them, and a Service Istio passes through, must land where they are.
	multi := "# a comment before the first document\n---\n" + strings.ReplaceAll(testkit.Pods(3, 0), "---\n", "--- # the next Pod\n\n") +
		"---\napiVersion: v1\nkind: Service\nmetadata:\n  name: s\n---\n" + base
	cases = append(cases, timeline{"lab/all rows in one timeline", base, all},
		timeline{"lab/without a final newline", strings.TrimSuffix(base, "\n"), all[:3]},
		timeline{"multi-document", multi, all[:3]},
		timeline{"multi-document without a final newline", strings.TrimSuffix(multi, "\n"), all[:2]})
	inputs, _ := filepath.Glob("testdata/corpus/*.yaml")
	for _, p := range inputs {
		m := string(readFile(t, p))
		cases = append(cases, timeline{"corpus/" + filepath.Base(p), m, nil},
			timeline{"corpus/" + filepath.Base(p) + " without a final newline", strings.TrimRight(m, "\n"), nil})
	}
	noNewline := 0
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tl, err := e.Timeline(t.Context(), []byte(c.manifest), c.steps, Settings{})
			if err != nil {
				t.Fatal(err)
			}
			before := c.manifest
			for _, st := range tl.Steps {
				if errs := st.Errors(); len(errs) > 0 {
					// A failed document is left out of the diff (TestUnifiedDiffOfAFailedDocument).
					t.Skipf("step %d: %v", st.Index, errs[0])
				}
				after := st.Output()
				if unifiedOf(t, st) == "" {
					if before != after {
						t.Fatalf("step %d: no diff, but the texts differ", st.Index)
					}
				} else if got := applyPatch(t, bin, before, unifiedOf(t, st)); got != after {
					t.Fatalf("step %d: the patched text is not the row's output (-want +got):\n%s", st.Index, cmp.Diff(after, got))
				}
				if strings.Contains(unifiedOf(t, st), "\n\\ No newline at end of file\n") {
					noNewline++
				}
				before = after
			}
		})
	}
	if noNewline == 0 {
		t.Error("no case had an input without a final newline")
	}
}

// TestUnifiedDiffAsGNUDiff compares diff.Unified with GNU diff -u (headers aside) where the
// shortest edit is unique: a missing final newline on either side or both, empty sides, ranges
// of one line.
func TestUnifiedDiffAsGNUDiff(t *testing.T) {
	gnu, err := exec.LookPath("diff")
	if err != nil {
		t.Fatalf("GNU diff is needed for this test: %v", err)
	}
	cases := [][2]string{
		{"a\nb\nc", "a\nb\nd"},
		{"a\nb\nc\n", "a\nb\nc"},
		{"a\nb\nc", "a\nb\nc\n"},
		{"a\nb\nc", "a\nb\nc\nd"},
		{"", "a\nb\n"},
		{"a\nb\n", ""},
		{"", "a"},
		{"a\n", "b\n"},
		{"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n", "1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\n"},
		{"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n", "one\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\nsixteen"},
	}
	for _, c := range cases {
		dir := t.TempDir()
		a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
		if err := os.WriteFile(a, []byte(c[0]), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(b, []byte(c[1]), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(gnu, "-u", a, b).Output()
		if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != 1) {
			t.Fatalf("diff -u: %v", err)
		}
		// GNU's header names the files and their times; ours says before and after.
		_, want, _ := strings.Cut(string(out), "\n+++ ")
		_, want, _ = strings.Cut(want, "\n")
		got := strings.TrimPrefix(diff.Unified(c[0], c[1]), "--- before\n+++ after\n")
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%q → %q (-diff -u +ours):\n%s", c[0], c[1], d)
		}
	}
}

// TestUnifiedDiffOfAFailedDocument: a document Istio rejects at a step is shown as failed (the
// row's document carries Istio's error) and left out of the step's unified diff, instead of
// every line of its last output reading as deleted; the other documents are still diffed. The
// same at row 0, where the rejected document's input is not diffed as deleted.
func TestUnifiedDiffOfAFailedDocument(t *testing.T) {
	e := testEngine(t)
	const service = "apiVersion: v1\nkind: Service\nmetadata:\n  name: svc\nspec:\n  ports:\n  - port: 80\n"
	manifest := labDeployment + "---\n" + service
	// Istio's template cannot range over this userVolume: it fails the Deployment.
	bad := input.Step{Key: "sidecar.istio.io/userVolume", Value: `{"v":`}
	tl, err := e.Timeline(t.Context(), []byte(manifest), []input.Step{{Key: "sidecar.istio.io/proxyCPU", Value: "200m"}, bad}, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	st := tl.Steps[2]
	if st.Documents[0].Error == nil || st.Documents[1].Error != nil {
		t.Fatalf("want the Deployment failed and the Service not: %+v", st.Documents)
	}
	if unifiedOf(t, st) != "" {
		t.Fatalf("the failed Deployment is diffed:\n%s", unifiedOf(t, st))
	}
	if !strings.Contains(unifiedOf(t, tl.Steps[1]), "+            cpu: 200m") {
		t.Fatalf("the step before, which did not fail, is not diffed:\n%s", unifiedOf(t, tl.Steps[1]))
	}
	// The CLI's text says the row failed, not "(no change)": wording's TestTimelineText.

	// Row 0: the first Deployment fails (its own annotation), the second is injected.
	failing := strings.Replace(labDeployment, "  name: lab\n", "  name: broken\n", 1)
	failing = strings.Replace(failing, "      labels:\n        app: lab\n    spec", "      annotations:\n        sidecar.istio.io/userVolume: '{\"v\":'\n      labels:\n        app: lab\n    spec", 1)
	tl, err = e.Timeline(t.Context(), []byte(failing+"---\n"+labDeployment), nil, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	row0 := tl.Steps[0]
	if row0.Documents[0].Error == nil || row0.Documents[1].Error != nil {
		t.Fatalf("want document 1 failed and 2 injected: %+v", row0.Documents)
	}
	if strings.Contains(unifiedOf(t, row0), "-  name: broken") || !strings.Contains(unifiedOf(t, row0), "name: istio-proxy\n") {
		t.Fatalf("row 0 diffs the failed document, or not the injected one:\n%s", unifiedOf(t, row0))
	}
	// What is diffed is still a patch: the injected document's input becomes its output.
	want := row0.Documents[1].Output() + "---\n"
	if got := applyPatch(t, patchBin(t), row0.Documents[1].Input+"---\n", unifiedOf(t, row0)); got != want {
		t.Fatalf("(-want +got):\n%s", cmp.Diff(want, got))
	}
}
