package engine

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLocateFindings: findings of a real injection are located in the whole input, past the
// documents before theirs.
func TestLocateFindings(t *testing.T) {
	job := string(readFile(t, "testdata/corpus/job.yaml")) // 17 lines
	input := job + "---\n" + withPodAnnotation("        sidecar.istio.io/proxyCpu: 100m\n")
	r := mustInject(t, testEngine(t), []byte(input), nil, Settings{})
	var got []string
	for _, f := range r.Findings {
		got = append(got, string(f.Check))
	}
	if diff := cmp.Diff([]string{"job-classic-sidecar", "unknown-istio-annotation"}, got); diff != "" {
		t.Fatalf("findings (-want +got):\n%s", diff)
	}
	want := []Location{
		{Line: 14, Column: 7},              // the Job's "containers:", where injection adds istio-proxy
		{Line: 30, Column: 9, Exact: true}, // line 12 of the Deployment, which starts on line 19
	}
	if diff := cmp.Diff(want, Locate(r.Documents, r.Findings)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	lines := strings.Split(input, "\n")
	if l := lines[29]; !strings.HasPrefix(l, "        sidecar.istio.io/proxyCpu:") {
		t.Errorf("line 30 is %q", l)
	}
}
