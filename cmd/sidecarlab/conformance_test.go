package main

// Conformance: sidecarlab's cluster view held against a real kube-apiserver with Istio's webhook
// and Pod Security Admission (the test cluster, cluster_test.go). Every cell asks both the same
// question and wants the same answer; where they disagree the cluster is right.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/sidecarlab/sidecarlab/admission"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/explain"
)

// nsCell is a namespace of the matrix: its labels, and the revision whose install options
// sidecarlab is given. The cluster runs two revisions, sidecarlab models one installation; each
// cell names the one whose webhooks can select its namespace (the other's select none of its
// Pods: TestConformanceOtherRevisionSelectsNothing holds that).
type nsCell struct {
	name   string
	labels map[string]string
	rev    meshRevision
}

var conformanceNamespaces = []nsCell{
	{name: "plain", rev: revDefault},
	{name: "injection-enabled", labels: map[string]string{"istio-injection": "enabled"}, rev: revDefault},
	{name: "injection-disabled", labels: map[string]string{"istio-injection": "disabled"}, rev: revDefault},
	{name: "rev-default", labels: map[string]string{"istio.io/rev": "default"}, rev: revDefault},
	{name: "rev-missing", labels: map[string]string{"istio.io/rev": "nope"}, rev: revDefault},
	{name: "rev-tag", labels: map[string]string{"istio.io/rev": "prod"}, rev: revDefault},
	{name: "both-labels", labels: map[string]string{"istio-injection": "enabled", "istio.io/rev": "cni"}, rev: revDefault},
	{name: "kube-system", rev: revDefault},
	{name: "rev-cni", labels: map[string]string{"istio.io/rev": "cni"}, rev: revCNI},
	{name: "baseline", labels: map[string]string{"istio-injection": "enabled", "pod-security.kubernetes.io/enforce": "baseline"}, rev: revDefault},
	{name: "restricted", labels: map[string]string{"istio-injection": "enabled", "pod-security.kubernetes.io/enforce": "restricted"}, rev: revDefault},
	{name: "warn-audit", labels: map[string]string{"istio-injection": "enabled", "pod-security.kubernetes.io/warn": "restricted", "pod-security.kubernetes.io/audit": "baseline"}, rev: revDefault},
	{name: "cni-baseline", labels: map[string]string{"istio.io/rev": "cni", "pod-security.kubernetes.io/enforce": "baseline", "pod-security.kubernetes.io/warn": "restricted"}, rev: revCNI},
}

// podCell is a Pod of the matrix.
type podCell struct {
	name        string
	labels      map[string]string
	annotations map[string]string
	hostNetwork bool
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
	{name: "resources", annotations: map[string]string{"sidecar.istio.io/proxyCPU": "200m", "sidecar.istio.io/proxyMemory": "256Mi", "sidecar.istio.io/proxyCPULimit": "1", "sidecar.istio.io/proxyMemoryLimit": "1Gi"}},
}

func (p podCell) pod(namespace string) *corev1.Pod {
	labels := map[string]string{"app": p.name}
	for k, v := range p.labels {
		labels[k] = v
	}
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: p.name, Namespace: namespace, Labels: labels, Annotations: p.annotations},
		Spec: corev1.PodSpec{HostNetwork: p.hostNetwork, Containers: []corev1.Container{{
			Name: "app", Image: "nginx",
			Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
		}}},
	}
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

// namespace makes the cell's namespace (kube-system is the cluster's own) and waits for its
// default ServiceAccount, which the controller manager makes and a Pod needs.
func (c *testCluster) namespace(t *testing.T, ns nsCell) string {
	t.Helper()
	ctx := context.Background()
	name := "c-" + ns.name
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

// dryRunCreate creates the Pod with ?dryRun=All: every admission step runs, nothing is stored.
// It returns the Pod the API server would store, or its refusal, and its warnings.
func (c *testCluster) dryRunCreate(t *testing.T, pod *corev1.Pod) (*corev1.Pod, error, []string) {
	t.Helper()
	w := &warnings{}
	cfg := rest.CopyConfig(c.cfg)
	cfg.WarningHandler = w
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	got, err := client.CoreV1().Pods(pod.Namespace).Create(context.Background(), pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	return got, err, w.list
}

// admitJSON is `sidecarlab admit -o json` of the manifest in the namespace, as the cell gives it.
func admitJSON(t *testing.T, manifest, namespace string, ns nsCell) []explain.Admission {
	t.Helper()
	args := []string{"admit", "-f", "-", "-n", namespace, "--kubernetes-version", clusterKubernetes, "-o", "json"}
	if len(ns.labels) > 0 {
		var kv []string
		for k, v := range ns.labels {
			kv = append(kv, k+"="+v)
		}
		sort.Strings(kv)
		args = append(args, "--namespace-labels", strings.Join(kv, ","))
	}
	args = append(args, ns.rev.setFlags()...)
	out, stderr, err := runCLI(t, manifest, args...)
	if err != nil && !errors.Is(err, errSilent) {
		t.Fatalf("sidecarlab %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	var got []explain.Admission
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
		KubernetesVersion: clusterKubernetes, Install: engine.InstallOptions{Set: ns.rev.set},
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
	c := needCluster(t)
	eng, err := engine.New(context.Background(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	var counts struct{ injected, notInjected, rejected int }
	for _, ns := range conformanceNamespaces {
		t.Run(ns.name, func(t *testing.T) {
			name := c.namespace(t, ns)
			var objs []any
			for _, p := range conformancePods {
				objs = append(objs, p.pod(name))
			}
			manifest := manifestOf(t, objs...)
			got := admitJSON(t, manifest, name, ns)
			finals := finalPods(t, eng, manifest, name, ns)
			if len(got) != len(conformancePods) {
				t.Fatalf("admit answered for %d documents, want %d", len(got), len(conformancePods))
			}
			for i, p := range conformancePods {
				a := got[i]
				server, refused, warns := c.dryRunCreate(t, p.pod(name))
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
					counts.rejected++
					if refused.Error() != first(a.Violations) {
						t.Errorf("%s: refused:\n server:     %s\n sidecarlab: %s", cell, refused, first(a.Violations))
					}
				} else {
					if !a.Admitted {
						t.Errorf("%s: the API server admitted the Pod; sidecarlab rejected it: %q", cell, a.Violations)
						continue
					}
					if injected(server) {
						counts.injected++
					} else {
						counts.notInjected++
					}
					if a.Injected != injected(server) {
						t.Errorf("%s: injected: server %v, sidecarlab %v", cell, injected(server), a.Injected)
					}
					if diffs := comparePods(finals[i+1], server); len(diffs) > 0 {
						t.Errorf("%s: admission's final Pod and the server's differ:\n  %s", cell, strings.Join(diffs, "\n  "))
					}
				}
				if !slices.Equal(warns, a.Warnings) {
					t.Errorf("%s: warnings:\n server:     %q\n sidecarlab: %q", cell, warns, a.Warnings)
				}
			}
		})
	}
	// The matrix is not vacuous: the cluster injected some Pods, left some alone and refused
	// some; and every excuse for a field only the server writes was needed.
	t.Logf("%d cells: %d injected, %d not injected, %d refused", len(conformanceNamespaces)*len(conformancePods), counts.injected, counts.notInjected, counts.rejected)
	if counts.injected < 20 || counts.notInjected < 20 || counts.rejected < 20 {
		t.Errorf("the matrix hardly varies: %+v", counts)
	}
	if !t.Failed() {
		for i, f := range serverOnlyPodFields {
			if serverOnlyUsed[i] == 0 {
				t.Errorf("serverOnlyPodFields: %q matched no field of any Pod; remove it", f.path)
			}
		}
	}
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// serverOnlyPodFields are the fields of a created Pod that only the API server writes, each with
// why; a path matches with * standing for any text. Everything else must be equal.
var serverOnlyPodFields = []struct{ path, why string }{
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
}

// comparePods lists the fields where sidecarlab's Pod and the server's differ, but for
// serverOnlyPodFields.
func comparePods(ours, server *corev1.Pod) []string {
	server = server.DeepCopy()
	server.TypeMeta = ours.TypeMeta // a typed client drops the kind
	a, b := flatten(ours), flatten(server)
	var out []string
	for k, v := range a {
		sv, ok := b[k]
		switch {
		case !ok:
			out = append(out, "only sidecarlab's: "+k+" = "+v)
		case sv != v && !serverOnly(k):
			out = append(out, "differs: "+k+": sidecarlab "+v+", server "+sv)
		}
	}
	for k, v := range b {
		if _, ok := a[k]; !ok && !serverOnly(k) {
			out = append(out, "only the server's: "+k+" = "+v)
		}
	}
	sort.Strings(out)
	return out
}

var (
	serverOnlyREs = sync.OnceValue(func() []*regexp.Regexp {
		var out []*regexp.Regexp
		for _, f := range serverOnlyPodFields {
			out = append(out, regexp.MustCompile(`^`+strings.ReplaceAll(regexp.QuoteMeta(f.path), `\*`, `.*`)+`$`))
		}
		return out
	})
	// serverOnlyUsed counts the paths each entry of serverOnlyPodFields matched: an entry that
	// matches nothing is a stale excuse (TestConformancePods fails on it).
	serverOnlyUsed = make([]int, len(serverOnlyPodFields))
	serverOnlyMu   sync.Mutex
)

func serverOnly(path string) bool {
	for i, re := range serverOnlyREs() {
		if re.MatchString(path) {
			serverOnlyMu.Lock()
			serverOnlyUsed[i]++
			serverOnlyMu.Unlock()
			return true
		}
	}
	return false
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
