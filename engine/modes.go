package engine

import (
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"istio.io/api/annotation"
	"istio.io/api/label"

	"istio.io/istio/pkg/kube"
	"istio.io/istio/pkg/kube/inject"
	"istio.io/istio/pkg/kube/kclient"
)

// Mode says how the injector decides between a classic sidecar (istio-proxy under containers)
// and a native one (istio-proxy under initContainers with restartPolicy: Always). In every mode
// the decision is Istio's own code; we only choose what it is shown.
type Mode string

const (
	// ModeKubeInject is `istioctl kube-inject` offline: no cluster, so native sidecars only when
	// ENABLE_NATIVE_SIDECARS=true — which is off by default — or the pod asks for them.
	ModeKubeInject Mode = "kube-inject"
	// ModeWebhook is the in-cluster webhook in its default "auto" setting: Istio's
	// DetectNativeSidecar looks at the cluster's nodes (here: fake nodes of KubernetesVersion),
	// and the installation's injection policy and selectors decide a pod that says neither true
	// nor false, as the webhook decides (kube-inject ignores them).
	ModeWebhook Mode = "webhook"
	// ModeNative is ENABLE_NATIVE_SIDECARS=true: native sidecars for every pod that does not
	// opt out with sidecar.istio.io/nativeSidecar: "false".
	ModeNative Mode = "native"
	// ModeClassic is ENABLE_NATIVE_SIDECARS=false: classic sidecars unless a pod opts in.
	ModeClassic Mode = "classic"
)

// Modes lists every mode in the order a menu shows them.
func Modes() []Mode { return []Mode{ModeKubeInject, ModeWebhook, ModeNative, ModeClassic} }

// nativeNodeMinor is the minor of a kubelet version (1.34) Istio's auto detection accepts as
// native-capable; forcing native mode is expressed as a cluster of such nodes rather than by
// writing the process-global features.EnableNativeSidecars, so requests in different modes can
// run side by side.
const nativeNodeMinor = 34

// clusterInjector is an inject.Injector whose only job is to hand Istio a kube client holding
// nodes of one Kubernetes version, as Istio's own injection tests do. Inject returns no patch, so
// IntoObject runs the local templates.
type clusterInjector struct {
	client kube.Client
}

func (c *clusterInjector) Inject(*corev1.Pod, string) ([]byte, error) { return nil, nil }
func (c *clusterInjector) GetKubeClient() kube.Client                 { return c.client }

// Node is the cluster's one node, of Kubernetes 1.minor: what Istio's DetectNativeSidecar reads,
// in webhook mode and in the Cluster view's webhook alike. It is the one place the minor is
// written as a kubelet version ("v1.34.0").
func Node(minor int) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "sidecarlab-node"},
		Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{
			KubeletVersion: fmt.Sprintf("v1.%d.0", minor),
		}},
	}
}

// clusters builds one fake cluster per Kubernetes minor version, once, and reuses it. The node
// informer is registered before the client starts: registered afterwards, the node list would be
// empty and every version would "support" native sidecars.
type clusters struct {
	// asWritten makes webhook mode inject objects as written, without the API server's
	// defaults, as Istio's own TestInjection runs its injector: only the test that reproduces
	// Istio's golden corpus sets it.
	asWritten bool
	mu        sync.Mutex
	stop      chan struct{}
	byV       map[int]*clusterInjector
}

func newClusters() *clusters {
	return &clusters{stop: make(chan struct{}), byV: map[int]*clusterInjector{}}
}

func (c *clusters) get(minor int) *clusterInjector {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ci, ok := c.byV[minor]; ok {
		return ci
	}
	client := kube.NewFakeClient(Node(minor))
	_ = kclient.New[*corev1.Node](client)
	client.RunAndWait(c.stop)
	ci := &clusterInjector{client: client}
	c.byV[minor] = ci
	return ci
}

func (c *clusters) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.stop:
	default:
		close(c.stop)
	}
}

// injectorFor returns what IntoObject is given in a mode: nil (no cluster, as offline istioctl),
// a cluster whose nodes decide, or for webhook mode that cluster with the installation's
// injection policy, which the webhook decides by.
func (c *clusters) injectorFor(s Settings, in *Install) (inject.Injector, error) {
	switch s.mode() {
	case ModeKubeInject, ModeClassic:
		// With no kube client, IntoObject goes native only if ENABLE_NATIVE_SIDECARS=true, which
		// New refuses; so this is classic unless the pod opts in — exactly kube-inject's default
		// and ENABLE_NATIVE_SIDECARS=false.
		return nil, nil
	case ModeNative:
		return c.get(nativeNodeMinor), nil
	case ModeWebhook:
		minor, err := s.KubernetesMinor()
		if err != nil {
			return nil, err
		}
		return &webhookInjector{clusterInjector: c.get(minor), selection: in.selection, asWritten: c.asWritten}, nil
	default:
		return nil, &input.Error{Field: "mode", ID: "unknown-mode", Params: input.Params("modeQ", quote(string(s.Mode)))}
	}
}

// injectionPolicy is what Istio's webhook decides injection by besides the pod's own word: the
// installation's autoInject policy (values.global.proxy.autoInject) and its never and always
// selectors (values.sidecarInjectorWebhook.neverInjectSelector, alwaysInjectSelector), as the
// istio-sidecar-injector config carries them.
type injectionPolicy struct {
	policy        inject.InjectionPolicy
	never, always []metav1.LabelSelector
}

// skips is whether Istio's webhook lets a pod with this metadata through uninjected where
// IntoObject would inject it. Both decide with Istio's injectRequired, but IntoObject (as
// istioctl kube-inject) always as under policy enabled and without selectors; so they differ only
// where the pod says neither true nor false itself (sidecar.istio.io/inject, the label before the
// annotation): there the webhook's never selector, then its always selector, then its policy
// decide — a policy other than enabled injects nothing. (Host networking and Istio's ignored
// namespaces, IntoObject skips as the webhook does.) TestWebhookModeMatchesWebhook, in package
// admission, holds this to the real webhook.
func (p injectionPolicy) skips(meta metav1.ObjectMeta) bool {
	v, ok := meta.Labels[label.SidecarInject.Name]
	if !ok {
		v = meta.Annotations[annotation.SidecarInject.Name]
	}
	if v == "true" || v == "false" {
		return false
	}
	if _, ok := MatchingSelector(p.never, meta.Labels); ok {
		return true
	}
	if _, ok := MatchingSelector(p.always, meta.Labels); ok {
		return false
	}
	return p.policy != inject.InjectionPolicyEnabled
}

// MatchingSelector is the first selector of the list that matches the labels, as Istio's
// webhook reads its neverInjectSelector and alwaysInjectSelector: an invalid or empty one
// matches nothing. It is the one reading of them: the engine's policy and admission's trace.
func MatchingSelector(selectors []metav1.LabelSelector, set map[string]string) (labels.Selector, bool) {
	for i := range selectors {
		sel, err := metav1.LabelSelectorAsSelector(&selectors[i])
		if err == nil && !sel.Empty() && sel.Matches(labels.Set(set)) {
			return sel, true
		}
	}
	return nil, false
}

// webhookSkip is the webhook's own word for a pod its policy check lets through uninjected (it
// answers with no patch, and logs this).
const webhookSkip = "Skipping due to policy check"

// webhookInjector is webhook mode's injector: the cluster whose nodes decide native sidecars, and
// the installation's injection policy. Where the webhook would let the pod through, it answers
// IntoObject with an empty patch, as the webhook answers, and reports webhookSkip through report,
// which intoObject sets for each call.
type webhookInjector struct {
	*clusterInjector
	selection injectionPolicy
	report    func(string)
	asWritten bool
}

func (w *webhookInjector) Inject(pod *corev1.Pod, _ string) ([]byte, error) {
	if !w.selection.skips(pod.ObjectMeta) {
		return nil, nil
	}
	if w.report != nil {
		w.report(webhookSkip)
	}
	return []byte("[]"), nil
}

// reporting is the injector with its skips reported to report.
func (w *webhookInjector) reporting(report func(string)) *webhookInjector {
	c := *w
	c.report = report
	return &c
}
