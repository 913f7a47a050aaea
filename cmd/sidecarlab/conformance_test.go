package main

// Conformance: sidecarlab's cluster view held against a real kube-apiserver with Istio's webhook
// and Pod Security Admission (the test cluster, cluster_test.go). Every cell asks both the same
// question and wants the same answer; where they disagree the cluster is right.
//
// The tests run in parallel with each other (each in namespaces of its own): the workloads' test
// waits up to a minute for its CronJob's first run, and the Pod matrix is asked meanwhile.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/sidecarlab/sidecarlab/admission"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/internal/testcluster"
	"github.com/sidecarlab/sidecarlab/wording"
)

// nsCell is a namespace of the matrix: its labels, and the revision whose install options
// sidecarlab is given. The cluster runs two revisions, sidecarlab models one installation; each
// cell names the one whose webhooks can select its namespace (the other's select none of its
// Pods: TestConformancePods holds that too, with sidecarlab's own selectors).
type nsCell struct {
	name   string
	labels map[string]string
	rev    testcluster.Revision
}

var conformanceNamespaces = []nsCell{
	{name: "plain", rev: testcluster.Default},
	{name: "injection-enabled", labels: map[string]string{"istio-injection": "enabled"}, rev: testcluster.Default},
	{name: "injection-disabled", labels: map[string]string{"istio-injection": "disabled"}, rev: testcluster.Default},
	{name: "rev-default", labels: map[string]string{"istio.io/rev": "default"}, rev: testcluster.Default},
	{name: "rev-missing", labels: map[string]string{"istio.io/rev": "nope"}, rev: testcluster.Default},
	{name: "rev-tag", labels: map[string]string{"istio.io/rev": "prod"}, rev: testcluster.Default},
	{name: "both-labels", labels: map[string]string{"istio-injection": "enabled", "istio.io/rev": "cni"}, rev: testcluster.Default},
	{name: "kube-system", rev: testcluster.Default},
	{name: "rev-cni", labels: map[string]string{"istio.io/rev": "cni"}, rev: testcluster.CNI},
	{name: "baseline", labels: map[string]string{"istio-injection": "enabled", "pod-security.kubernetes.io/enforce": "baseline"}, rev: testcluster.Default},
	{name: "restricted", labels: map[string]string{"istio-injection": "enabled", "pod-security.kubernetes.io/enforce": "restricted"}, rev: testcluster.Default},
	{name: "warn-audit", labels: map[string]string{"istio-injection": "enabled", "pod-security.kubernetes.io/warn": "restricted", "pod-security.kubernetes.io/audit": "baseline"}, rev: testcluster.Default},
	{name: "cni-baseline", labels: map[string]string{"istio.io/rev": "cni", "pod-security.kubernetes.io/enforce": "baseline", "pod-security.kubernetes.io/warn": "restricted"}, rev: testcluster.CNI},
	// Ambient is a namespace label no injection webhook selects on: its Pods come back as
	// written, but for the one labelled sidecar.istio.io/inject=true.
	{name: "ambient", labels: map[string]string{"istio.io/dataplane-mode": "ambient"}, rev: testcluster.Default},
}

// podCell is a Pod of the matrix.
type podCell struct {
	name        string
	labels      map[string]string
	annotations map[string]string
	hostNetwork bool
	// probe gives the container an HTTP readiness probe, which Istio rewrites (and reads with
	// the API server's defaults: ISTIO_KUBE_APP_PROBERS).
	probe bool
}

var conformancePods = []podCell{
	{name: "plain"},
	{name: "label-true", labels: map[string]string{"sidecar.istio.io/inject": "true"}},
	{name: "label-false", labels: map[string]string{"sidecar.istio.io/inject": "false"}},
	{name: "label-no", labels: map[string]string{"sidecar.istio.io/inject": "no"}},
	{name: "annotation-true", annotations: map[string]string{"sidecar.istio.io/inject": "true"}},
	{name: "annotation-false", annotations: map[string]string{"sidecar.istio.io/inject": "false"}},
	{name: "annotation-no", annotations: map[string]string{"sidecar.istio.io/inject": "no"}},
	{name: "host-network", hostNetwork: true},
	{name: "native-on", annotations: map[string]string{"sidecar.istio.io/nativeSidecar": "true"}},
	{name: "native-off", annotations: map[string]string{"sidecar.istio.io/nativeSidecar": "false"}},
	{name: "hold", annotations: map[string]string{"proxy.istio.io/config": "holdApplicationUntilProxyStarts: true"}},
	{name: "probe", probe: true},
	{name: "resources", annotations: map[string]string{"sidecar.istio.io/proxyCPU": "200m", "sidecar.istio.io/proxyMemory": "256Mi", "sidecar.istio.io/proxyCPULimit": "1", "sidecar.istio.io/proxyMemoryLimit": "1Gi"}},
}

func (p podCell) pod(namespace string) *corev1.Pod {
	labels := map[string]string{"app": p.name}
	for k, v := range p.labels {
		labels[k] = v
	}
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: p.name, Namespace: namespace, Labels: labels, Annotations: p.annotations},
		Spec: corev1.PodSpec{HostNetwork: p.hostNetwork, Containers: []corev1.Container{{
			Name: "app", Image: "nginx",
			Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
		}}},
	}
	if p.probe {
		pod.Spec.Containers[0].ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
			HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt32(8080)},
		}}
	}
	return pod
}

// manifestOf is the objects as one multi-document YAML file.
func manifestOf(t *testing.T, objs ...any) string {
	t.Helper()
	var docs []string
	for _, o := range objs {
		b, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(b))
	}
	return strings.Join(docs, "---\n")
}

// runID makes this process's namespaces its own, so that the tests can run again against the
// same cluster (make controlplane's, say) without meeting their earlier objects.
var runID = sync.OnceValue(func() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
})

// namespace makes the cell's namespace (kube-system is the cluster's own) and waits for its
// default ServiceAccount, which the controller manager makes and a Pod needs.
func (c *testCluster) namespace(t *testing.T, ns nsCell) string {
	t.Helper()
	ctx := context.Background()
	name := "c-" + ns.name + "-" + runID()
	if ns.name == "kube-system" {
		name = "kube-system"
	} else {
		_, err := c.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: ns.labels}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := c.client.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("namespace %s has no default ServiceAccount: %v", name, err)
	}
	return name
}

// warnings collects the API server's warnings (Pod Security's warn level among them).
type warnings struct {
	mu   sync.Mutex
	list []string
}

func (w *warnings) HandleWarningHeader(code int, agent, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

// dryRun is the API server's answer to a dry-run create of a Pod: the Pod it would store, or its
// refusal, and its warnings.
type dryRun struct {
	server  *corev1.Pod
	refused error
	warns   []string
}

// dryRunCreates creates each Pod with ?dryRun=All (every admission step runs, nothing is
// stored), the requests sent at once; the function it returns waits for the answers, in the
// Pods' order.
func (c *testCluster) dryRunCreates(t *testing.T, pods []*corev1.Pod) (wait func() []dryRun) {
	t.Helper()
	out := make([]dryRun, len(pods))
	var wg sync.WaitGroup
	for i, pod := range pods {
		w := &warnings{}
		cfg := rest.CopyConfig(c.cfg)
		cfg.WarningHandler = w
		client, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			got, err := client.CoreV1().Pods(pod.Namespace).Create(context.Background(), pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			out[i] = dryRun{server: got, refused: err, warns: w.list}
		})
	}
	return func() []dryRun {
		wg.Wait()
		return out
	}
}

// matrixPods are the Pods of the matrix in the namespace, in conformancePods' order.
func matrixPods(namespace string) []*corev1.Pod {
	var pods []*corev1.Pod
	for _, p := range conformancePods {
		pods = append(pods, p.pod(namespace))
	}
	return pods
}

// admitJSON is `sidecarlab admit -o json` of the manifest in the namespace (none: the documents'
// own), with the cell's labels and install options.
func admitJSON(t *testing.T, manifest, namespace string, ns nsCell) []wording.Admission {
	t.Helper()
	args := []string{"admit", "-f", "-", "--kubernetes-version", testcluster.KubernetesVersion, "-o", "json"}
	if namespace != "" {
		args = append(args, "-n", namespace)
	}
	if len(ns.labels) > 0 {
		var kv []string
		for k, v := range ns.labels {
			kv = append(kv, k+"="+v)
		}
		sort.Strings(kv)
		args = append(args, "--namespace-labels", strings.Join(kv, ","))
	}
	args = append(args, setFlags(ns.rev)...)
	out, stderr, err := runCLI(t, manifest, args...)
	if err != nil && !errors.Is(err, errSilent) {
		t.Fatalf("sidecarlab %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	var got []wording.Admission
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("sidecarlab admit -o json: %v\n%s", err, out)
	}
	return got
}

// finalPods are admission's final (defaulted) Pods of the manifest, by document (1-based).
func finalPods(t *testing.T, eng *engine.Engine, manifest, namespace string, ns nsCell) map[int]*corev1.Pod {
	t.Helper()
	adm := admission.New(eng)
	defer adm.Close()
	adm.NamespaceGiven = true
	rs, err := adm.Admit(context.Background(), []byte(manifest), nil, engine.Settings{
		KubernetesVersion: testcluster.KubernetesVersion, Install: engine.InstallOptions{Set: ns.rev.Set},
		Namespace: engine.Namespace{Name: namespace, Labels: ns.labels},
	})
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]*corev1.Pod{}
	for _, r := range rs {
		out[r.Doc] = r.Final
	}
	return out
}

func injected(p *corev1.Pod) bool {
	for _, c := range append(slices.Clone(p.Spec.InitContainers), p.Spec.Containers...) {
		if c.Name == "istio-proxy" {
			return true
		}
	}
	return false
}

// TestConformancePods: for every namespace × Pod cell, sidecarlab admit -o json says what the API
// server did (injected, admitted, Pod Security's violation and warnings, verbatim), and the Pod
// the server would store is admission's final Pod, field by field, but for the fields only the
// server adds, listed by name in serverOnlyPodFields.
func TestConformancePods(t *testing.T) {
	t.Parallel()
	c := needCluster(t)
	eng, err := engine.New(context.Background(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)
	var mu sync.Mutex // counts
	var counts struct{ injected, notInjected, rejected, audited int }
	count := func(n *int) {
		mu.Lock()
		*n++
		mu.Unlock()
	}
	for _, ns := range conformanceNamespaces {
		t.Run(ns.name, func(t *testing.T) {
			t.Parallel() // each namespace is its own
			name := c.namespace(t, ns)
			pods := matrixPods(name)
			// The API server's answers, asked while sidecarlab answers.
			serverAnswers := c.dryRunCreates(t, pods)
			var objs []any
			for _, p := range pods {
				objs = append(objs, p)
			}
			manifest := manifestOf(t, objs...)
			got := admitJSON(t, manifest, name, ns)
			finals := finalPods(t, eng, manifest, name, ns)
			// The cluster runs both revisions; sidecarlab is given one. The other's webhooks
			// must call nothing here, or the cell would be modelled with half the cluster.
			other := ns
			other.rev = testcluster.CNI
			if ns.rev.Name == testcluster.CNI.Name {
				other.rev = testcluster.Default
			}
			for _, a := range admitJSON(t, manifest, name, other) {
				for _, w := range a.Webhooks {
					if w.Called {
						t.Errorf("%s/%s: revision %s's webhook %s selects the Pod too", ns.name, a.Name, other.rev.Name, w.Name)
					}
				}
			}
			if len(got) != len(conformancePods) {
				t.Fatalf("admit answered for %d documents, want %d", len(got), len(conformancePods))
			}
			webhookMode := webhookModePods(t, manifest, ns)
			answers := serverAnswers()
			for i, p := range conformancePods {
				a := got[i]
				server, refused, warns := answers[i].server, answers[i].refused, answers[i].warns
				cell := fmt.Sprintf("%s/%s", ns.name, p.name)
				if a.Error != "" {
					t.Errorf("%s: sidecarlab: %s", cell, a.Error)
					continue
				}
				if refused != nil {
					if a.Admitted {
						t.Errorf("%s: the API server refused the Pod (%v); sidecarlab admitted it", cell, refused)
						continue
					}
					// Pod Security's message as the API server words a refusal: "pods "NAME" is
					// forbidden: violates PodSecurity …".
					count(&counts.rejected)
					if refused.Error() != first(a.Violations) {
						t.Errorf("%s: refused:\n server:     %s\n sidecarlab: %s", cell, refused, first(a.Violations))
					}
				} else {
					if !a.Admitted {
						t.Errorf("%s: the API server admitted the Pod; sidecarlab rejected it: %q", cell, a.Violations)
						continue
					}
					if injected(server) {
						count(&counts.injected)
					} else {
						count(&counts.notInjected)
					}
					if a.Injected != injected(server) {
						t.Errorf("%s: injected: server %v, sidecarlab %v", cell, injected(server), a.Injected)
					}
					// In an ambient namespace the API server returns the Pod as written (no
					// webhook selects on istio.io/dataplane-mode) but for the one that asks
					// for a sidecar with the label.
					if ns.name == "ambient" && (p.name == "plain" || p.name == "label-true") && injected(server) != (p.name == "label-true") {
						t.Errorf("%s: the API server injected %v", cell, injected(server))
					}
					if diffs := comparePods(finals[i+1], server, serverOnlyPodFields); len(diffs) > 0 {
						t.Errorf("%s: admission's final Pod and the server's differ:\n  %s", cell, strings.Join(diffs, "\n  "))
					}
					if injected(server) {
						if diffs := compareWebhookMode(webhookMode[i], finals[i+1], server); len(diffs) > 0 {
							t.Errorf("%s: sidecarlab inject --kubernetes-version %s and the server's Pod differ:\n  %s", cell, testcluster.KubernetesVersion, strings.Join(diffs, "\n  "))
						}
					}
				}
				if !slices.Equal(warns, a.Warnings) {
					t.Errorf("%s: warnings:\n server:     %q\n sidecarlab: %q", cell, warns, a.Warnings)
				}
			}
			// Pod Security's audit level: the API server writes its verdict in the audit log.
			audits := c.auditViolations(t, name)
			for i, p := range conformancePods {
				var ours string
				for _, v := range got[i].Violations {
					if strings.HasPrefix(v, "would violate PodSecurity") {
						ours = v
					}
				}
				if audits[p.name] != ours {
					t.Errorf("%s/%s: audit-level violations:\n server:     %q\n sidecarlab: %q", ns.name, p.name, audits[p.name], ours)
				}
				if ours != "" {
					count(&counts.audited)
				}
			}
		})
	}
	// The matrix is not vacuous: the cluster injected some Pods, left some alone and refused
	// some; and every excuse for a field only the server writes was needed. (Once every
	// namespace's subtest, run in parallel, has ended.)
	t.Cleanup(func() {
		t.Logf("%d cells: %d injected, %d not injected, %d refused; %d with audit-level violations", len(conformanceNamespaces)*len(conformancePods), counts.injected, counts.notInjected, counts.rejected, counts.audited)
		if counts.injected < 20 || counts.notInjected < 20 || counts.rejected < 20 || counts.audited < 5 {
			t.Errorf("the matrix hardly varies: %+v", counts)
		}
		if !t.Failed() {
			for _, path := range serverOnlyPodFields.unused() {
				t.Errorf("serverOnlyPodFields: %q matched no field of any Pod; remove it", path)
			}
		}
	})
}

// webhookModePods are `sidecarlab inject --kubernetes-version` of the manifest (Istio's webhook,
// without the API server's defaults), by document.
func webhookModePods(t *testing.T, manifest string, ns nsCell) []*corev1.Pod {
	t.Helper()
	args := append([]string{"inject", "-f", "-", "--kubernetes-version", testcluster.KubernetesVersion}, setFlags(ns.rev)...)
	out, stderr, err := runCLI(t, manifest, args...)
	if err != nil {
		t.Fatalf("sidecarlab %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	var pods []*corev1.Pod
	for _, doc := range strings.Split(out, "\n---\n") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		p := &corev1.Pod{}
		if err := yaml.Unmarshal([]byte(doc), p); err != nil {
			t.Fatal(err)
		}
		pods = append(pods, p)
	}
	return pods
}

// compareWebhookMode holds the webhook-mode Pod to the server's: each of its fields is the
// server's, and each field only the server has is one of the API server's defaults (admission's
// final Pod has it, with that value) or one of serverOnlyPodFields.
func compareWebhookMode(webhook, final, server *corev1.Pod) []string {
	server = server.DeepCopy()
	server.TypeMeta = webhook.TypeMeta
	w, f, s := flatten(webhook), flatten(final), flatten(server)
	var out []string
	for k, v := range w {
		switch sv, ok := s[k]; {
		case !ok:
			out = append(out, "only sidecarlab's: "+k+" = "+v)
		case sv != v:
			out = append(out, "differs: "+k+": sidecarlab "+v+", server "+sv)
		}
	}
	for k, v := range s {
		if _, ok := w[k]; ok || serverOnlyPodFields.excused(k) {
			continue
		}
		if fv, ok := f[k]; !ok || fv != v {
			out = append(out, "only the server's, and not a default: "+k+" = "+v)
		}
	}
	sort.Strings(out)
	return out
}

// auditViolations are Pod Security's audit-level verdicts on the Pods created (dry runs) in the
// namespace, by Pod name, from the API server's audit log (audit.log beside the kubeconfig; the
// control plane's launcher writes one).
func (c *testCluster) auditViolations(t *testing.T, namespace string) map[string]string {
	t.Helper()
	path := filepath.Join(filepath.Dir(c.kubeconfig), "audit.log")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the API server's audit log (Pod Security's audit level is only written there): %v", err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		var ev struct {
			Stage     string `json:"stage"`
			Verb      string `json:"verb"`
			ObjectRef struct {
				Namespace string `json:"namespace"`
				Name      string `json:"name"`
			} `json:"objectRef"`
			Annotations map[string]string `json:"annotations"`
		}
		if json.Unmarshal([]byte(line), &ev) != nil || ev.Stage != "ResponseComplete" || ev.Verb != "create" || ev.ObjectRef.Namespace != namespace {
			continue
		}
		if v := ev.Annotations["pod-security.kubernetes.io/audit-violations"]; v != "" {
			out[ev.ObjectRef.Name] = v
		}
	}
	return out
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// serverFields are fields of a created Pod that only the API server (or a controller) writes,
// each with why. A path matches with * standing for any text; every other field must be equal.
// Each list counts what it excused: an entry that excused nothing is stale (see unused).
type serverFields struct {
	fields []struct{ path, why string }
	mu     sync.Mutex
	res    []*regexp.Regexp
	used   []int
}

func excuses(fields ...struct{ path, why string }) *serverFields {
	f := &serverFields{fields: fields, used: make([]int, len(fields))}
	for _, e := range fields {
		f.res = append(f.res, regexp.MustCompile(`^`+strings.ReplaceAll(regexp.QuoteMeta(e.path), `\*`, `.*`)+`$`))
	}
	return f
}

func (f *serverFields) excused(path string) bool {
	for i, re := range f.res {
		if re.MatchString(path) {
			f.mu.Lock()
			f.used[i]++
			f.mu.Unlock()
			return true
		}
	}
	return false
}

// unused are the entries that excused no field.
func (f *serverFields) unused() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for i, e := range f.fields {
		if f.used[i] == 0 {
			out = append(out, e.path)
		}
	}
	return out
}

// serverOnlyPodFields are what the API server adds to every Pod it creates.
var serverOnlyPodFields = excuses([]struct{ path, why string }{
	{"metadata.uid", "the server names the object"},
	{"metadata.creationTimestamp", "the server's clock"},
	{"metadata.generation", "the server counts spec changes from 1"},
	{"metadata.managedFields*", "server-side apply's field ownership"},
	{"status.phase", "the Pod registry's strategy: Pending until a kubelet runs it"},
	{"status.qosClass", "the Pod registry's strategy computes the QoS class"},
	{"spec.serviceAccountName", `the ServiceAccount admission plugin: "default" when none is named`},
	{"spec.serviceAccount", "the deprecated copy of serviceAccountName"},
	{"spec.volumes[kube-api-access-*", "the ServiceAccount admission plugin's token volume"},
	{"spec.*ontainers[*].volumeMounts[kube-api-access-*", "its mount in every container: the API server runs the built-in plugins again after a webhook added containers, so Istio's get it too"},
	{"spec.tolerations[*", "the DefaultTolerationSeconds admission plugin (not-ready and unreachable, 300 s)"},
	{"spec.priority", "the Priority admission plugin: the default priority class's value, 0"},
	{"spec.preemptionPolicy", "the Priority admission plugin: PreemptLowerPriority"},
}...)

// comparePods lists the fields where sidecarlab's Pod and the server's differ, but for the
// excused ones.
func comparePods(ours, server *corev1.Pod, ex ...*serverFields) []string {
	server = server.DeepCopy()
	server.TypeMeta = ours.TypeMeta // a typed client drops the kind
	excused := func(path string) bool {
		for _, e := range ex {
			if e.excused(path) {
				return true
			}
		}
		return false
	}
	a, b := flatten(ours), flatten(server)
	var out []string
	for k, v := range a {
		sv, ok := b[k]
		switch {
		case !ok:
			out = append(out, "only sidecarlab's: "+k+" = "+v)
		case sv != v && !excused(k):
			out = append(out, "differs: "+k+": sidecarlab "+v+", server "+sv)
		}
	}
	for k, v := range b {
		if _, ok := a[k]; !ok && !excused(k) {
			out = append(out, "only the server's: "+k+" = "+v)
		}
	}
	sort.Strings(out)
	return out
}

// flatten is the object's leaves by path; list elements with a name are keyed by it
// (spec.containers[istio-proxy].env[ISTIO_META_WORKLOAD_NAME].value), others by index.
func flatten(obj any) map[string]string {
	b, _ := json.Marshal(obj)
	var v any
	_ = json.Unmarshal(b, &v)
	out := map[string]string{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x { // an empty object is no field
				p := k
				if prefix != "" {
					p = prefix + "." + k
				}
				walk(p, e)
			}
		case []any:
			for i, e := range x {
				key := fmt.Sprint(i)
				if m, ok := e.(map[string]any); ok {
					if n, ok := m["name"].(string); ok {
						key = n
					}
				}
				walk(prefix+"["+key+"]", e)
			}
		default:
			s, _ := json.Marshal(x)
			out[prefix] = string(s)
		}
	}
	walk("", v)
	return out
}

// workloadNamespaces are the namespaces the controllers' Pods are tried in: not injected,
// injected, injected by the CNI revision, and refused by Pod Security.
var workloadNamespaces = []nsCell{
	{name: "plain", rev: testcluster.Default},
	{name: "injection-enabled", labels: map[string]string{"istio-injection": "enabled"}, rev: testcluster.Default},
	{name: "rev-cni", labels: map[string]string{"istio.io/rev": "cni"}, rev: testcluster.CNI},
	{name: "baseline", labels: map[string]string{"istio-injection": "enabled", "pod-security.kubernetes.io/enforce": "baseline"}, rev: testcluster.Default},
}

// workloads are a Deployment, a Job and a CronJob (every minute) in the namespace.
func workloads(namespace string) []any {
	template := func(name string, restart corev1.RestartPolicy) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
			Spec: corev1.PodSpec{RestartPolicy: restart, Containers: []corev1.Container{{
				Name: "app", Image: "nginx", Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
			}}},
		}
	}
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Namespace: namespace} }
	one, none := int32(1), int32(0)
	return []any{
		&appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}, ObjectMeta: meta("web"),
			Spec: appsv1.DeploymentSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, Template: template("web", corev1.RestartPolicyAlways)}},
		&batchv1.Job{TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"}, ObjectMeta: meta("task"),
			Spec: batchv1.JobSpec{BackoffLimit: &none, Template: template("task", corev1.RestartPolicyNever)}},
		&batchv1.CronJob{TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "CronJob"}, ObjectMeta: meta("nightly"),
			Spec: batchv1.CronJobSpec{Schedule: "* * * * *", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{BackoffLimit: &none, Template: template("nightly", corev1.RestartPolicyNever)}}}},
	}
}

// workloadPodFields are what the controllers write into the Pods they make that sidecarlab
// cannot know: names with random parts and the owners' uids.
var workloadPodFields = excuses([]struct{ path, why string }{
	{"metadata.name", "the API server's name from generateName (random suffix)"},
	{"metadata.resourceVersion", "the stored object's version (these Pods are created, not dry-run)"},
	{"metadata.ownerReferences[*].uid", "the owner's uid"},
	{"metadata.labels.batch.kubernetes.io/controller-uid", "the Job's uid"},
	{"metadata.labels.controller-uid", "the Job's uid (the older label)"},
	{"metadata.finalizers[0]", "the Job controller's batch.kubernetes.io/job-tracking finalizer"},
}...)

// TestConformanceWorkloads: the Pods the controllers make from a Deployment (through its
// ReplicaSet), a Job and a CronJob (at its first scheduled minute) are the Pods sidecarlab
// predicts, admitted or refused as it says: a refusal is the ReplicaSet's or Job's FailedCreate
// event, with Pod Security's message. These are created for real (a dry run makes no children).
func TestConformanceWorkloads(t *testing.T) {
	t.Parallel()
	c := needCluster(t)
	eng, err := engine.New(context.Background(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	type cell struct {
		ns        nsCell
		namespace string
		admission wording.Admission
		final     *corev1.Pod
		kind      string
		app       string
	}
	var cells []cell
	ctx := context.Background()
	for _, ns := range workloadNamespaces {
		ns.name = "w-" + ns.name
		name := c.namespace(t, ns)
		objs := workloads(name)
		manifest := manifestOf(t, objs...)
		got := admitJSON(t, manifest, name, ns)
		finals := finalPods(t, eng, manifest, name, ns)
		for i, o := range objs {
			if _, err := c.createObject(ctx, o); err != nil {
				t.Fatal(err)
			}
			app := o.(metav1.Object).GetName()
			cells = append(cells, cell{ns: ns, namespace: name, admission: got[i], final: finals[i+1], kind: got[i].Kind, app: app})
		}
	}
	for _, cl := range cells {
		cellName := cl.ns.name + "/" + cl.kind
		pod, event, owner, err := c.waitPodOrRefusal(ctx, cl.namespace, cl.app)
		if err != nil {
			t.Errorf("%s: %v", cellName, err)
			continue
		}
		a := cl.admission
		if a.Error != "" {
			t.Errorf("%s: sidecarlab: %s", cellName, a.Error)
			continue
		}
		if event != "" {
			if a.Admitted {
				t.Errorf("%s: the controller could not create the Pod (%s); sidecarlab admitted it", cellName, event)
				continue
			}
			// The event names the Pod the controller tried to create, OWNER-xxxxx; sidecarlab
			// names it with placeholders for the template hash or scheduled minute and the
			// random suffix.
			got := regexp.MustCompile(`pods "`+regexp.QuoteMeta(owner)+`-[a-z0-9]{5}"`).ReplaceAllString(event, `pods "`+owner+`-<random>"`)
			want := "Error creating: " + first(a.Violations)
			if _, suffix, ok := strings.Cut(owner, "-"); ok {
				want = strings.NewReplacer("<hash>", suffix, "29000000", suffix).Replace(want)
			}
			if got != want {
				t.Errorf("%s: FailedCreate:\n controller: %s\n sidecarlab: %s", cellName, got, want)
			}
			continue
		}
		if !a.Admitted {
			t.Errorf("%s: the controller created %s; sidecarlab rejected it: %q", cellName, pod.Name, a.Violations)
			continue
		}
		if a.Injected != injected(pod) {
			t.Errorf("%s: injected: cluster %v, sidecarlab %v", cellName, injected(pod), a.Injected)
		}
		ours, err := withControllerNames(cl.final, pod)
		if err != nil {
			t.Fatal(err)
		}
		if diffs := comparePods(ours, pod, serverOnlyPodFields, workloadPodFields); len(diffs) > 0 {
			t.Errorf("%s: admission's final Pod and %s differ:\n  %s", cellName, pod.Name, strings.Join(diffs, "\n  "))
		}
	}
	if !t.Failed() {
		for _, path := range workloadPodFields.unused() {
			t.Errorf("workloadPodFields: %q matched no field of any Pod; remove it", path)
		}
	}
}

// withControllerNames is sidecarlab's Pod with its placeholders for what a controller puts in a
// name (the ReplicaSet's template hash, a CronJob's scheduled minute) replaced by the values the
// controller used, read from the cluster's Pod.
func withControllerNames(ours, server *corev1.Pod) (*corev1.Pod, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(ours); err != nil {
		return nil, err
	}
	s := buf.String()
	if h, ok := server.Labels["pod-template-hash"]; ok {
		s = strings.ReplaceAll(s, "<hash>", h)
	}
	if job := server.Labels["job-name"]; job != "" {
		if i := strings.LastIndexByte(job, '-'); i >= 0 {
			s = strings.ReplaceAll(s, "29000000", job[i+1:])
		}
	}
	out := &corev1.Pod{}
	return out, json.Unmarshal([]byte(s), out)
}

// createObject creates a Deployment, Job or CronJob.
func (c *testCluster) createObject(ctx context.Context, o any) (metav1.Object, error) {
	switch o := o.(type) {
	case *appsv1.Deployment:
		return c.client.AppsV1().Deployments(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	case *batchv1.Job:
		return c.client.BatchV1().Jobs(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	case *batchv1.CronJob:
		return c.client.BatchV1().CronJobs(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	}
	return nil, fmt.Errorf("createObject: %T", o)
}

// waitPodOrRefusal waits for the Pod labelled app=APP in the namespace, or for a controller's
// FailedCreate event for it (a ReplicaSet or Job named after APP: its message and that owner's
// name), for up to 3 minutes (a CronJob's first run is up to a minute away).
func (c *testCluster) waitPodOrRefusal(ctx context.Context, namespace, app string) (pod *corev1.Pod, event, owner string, err error) {
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := c.client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: "app=" + app})
		if err != nil {
			return false, err
		}
		if len(pods.Items) > 0 {
			pod = &pods.Items[0]
			return true, nil
		}
		events, err := c.client.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{FieldSelector: "reason=FailedCreate"})
		if err != nil {
			return false, err
		}
		for _, e := range events.Items {
			if strings.HasPrefix(e.InvolvedObject.Name, app+"-") || e.InvolvedObject.Name == app {
				event, owner = e.Message, e.InvolvedObject.Name
				return true, nil
			}
		}
		return false, nil
	})
	return pod, event, owner, err
}

// kubectl runs the kubectl built with the control plane (SIDECARLAB_TEST_KUBECTL, or where `make
// controlplane-bin` puts it) against the test cluster; it returns stdout and stderr.
func (c *testCluster) kubectl(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	exe := os.Getenv("SIDECARLAB_TEST_KUBECTL")
	if exe == "" {
		home, _ := os.UserHomeDir()
		exe = filepath.Join(home, ".cache", "sidecarlab", "controlplane-1.36.1", "kubectl")
	}
	if _, err := os.Stat(exe); err != nil {
		t.Fatalf("kubectl (SIDECARLAB_TEST_KUBECTL): %v", err)
	}
	cmd := exec.Command(exe, append([]string{"--kubeconfig", c.kubeconfig}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(stdin), &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

// TestConformanceKubectlReadsTheFile: what `kubectl create -f` makes of a file before any
// admission step, where admit once answered otherwise — a namespace given that a document
// contradicts, a List's items, a Namespace document's labels — asked of the real kubectl and API
// server. (A Volcano Job, the fourth such case, needs Volcano's CRD and controller, which this
// cluster has not; TestAsKubectlReadsTheFile in package admission holds admit's answer.)
func TestConformanceKubectlReadsTheFile(t *testing.T) {
	t.Parallel()
	c := needCluster(t)
	enabled := c.namespace(t, nsCell{name: "kubectl", labels: map[string]string{"istio-injection": "enabled"}})
	pod := func(t *testing.T, namespace string) string {
		return manifestOf(t, (podCell{name: "web"}).pod(namespace))
	}

	t.Run("a namespace given that the document contradicts", func(t *testing.T) {
		t.Parallel()
		_, stderr, err := c.kubectl(t, pod(t, "elsewhere"), "create", "--dry-run=server", "-n", enabled, "-f", "-")
		if err == nil {
			t.Fatal("kubectl created it")
		}
		got := admitJSON(t, pod(t, "elsewhere"), enabled, nsCell{labels: map[string]string{"istio-injection": "enabled"}, rev: testcluster.Default})
		if want := strings.TrimSpace(strings.TrimPrefix(stderr, "error: ")); len(got) != 1 || got[0].Error != want {
			t.Errorf("kubectl: %s\nsidecarlab: %+v", want, got)
		}
	})

	t.Run("a List", func(t *testing.T) {
		t.Parallel()
		list := "apiVersion: v1\nkind: List\nitems:\n" + indentItem(pod(t, enabled))
		out, stderr, err := c.kubectl(t, list, "create", "--dry-run=server", "-o", "json", "-f", "-")
		if err != nil {
			t.Fatalf("kubectl: %v\n%s", err, stderr)
		}
		var created corev1.Pod
		if err := json.Unmarshal([]byte(out), &created); err != nil {
			// kubectl prints a List when it created several objects, the object when one.
			t.Fatalf("kubectl's output: %v\n%s", err, out)
		}
		got := admitJSON(t, list, enabled, nsCell{labels: map[string]string{"istio-injection": "enabled"}, rev: testcluster.Default})
		if len(got) != 1 || got[0].Error != "" || got[0].Injected != injected(&created) || !injected(&created) {
			t.Errorf("kubectl injected %v; sidecarlab: %+v", injected(&created), got)
		}
	})

	t.Run("a Namespace document", func(t *testing.T) {
		t.Parallel()
		name := "c-nsdoc-" + runID()
		ns := &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"istio-injection": "enabled"}}}
		// A Deployment, not a Pod: its controller waits for the namespace's default
		// ServiceAccount, which a Pod created right after its namespace may not find yet.
		file := manifestOf(t, ns, workloads(name)[0])
		if _, stderr, err := c.kubectl(t, file, "create", "-f", "-"); err != nil {
			t.Fatalf("kubectl: %v\n%s", err, stderr)
		}
		created, event, _, err := c.waitPodOrRefusal(context.Background(), name, "web")
		if err != nil || event != "" {
			t.Fatalf("the Deployment's Pod: %v %s", err, event)
		}
		// No --namespace nor --namespace-labels: the labels come from the file's Namespace
		// document.
		got := admitJSON(t, file, "", nsCell{rev: testcluster.Default})
		if len(got) != 2 || got[1].Injected != injected(created) || !injected(created) {
			t.Errorf("the cluster injected %v; sidecarlab: %+v", injected(created), got)
		}
	})
}

// indentItem is one YAML document as an item of a List's items.
func indentItem(doc string) string {
	lines := strings.Split(strings.TrimRight(doc, "\n"), "\n")
	for i, l := range lines {
		if i == 0 {
			lines[i] = "- " + l
		} else {
			lines[i] = "  " + l
		}
	}
	return strings.Join(lines, "\n") + "\n"
}
