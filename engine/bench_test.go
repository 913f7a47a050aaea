package engine

import (
	"bytes"
	"context"
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/sidecarlab/sidecarlab/engine/input"

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
	after := mustInject(b, e, deploy, []input.Step{{Key: "proxy.istio.io/config", Value: "holdApplicationUntilProxyStarts: true"}}, Settings{}).Documents
	for b.Loop() {
		if changes, _ := DiffDocuments(b.Context(), before, after, "hold"); len(changes) == 0 {
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
	steps := append([]input.Step(nil), eightSteps...)
	if _, err := e.Timeline(ctx, deploy, steps, Settings{}); err != nil {
		b.Fatal(err)
	}
	var one, retoggle time.Duration
	for b.Loop() {
		steps[7] = input.Step{Key: "sidecar.istio.io/proxyCPULimit", Value: fmt.Sprintf("%dm", 1000+retoggleSeq.Add(1))}
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

// fleetAnnotations are the pod annotations the fleet's workloads cycle through: none, the lab's
// common changes, and one that turns injection off.
var fleetAnnotations = []string{
	"",
	"sidecar.istio.io/proxyCPU: 200m\n        sidecar.istio.io/proxyMemory: 256Mi\n",
	"proxy.istio.io/config: 'holdApplicationUntilProxyStarts: true'\n",
	"traffic.sidecar.istio.io/excludeOutboundPorts: '3306,6379'\n",
	"sidecar.istio.io/inject: 'false'\n",
	"sidecar.istio.io/nativeSidecar: 'true'\n",
	"proxy.istio.io/config: 'concurrency: 2'\n",
	"sidecar.istio.io/proxyCPULimit: 1500m\n        traffic.sidecar.istio.io/excludeInboundPorts: '9090'\n",
}

// fleet is n workloads joined as one multi-document manifest, the same for the same n: the
// seed's "2,000 pods" fleet, a cycle of Deployments, Jobs and StatefulSets (1 to 5 replicas)
// across seven namespaces, each with one of fleetAnnotations.
func fleet(n int) []byte {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString("---\n")
		}
		name, ns := fmt.Sprintf("fleet-%04d", i), fmt.Sprintf("team-%d", i%7)
		ann := fleetAnnotations[(i/3)%len(fleetAnnotations)]
		podMeta := fmt.Sprintf("    metadata:\n      labels: {app: %s}\n", name)
		if ann != "" {
			podMeta += "      annotations:\n        " + ann
		}
		restart := ""
		switch i % 3 {
		case 0:
			fmt.Fprintf(&b, "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n  replicas: %d\n  selector:\n    matchLabels: {app: %s}\n", name, ns, 1+i%5, name)
		case 1:
			fmt.Fprintf(&b, "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n  parallelism: %d\n", name, ns, 1+i%5)
			restart = "      restartPolicy: Never\n"
		case 2:
			fmt.Fprintf(&b, "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n  serviceName: %s\n  replicas: %d\n  selector:\n    matchLabels: {app: %s}\n", name, ns, name, 1+i%5, name)
		}
		fmt.Fprintf(&b, "  template:\n%s    spec:\n%s      containers:\n      - name: app\n        image: registry.example/app:%d\n        ports:\n        - containerPort: 8080\n", podMeta, restart, i%10)
	}
	return []byte(b.String())
}

var writeFleet = flag.String("write-fleet", "", "TestFleet writes the benchmark's 2,000-workload fleet to this file (for the CLI comparison in BENCHMARKS.md)")

// TestFleet: the benchmark's fleet is the same every time, 2,000 documents that all decode, of
// each kind and each annotation, as it says; -write-fleet FILE writes it out for the CLIs.
func TestFleet(t *testing.T) {
	f := fleet(2000)
	if !bytes.Equal(f, fleet(2000)) {
		t.Fatal("the fleet differs from one call to the next")
	}
	docs, err := splitDocuments(f)
	if err != nil || len(docs) != 2000 {
		t.Fatalf("%d documents, %v", len(docs), err)
	}
	kinds := map[string]int{}
	variants := map[string]int{}
	for _, d := range docs {
		obj, err := inject.FromRawToObject(d.raw)
		if err != nil {
			t.Fatalf("line %d: %v", d.line, err)
		}
		kinds[obj.GetObjectKind().GroupVersionKind().Kind]++
		read, _, _, ok := podParts(obj)
		if !ok {
			t.Fatalf("line %d: no pod template", d.line)
		}
		variants[fmt.Sprint(read.Annotations)]++
	}
	if len(kinds) != 3 || len(variants) != len(fleetAnnotations) {
		t.Fatalf("kinds %v, annotation sets %v", kinds, variants)
	}
	if *writeFleet != "" {
		if err := os.WriteFile(*writeFleet, f, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// BenchmarkBatchFleet streams the fleet (500 and 2,000 workloads) through BatchStream on
// GOMAXPROCS workers, writing CSV rows to nowhere as the CLI writes them, and reports:
//   - batch/ideal: the batch's wall time against 2,000 × one inject ÷ GOMAXPROCS (goal ≤ 1.1),
//     where one inject is what `istioctl kube-inject` (and `sidecarlab inject`) does with one of
//     the fleet's documents alone: Engine.Inject and its output as YAML, measured on every
//     document, one after another, in the same iteration (so both see the same machine). The
//     batch writes rows, not YAML, so it does not make the YAML (Document.Output);
//   - cores-used: the process's CPU time during the batch over its wall time — near GOMAXPROCS
//     when the batch had the machine, lower when other work took the cores (then batch/ideal
//     says nothing about the batch);
//   - batch-cpu/serial-cpu: the CPU time of the batch over that of the one-at-a-time injections,
//     which a busy machine hardly moves: above 1 is what running concurrently costs (locks,
//     hand-offs, GC), and batch/ideal cannot be better than it on an idle machine;
//   - peak-heap-MB: the most heap its objects held while the batch ran (HeapAlloc, sampled every 5 ms through
//     runtime/metrics, which does not stop the world), and base-heap-MB before it: bounded
//     memory is a peak that stays flat from 500 to 2,000 workloads.
//
// The "whole" sub-benchmarks run the same fleet the old way, Engine.Inject of the whole manifest
// then Batch, holding every output, for the peak heap to compare.
func BenchmarkBatchFleet(b *testing.B) {
	e := testEngine(b)
	ctx := context.Background()
	for _, n := range []int{500, 2000} {
		manifest := fleet(n)
		docs, err := splitDocuments(manifest)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("stream/workloads=%d", n), func(b *testing.B) {
			var batch, serial, cpu, serialCPU time.Duration
			var peak, base uint64
			for b.Loop() {
				t0, c0 := time.Now(), cpuTime()
				for _, d := range docs {
					r, err := e.Inject(ctx, d.raw, nil, Settings{})
					if err != nil {
						b.Fatal(err)
					}
					_ = r.Output()
				}
				serial += time.Since(t0)
				serialCPU += cpuTime() - c0
				p, bh := peakHeap(func() {
					t1, c1 := time.Now(), cpuTime()
					s, err := e.NewBatchStream(ctx, manifest, nil, Settings{})
					if err != nil {
						b.Fatal(err)
					}
					// Rows as CSV, as the batch command writes them (through report.BatchWriter,
					// which engine's tests cannot import: report imports engine).
					w := csv.NewWriter(io.Discard)
					rows := 0
					if err := s.Run(ctx, func(it BatchItem) error { rows++; return w.Write(it.Row.Cells()) }); err != nil {
						b.Fatal(err)
					}
					w.Flush()
					batch += time.Since(t1)
					cpu += cpuTime() - c1
					if rows != n {
						b.Fatalf("%d rows, want %d", rows, n)
					}
				})
				peak, base = max(peak, p), max(base, bh)
			}
			procs := float64(runtime.GOMAXPROCS(0))
			b.ReportMetric(float64(batch.Milliseconds())/float64(b.N), "batch-ms/op")
			b.ReportMetric(float64(serial.Microseconds())/1000/float64(b.N*n), "one-inject-ms")
			b.ReportMetric(float64(batch)/(float64(serial)/procs), "batch/ideal")
			b.ReportMetric(float64(cpu)/float64(batch), "cores-used")
			b.ReportMetric(float64(cpu)/float64(serialCPU), "batch-cpu/serial-cpu")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
			b.ReportMetric(float64(base)/(1<<20), "base-heap-MB")
		})
		b.Run(fmt.Sprintf("whole/workloads=%d", n), func(b *testing.B) {
			var peak uint64
			for b.Loop() {
				p, _ := peakHeap(func() {
					r, err := e.Inject(ctx, manifest, nil, Settings{})
					if err != nil {
						b.Fatal(err)
					}
					var buf bytes.Buffer
					w := csv.NewWriter(&buf)
					for _, row := range Batch(r.Documents, r.Findings) {
						_ = w.Write(row.Cells())
					}
					if w.Flush(); buf.Len() == 0 {
						b.Fatal("no rows")
					}
				})
				peak = max(peak, p)
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
		})
	}
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakHeap runs f after a GC and returns the most heap its objects held while it ran (HeapAlloc,
// read through runtime/metrics), sampled every 5 ms, and what they held before it.
func peakHeap(f func()) (peak, base uint64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	runtime.GC()
	base = read()
	peak = base
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				peak = max(peak, read())
			}
		}
	}()
	f()
	close(stop)
	<-done
	return max(peak, read()), base
}

// BenchmarkNew is the engine's start: what `serve` does between listening and /readyz, and
// every CLI command before its first injection.
func BenchmarkNew(b *testing.B) {
	for b.Loop() {
		e, err := New(context.Background(), Options{})
		if err != nil {
			b.Fatal(err)
		}
		e.Close()
	}
}

// BenchmarkWebhookModeDefaults is one Deployment through Istio's injector in webhook mode, as
// written (as Istio's own test runs it) and as a cluster's webhook sees it (the API server's
// defaults applied first, and the untouched ones taken out of the result): the cost of the
// second, per document.
func BenchmarkWebhookModeDefaults(b *testing.B) {
	e := testEngine(b)
	obj, err := inject.FromRawToObject(readFile(b, "testdata/corpus/deployment.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	inj, err := e.clusters.injectorFor(Settings{Mode: ModeWebhook, KubernetesVersion: "1.34"}, e.def)
	if err != nil {
		b.Fatal(err)
	}
	written := *inj.(*webhookInjector)
	written.asWritten = true
	for _, c := range []struct {
		name string
		inj  inject.Injector
	}{{"as-written", &written}, {"defaulted", inj}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, _, _, err := intoObject(context.Background(), e.def, c.inj, obj.DeepCopyObject()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkOwnMesh is the first request with a pasted mesh (a revision's ConfigMaps as kubectl
// prints them, ~110 KB): reading them, compacting them as a link keeps them, and building the
// installation from the compacted mesh (parsing its config, values and mesh config; the
// templates are Istio's, put back). Later requests with the same mesh find it in the cache.
func BenchmarkOwnMesh(b *testing.B) {
	e := testEngine(b)
	in, err := e.Install(b.Context(), InstallOptions{Set: []string{"revision=canary"}})
	if err != nil {
		b.Fatal(err)
	}
	paste := configMap("istio-sidecar-injector-canary", nil, "config", in.InjectorConfig, "values", in.Values) + "---\n" +
		configMap("istio-canary", nil, "mesh", in.MeshConfigYAML)
	b.ReportMetric(float64(len(paste)), "paste-bytes")
	for b.Loop() {
		read, err := ParseMeshConfigMaps([]byte(paste))
		if err != nil {
			b.Fatal(err)
		}
		o := InstallOptions{Mesh: CompactMesh(read.Mesh), Revision: read.Revision}
		if _, err := e.finishInstall(o, o.Mesh.over(e.def.configMaps()), e.def.rawTemplates); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBatchPods: what the CLI's batch adds when the installation has a ztunnel — reading
// every document once before any is injected (BatchStream.Pods), for the ztunnel share's count
// of the pods in ambient — against the batch itself, in the same iteration under the ambient
// profile: pods-cpu/batch-cpu is the share of CPU time the pre-pass adds (a busy machine hardly
// moves a ratio of CPU times).
func BenchmarkBatchPods(b *testing.B) {
	e := testEngine(b)
	ctx := context.Background()
	manifest := fleet(2000)
	s := Settings{Install: InstallOptions{Set: []string{AmbientProfile}}}
	var podsCPU, batchCPU time.Duration
	for b.Loop() {
		st, err := e.NewBatchStream(ctx, manifest, nil, s)
		if err != nil {
			b.Fatal(err)
		}
		c0 := cpuTime()
		rows, err := st.Pods(ctx)
		if err != nil || len(rows) != 2000 {
			b.Fatalf("%d rows, %v", len(rows), err)
		}
		c1 := cpuTime()
		if err := st.Run(ctx, func(BatchItem) error { return nil }); err != nil {
			b.Fatal(err)
		}
		podsCPU += c1 - c0
		batchCPU += cpuTime() - c1
	}
	b.ReportMetric(float64(podsCPU.Milliseconds())/float64(b.N), "pods-cpu-ms/op")
	b.ReportMetric(float64(batchCPU.Milliseconds())/float64(b.N), "batch-cpu-ms/op")
	b.ReportMetric(float64(podsCPU)/float64(batchCPU), "pods-cpu/batch-cpu")
}

// BenchmarkExplainOverhead measures where-each-field-came-from (Explain: the injection again with
// Istio's templates observed, each template run traced, every leaf attributed) against one plain
// inject of the same Deployment, alternately in one loop, and reports the ratio (issue 45: at
// most 2×).
func BenchmarkExplainOverhead(b *testing.B) {
	e := testEngine(b)
	deploy := readFile(b, "testdata/corpus/lab-base.yaml")
	ctx := context.Background()
	var plain, explained time.Duration
	for b.Loop() {
		t0 := time.Now()
		if _, err := e.Inject(ctx, deploy, nil, Settings{}); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := e.Explain(ctx, deploy, nil, Settings{}); err != nil {
			b.Fatal(err)
		}
		plain += t1.Sub(t0)
		explained += time.Since(t1)
	}
	b.ReportMetric(float64(plain.Nanoseconds())/float64(b.N), "inject-ns/op")
	b.ReportMetric(float64(explained.Nanoseconds())/float64(b.N), "explain-ns/op")
	b.ReportMetric(float64(explained)/float64(plain), "explain/inject")
}
