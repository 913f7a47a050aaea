package engine

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sidecarlab/sidecarlab/engine/input"
)

// TestIgnoreAnnotation: sidecarlab.dev/ignore moves the findings it names to Ignored, for the
// workload that carries it and no other, wherever on the workload it is; findings it does not
// name stay; and the annotation itself is no finding.
func TestIgnoreAnnotation(t *testing.T) {
	e := testEngine(t)
	job := string(readFile(t, "testdata/corpus/job.yaml"))
	cronjob := string(readFile(t, "testdata/corpus/cronjob.yaml"))
	onJob := func(where, ids string) string {
		switch where {
		case "workload":
			return strings.Replace(job, "  namespace: shop\n", "  namespace: shop\n  annotations:\n    sidecarlab.dev/ignore: "+ids+"\n", 1)
		default: // the pod template
			return strings.Replace(job, "      labels:\n        app: migrate\n", "      annotations:\n        sidecarlab.dev/ignore: "+ids+"\n      labels:\n        app: migrate\n", 1)
		}
	}
	type ids struct{ found, ignored []string }
	cases := []struct {
		name, manifest string
		steps          []input.Step
		want           ids
	}{
		{"no annotation", job, nil, ids{found: []string{"job-classic-sidecar@1"}}},
		{"on the Job's metadata", onJob("workload", "job-classic-sidecar"), nil, ids{ignored: []string{"job-classic-sidecar@1"}}},
		{"on the pod template, among others and spaces", onJob("template", `" inject-value , job-classic-sidecar"`), nil, ids{ignored: []string{"job-classic-sidecar@1"}}},
		{"naming another check", onJob("workload", "inject-value"), nil, ids{found: []string{"job-classic-sidecar@1"}}},
		{"on one workload of two", onJob("workload", "job-classic-sidecar") + "---\n" + job, nil,
			ids{found: []string{"job-classic-sidecar@2"}, ignored: []string{"job-classic-sidecar@1"}}},
		{"on a CronJob's spec.jobTemplate.metadata", strings.Replace(cronjob, "        sidecar.istio.io/proxyCPU: 50m\n", "        sidecar.istio.io/proxyCPU: 50m\n        sidecarlab.dev/ignore: job-classic-sidecar,resource-annotation-drops-defaults\n", 1), nil,
			ids{ignored: []string{"job-classic-sidecar@1", "resource-annotation-drops-defaults@1"}}},
		// The corpus's own case, which TestMatchesIstioctl holds byte-identical to istioctl's.
		{"on both, from the corpus", string(readFile(t, "testdata/corpus/job-ignored.yaml")), nil,
			ids{ignored: []string{"job-classic-sidecar@1", "resource-annotation-drops-defaults@1"}}},
		{"set by a step", job, []input.Step{{Key: IgnoreAnnotation, Value: "job-classic-sidecar"}}, ids{ignored: []string{"job-classic-sidecar@1"}}},
		// Not under an Istio prefix: neither unknown to Istio nor misplaced on the workload.
		{"on a Deployment, both places", withPodAnnotation("        sidecarlab.dev/ignore: inject-value\n") + "---\n" +
			strings.Replace(labDeployment, "  name: lab\n", "  name: lab\n  annotations:\n    sidecarlab.dev/ignore: inject-value\n", 1), nil, ids{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			names := func(fs []Finding) []string {
				var out []string
				for _, f := range fs {
					out = append(out, string(f.Check)+"@"+string(rune('0'+f.Doc)))
				}
				return out
			}
			r := mustInject(t, e, []byte(c.manifest), c.steps, Settings{})
			if diff := cmp.Diff(c.want, ids{names(r.Findings), names(r.Ignored)}, cmp.AllowUnexported(ids{})); diff != "" {
				t.Errorf("inject (-want +got):\n%s", diff)
			}
			tl, err := e.Timeline(t.Context(), []byte(c.manifest), c.steps, Settings{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, ids{names(tl.Findings), names(tl.Ignored)}, cmp.AllowUnexported(ids{})); diff != "" {
				t.Errorf("timeline (-want +got):\n%s", diff)
			}
		})
	}
}
