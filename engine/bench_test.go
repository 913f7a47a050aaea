package engine

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"istio.io/istio/pkg/kube/inject"
)

// bareInject is what istioctl does for one document: decode, IntoObject, marshal.
func bareInject(b *testing.B, in *Install, raw []byte) {
	obj, err := inject.FromRawToObject(raw)
	if err != nil {
		b.Fatal(err)
	}
	out, err := inject.IntoObject(nil, in.templates, in.values, "", in.mesh, obj, func(string) {})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := yaml.Marshal(out); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkInjectOverhead measures one pod through the engine and through bare inject.IntoObject
// in the same run and reports the ratio (goal ≤ 1.15).
func BenchmarkInjectOverhead(b *testing.B) {
	e := testEngine(b)
	pod := readFile(b, "testdata/corpus/pod.yaml")
	ctx := context.Background()
	var bare, ours time.Duration
	for i := 0; b.Loop(); i++ {
		t0 := time.Now()
		bareInject(b, e.def, pod)
		t1 := time.Now()
		if _, err := e.Inject(ctx, pod, nil, Settings{}); err != nil {
			b.Fatal(err)
		}
		bare += t1.Sub(t0)
		ours += time.Since(t1)
	}
	b.ReportMetric(float64(bare.Nanoseconds())/float64(b.N), "bare-ns/op")
	b.ReportMetric(float64(ours.Nanoseconds())/float64(b.N), "engine-ns/op")
	b.ReportMetric(float64(ours)/float64(bare), "engine/bare")
}

func BenchmarkBareIntoObject(b *testing.B) {
	e := testEngine(b)
	pod := readFile(b, "testdata/corpus/pod.yaml")
	for b.Loop() {
		bareInject(b, e.def, pod)
	}
}

func BenchmarkEngineInject(b *testing.B) {
	e := testEngine(b)
	pod := readFile(b, "testdata/corpus/pod.yaml")
	for b.Loop() {
		if _, err := e.Inject(context.Background(), pod, nil, Settings{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDiffDeployment diffs a typical Deployment before and after holdApplicationUntilProxyStarts.
func BenchmarkDiffDeployment(b *testing.B) {
	e := testEngine(b)
	deploy := readFile(b, "testdata/corpus/deployment.yaml")
	before := mustInject(b, e, deploy, nil, Settings{}).Documents
	after := mustInject(b, e, deploy, []Step{{Key: "proxy.istio.io/config", Value: "holdApplicationUntilProxyStarts: true"}}, Settings{}).Documents
	for b.Loop() {
		if len(DiffDocuments(before, after, "hold")) == 0 {
			b.Fatal("no changes")
		}
	}
}

// retoggleSeq makes inputs unique across -count runs, so nothing is memoised.
var retoggleSeq atomic.Int64

// BenchmarkTimelineCold runs an 8-step timeline nothing of which is memoised.
func BenchmarkTimelineCold(b *testing.B) {
	e := testEngine(b)
	deploy := readFile(b, "testdata/corpus/deployment.yaml")
	for b.Loop() {
		in := append(append([]byte(nil), deploy...), fmt.Sprintf("# run %d\n", retoggleSeq.Add(1))...)
		if _, err := e.Timeline(context.Background(), in, eightSteps, Settings{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTimelineRetoggle re-runs an 8-step timeline whose last step changes every time (a new
// value, so it is never memoised) and reports the cost against one plain inject (goal ≤ 1.5).
func BenchmarkTimelineRetoggle(b *testing.B) {
	e := testEngine(b)
	deploy := readFile(b, "testdata/corpus/deployment.yaml")
	ctx := context.Background()
	steps := append([]Step(nil), eightSteps...)
	if _, err := e.Timeline(ctx, deploy, steps, Settings{}); err != nil {
		b.Fatal(err)
	}
	var one, retoggle time.Duration
	for b.Loop() {
		steps[7] = Step{Key: "sidecar.istio.io/proxyCPULimit", Value: fmt.Sprintf("%dm", 1000+retoggleSeq.Add(1))}
		t0 := time.Now()
		if _, err := e.Timeline(ctx, deploy, steps, Settings{}); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := e.Inject(ctx, deploy, nil, Settings{}); err != nil {
			b.Fatal(err)
		}
		retoggle += t1.Sub(t0)
		one += time.Since(t1)
	}
	b.ReportMetric(float64(retoggle)/float64(one), "retoggle/inject")
}

// BenchmarkRenderInstall renders an installation from Istio's charts, as at start.
func BenchmarkRenderInstall(b *testing.B) {
	for b.Loop() {
		if _, err := renderInstall(InstallOptions{}, InstallPolicy{}, nil); err != nil {
			b.Fatal(err)
		}
	}
}
