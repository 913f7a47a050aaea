package engine

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/diff"
	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

// realMeshWorkloads are the workloads every real mesh injects: a Deployment, a StatefulSet, a Job,
// a CronJob, a bare Pod, and a Deployment that asks for hold through its annotation.
var realMeshWorkloads = []string{
	"testdata/corpus/deployment.yaml",
	"testdata/corpus/statefulset.yaml",
	"testdata/corpus/job.yaml",
	"testdata/corpus/cronjob.yaml",
	"testdata/corpus/pod.yaml",
	"testdata/corpus/lab-hold.yaml",
}

// meshSource is one row of testdata/meshes/SOURCES.md: a corpus file and where it was found.
type meshSource struct {
	file, repo, path, commit, istio string
}

// meshSources reads the table of testdata/real-meshes.md: its rows whose first cell is a file
// name in backquotes.
func meshSources(t *testing.T) map[string]meshSource {
	t.Helper()
	out := map[string]meshSource{}
	for _, line := range strings.Split(string(readFile(t, "testdata/real-meshes.md")), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 7 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		cell := func(i int) string { return strings.Trim(strings.TrimSpace(cells[i]), "`") }
		s := meshSource{file: cell(1), repo: cell(2), path: cell(3), commit: cell(4), istio: cell(5)}
		if _, dup := out[s.file]; dup {
			t.Errorf("real-meshes.md names %s twice", s.file)
		}
		out[s.file] = s
	}
	return out
}

// TestRealMeshes holds "your own mesh" to istioctl on the ConfigMaps teams really have: the
// corpus testdata/real-meshes.md names (each file as found in a public repository), from Istio
// 0.8 to 1.29, each with six real workloads. The files are read from the directory
// SIDECARLAB_REAL_MESHES names: they come from snapshots of other repositories, which this one
// does not hold. The ConfigMaps are read as --mesh-from reads them (ParseMeshConfigMaps: the
// revision from their names); istioctl kube-inject gets their three texts as its files
// (--injectConfigFile, --valuesFile, --meshConfigFile) and that revision, as a user passing
// istioctl's flags would. For every mesh × workload the output is istioctl's byte for byte, or
// both fail with the same first error. A mesh whose ConfigMaps lack a part (Istio ≤ 1.1's
// injector has no values) is refused naming the part, as istioctl reading them from a cluster
// refuses it ("missing configuration map key"). The upgrade from each of these meshes is
// engine/upgrade's TestRealMeshUpgrades.
func TestRealMeshes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds istioctl; run without -short")
	}
	dir := os.Getenv("SIDECARLAB_REAL_MESHES")
	if dir == "" {
		t.Skip("SIDECARLAB_REAL_MESHES names no directory with the corpus of testdata/real-meshes.md")
	}
	t.Parallel()
	sources := meshSources(t)
	var files []string
	repos := map[string]bool{}
	for name, s := range sources {
		if s.repo == "" || s.path == "" || len(s.commit) != 40 || s.istio == "" {
			t.Errorf("real-meshes.md: %s lacks its repository, path, commit or Istio version: %+v", s.file, s)
		}
		repos[s.repo] = true
		f := filepath.Join(dir, name)
		if _, err := os.Stat(f); err != nil {
			t.Errorf("the corpus lacks %s: %v", name, err)
			continue
		}
		files = append(files, f)
	}
	slices.Sort(files)
	if len(files) < 30 || len(repos) < 12 {
		t.Fatalf("the corpus has %d meshes from %d repositories; it needs at least 30 from 12", len(files), len(repos))
	}

	bin := testkit.Istioctl(t)
	e := testEngine(t)
	var same, bothFailed, refused atomic.Int32
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".yaml"), func(t *testing.T) {
			t.Parallel()
			n, failed, ok := matchRealMesh(t, e, bin, f)
			same.Add(int32(n))
			bothFailed.Add(int32(failed))
			if !ok {
				refused.Add(1)
			}
		})
	}
	t.Cleanup(func() {
		t.Logf("%d meshes from %d repositories × %d workloads: %d byte-identical, %d rejected by both; %d meshes refused for a missing part",
			len(files), len(repos), len(realMeshWorkloads), same.Load(), bothFailed.Load(), refused.Load())
	})
}

// ctlError is the error istioctl ended with: its last "Error: " line without the prefix, or, when
// that line only counts errors ("1 error occurred:"), the errors listed below it ("\t* …"); its
// whole stderr when it has no such line.
func ctlError(stderr string) string {
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		msg, ok := strings.CutPrefix(lines[i], "Error: ")
		if !ok {
			continue
		}
		if !strings.HasSuffix(msg, "occurred:") {
			return msg
		}
		var listed []string
		for _, l := range lines[i+1:] {
			if item, ok := strings.CutPrefix(strings.TrimSpace(l), "* "); ok {
				listed = append(listed, item)
			}
		}
		return strings.Join(listed, "; ")
	}
	return strings.TrimSpace(stderr)
}

// matchRealMesh injects realMeshWorkloads with the mesh in file, read as --mesh-from reads it,
// and compares each with istioctl kube-inject given the mesh's three texts as its files: same
// counts the byte-identical outputs, bothFailed the workloads both refused. ok is false when
// --mesh-from refuses the mesh for a missing part.
func matchRealMesh(t *testing.T, e *Engine, bin, file string) (same, bothFailed int, ok bool) {
	t.Helper()
	cms, err := ParseMeshConfigMaps(readFile(t, file))
	if err != nil {
		var ie *input.Error
		if !errors.As(err, &ie) || (ie.ID != "mesh-no-key" && ie.ID != "mesh-no-mesh") {
			t.Fatalf("--mesh-from refused it: %v", err)
		}
		t.Logf("refused, as istioctl reading these ConfigMaps from a cluster refuses them: %v", err)
		return 0, 0, false
	}
	dir := t.TempDir()
	if err := writeCtlFiles(dir, cms.Mesh.InjectorConfig, cms.Mesh.Values, cms.Mesh.MeshConfig); err != nil {
		t.Fatal(err)
	}
	rev := cms.Revision
	if rev == "" {
		rev = "default"
	}
	s := Settings{Install: InstallOptions{Mesh: cms.Mesh, Revision: cms.Revision}}
	results := make([]*Injection, len(realMeshWorkloads))
	for i, w := range realMeshWorkloads {
		r, err := e.Inject(t.Context(), readFile(t, w), nil, s)
		if err != nil {
			// The installation itself failed (a template Istio cannot parse): one error for
			// the input, as istioctl fails on it.
			r = &Injection{Documents: []Document{{Error: &input.Error{Msg: err.Error()}}}}
		}
		results[i] = r
	}
	batch := newCtlBatch(t, func(f string) (string, string, error) { return kubeInjectRev(bin, dir, rev, f) }, realMeshWorkloads, results)
	for i, w := range realMeshWorkloads {
		r := results[i]
		stdout, stderr, _, ctlErr := batch.judge(i)
		switch errs := r.Errors(); {
		case ctlErr != nil && len(errs) == 0:
			t.Errorf("%s: istioctl failed (%v: %s) but sidecarlab did not", filepath.Base(w), ctlErr, firstLine(stderr))
		case ctlErr != nil:
			// The same first error: istioctl's ("Error: …", the last line it prints) is in ours.
			if want := ctlError(stderr); !strings.Contains(errs[0].Error(), want) {
				t.Errorf("%s: both failed, with other errors:\n  istioctl:   %s\n  sidecarlab: %v", filepath.Base(w), want, errs[0])
			}
			bothFailed++
		case len(errs) > 0:
			t.Errorf("%s: sidecarlab: %v; istioctl succeeded", filepath.Base(w), errs[0])
		case r.Output() != stdout:
			t.Errorf("%s: output differs from istioctl:\n%s", filepath.Base(w), diff.Unified(stdout, r.Output()))
		default:
			same++
		}
	}
	return same, bothFailed, true
}

// TestCtlError: istioctl's last error line, the errors a counting line lists, or all it said.
func TestCtlError(t *testing.T) {
	for stderr, want := range map[string]string{
		"2026-12-06T02:37:35Z\terror\tInvalid template: x\nError: failed to run injection template: x\n": "failed to run injection template: x",
		"Error: 1 error occurred:\n\t* template: inject:443: function \"render\" not defined\n\n":        `template: inject:443: function "render" not defined`,
		"panic: boom\n": "panic: boom",
	} {
		if got := ctlError(stderr); got != want {
			t.Errorf("ctlError(%q) = %q, want %q", stderr, got, want)
		}
	}
}
