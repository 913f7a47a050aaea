// Package clustermesh reads a live cluster's mesh: the injector and mesh ConfigMaps of the Istio
// revision a namespace selects, the namespace's labels, and that revision's
// MutatingWebhookConfigurations, with get and list only. sidecarlab then injects and admits with
// exactly them (engine.OwnMesh). Nothing is written.
package clustermesh

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/sidecarlab/sidecarlab/engine"
)

// Istio's names, as its charts write them.
const (
	revLabel = "istio.io/rev"
	tagLabel = "istio.io/tag"
	// DefaultIstioNamespace is where Istio's ConfigMaps are, unless told otherwise.
	DefaultIstioNamespace = "istio-system"
)

// Reader reads a cluster's mesh through a client.
type Reader struct {
	Client kubernetes.Interface
	// IstioNamespace is where the injector and mesh ConfigMaps are (istio-system when empty).
	IstioNamespace string
}

// Mesh is what Read found.
type Mesh struct {
	// Own is the revision's ConfigMaps' data and its webhook configurations, as the engine
	// takes them.
	Own engine.OwnMesh
	// Revision is the revision ("" for the default one).
	Revision string
	// Via says how the revision was chosen: the webhook whose namespace selector took the
	// namespace's labels, the tag named, or the default.
	Via string
	// NamespaceLabels are the namespace's labels (nil when no namespace was read).
	NamespaceLabels map[string]string
	// KubernetesVersion is the API server's "major.minor".
	KubernetesVersion string
}

// Refused is a read the cluster refused (a missing permission, or a missing object): which
// request, and the API server's words.
type Refused struct {
	Verb, Resource, Name, Namespace string
	Err                             error
}

func (e *Refused) Error() string {
	what := e.Verb + " " + e.Resource
	if e.Name != "" {
		what += " " + e.Name
	}
	if e.Namespace != "" {
		what += " in namespace " + e.Namespace
	}
	why := "was refused"
	if apierrors.IsNotFound(e.Err) {
		why = "found nothing"
	}
	return fmt.Sprintf("reading the cluster: %s %s: %v", what, why, e.Err)
}

func (e *Refused) Unwrap() error { return e.Err }

// Read reads the mesh that injects Pods in namespace ("" for none: the revision is then the
// one named, or the one a namespace labelled istio-injection=enabled gets). revision, when not
// empty, is the revision or revision tag to read instead of the namespace's.
func (r Reader) Read(ctx context.Context, namespace, revision string) (*Mesh, error) {
	istioNS := r.IstioNamespace
	if istioNS == "" {
		istioNS = DefaultIstioNamespace
	}
	m := &Mesh{}
	v, err := r.Client.Discovery().ServerVersion()
	if err != nil {
		return nil, &Refused{Verb: "get", Resource: "/version", Err: err}
	}
	m.KubernetesVersion = v.Major + "." + strings.TrimSuffix(v.Minor, "+")
	nsLabels := map[string]string{"istio-injection": "enabled"}
	if namespace != "" {
		ns, err := r.Client.CoreV1().Namespaces().Get(ctx, namespace, metav1.GetOptions{})
		if err != nil {
			return nil, &Refused{Verb: "get", Resource: "namespaces", Name: namespace, Err: err}
		}
		m.NamespaceLabels = ns.Labels
		if m.NamespaceLabels == nil {
			m.NamespaceLabels = map[string]string{}
		}
		nsLabels = m.NamespaceLabels
	}
	list, err := r.Client.AdmissionregistrationV1().MutatingWebhookConfigurations().List(ctx, metav1.ListOptions{LabelSelector: revLabel})
	if err != nil {
		return nil, &Refused{Verb: "list", Resource: "mutatingwebhookconfigurations", Err: err}
	}
	configs := list.Items
	slices.SortFunc(configs, func(a, b admissionregistrationv1.MutatingWebhookConfiguration) int {
		return strings.Compare(a.Name, b.Name)
	})
	rev, via, err := chooseRevision(configs, nsLabels, namespace, revision)
	if err != nil {
		return nil, err
	}
	m.Revision, m.Via = rev, via
	var webhooks []string
	for _, c := range configs {
		if c.Labels[revLabel] != engine.RevisionName(rev) {
			continue
		}
		c.ManagedFields = nil
		b, err := yaml.Marshal(c)
		if err != nil {
			return nil, err
		}
		webhooks = append(webhooks, string(b))
	}
	if len(webhooks) == 0 {
		return nil, fmt.Errorf("reading the cluster: no MutatingWebhookConfiguration of revision %q (labelled %s=%s)", engine.RevisionName(rev), revLabel, engine.RevisionName(rev))
	}
	m.Own.Webhooks = strings.Join(webhooks, "---\n")
	suffix := ""
	if rev != "" {
		suffix = "-" + rev
	}
	var cms strings.Builder
	for _, name := range []string{"istio-sidecar-injector" + suffix, "istio" + suffix} {
		cm, err := r.Client.CoreV1().ConfigMaps(istioNS).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, &Refused{Verb: "get", Resource: "configmaps", Name: name, Namespace: istioNS, Err: err}
		}
		cm.ManagedFields = nil
		cm.APIVersion, cm.Kind = "v1", "ConfigMap"
		b, err := yaml.Marshal(cm)
		if err != nil {
			return nil, err
		}
		cms.Write(b)
		cms.WriteString("---\n")
	}
	read, err := engine.ParseMeshConfigMaps([]byte(cms.String()))
	if err != nil {
		return nil, fmt.Errorf("reading the cluster: the ConfigMaps of revision %q: %w", engine.RevisionName(rev), err)
	}
	m.Own.InjectorConfig, m.Own.Values, m.Own.MeshConfig, m.Own.Istio = read.Mesh.InjectorConfig, read.Mesh.Values, read.Mesh.MeshConfig, read.Mesh.Istio
	return m, nil
}

// chooseRevision picks the revision whose webhooks inject the namespace's Pods: the named one
// (a tag resolved to its revision), else the first Istio webhook, in the API server's order,
// whose namespace selector takes the namespace's labels (and whose object selector takes a Pod
// without labels), else the default revision.
func chooseRevision(configs []admissionregistrationv1.MutatingWebhookConfiguration, nsLabels map[string]string, namespace, named string) (rev, via string, err error) {
	revisions := map[string]bool{}
	for _, c := range configs {
		revisions[c.Labels[revLabel]] = true
	}
	known := slices.Sorted(maps.Keys(revisions))
	if named != "" {
		for _, c := range configs {
			if c.Labels[tagLabel] == named {
				return engine.RevisionOf(c.Labels[revLabel]), fmt.Sprintf("revision tag %s (webhook configuration %s)", named, c.Name), nil
			}
		}
		if revisions[named] || (named == "default" && revisions[""]) {
			return engine.RevisionOf(named), "revision " + named, nil
		}
		return "", "", fmt.Errorf("reading the cluster: no revision or revision tag %q; the cluster's Istio webhooks are of revisions %s", named, strings.Join(known, ", "))
	}
	for _, c := range configs {
		for _, w := range c.Webhooks {
			if !selects(w.NamespaceSelector, nsLabels) || !selects(w.ObjectSelector, nil) {
				continue
			}
			what := "namespace " + namespace
			if namespace == "" {
				what = "a namespace labelled istio-injection=enabled"
			}
			return engine.RevisionOf(c.Labels[revLabel]), fmt.Sprintf("%s, selected by webhook %s of %s", what, w.Name, c.Name), nil
		}
	}
	if revisions["default"] {
		return "", "the default revision (no webhook selects the namespace's Pods)", nil
	}
	return "", "", errors.New("reading the cluster: no Istio webhook selects the namespace's Pods and there is no default revision; name one with --revision")
}

// selects reports whether a webhook's selector takes an object with these labels (no selector
// takes everything).
func selects(sel *metav1.LabelSelector, set map[string]string) bool {
	if sel == nil {
		return true
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return false
	}
	return s.Matches(labels.Set(set))
}
