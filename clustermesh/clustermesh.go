// Package clustermesh reads a live cluster's mesh: the injector and mesh ConfigMaps of the Istio
// revision a namespace selects, the namespace's labels, and that revision's
// MutatingWebhookConfigurations, with get and list only. sidecarlab then injects and admits with
// exactly them (engine.OwnMesh). Nothing is written.
package clustermesh

import (
	"context"
	"errors"
	"maps"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/sidecarlab/sidecarlab/admission"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/i18n"
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
	// Via is how the revision was chosen: the webhook whose namespace selector took the
	// namespace's labels, the tag or revision named, or the default.
	Via Choice
	// NamespaceLabels are the namespace's labels (nil when no namespace was read).
	NamespaceLabels map[string]string
	// KubernetesVersion is the API server's "major.minor".
	KubernetesVersion string
}

// Error is a read of the cluster that did not find what was asked, or found it unusable. ID
// names the sentence (the catalogs' wording.cluster.<ID>), worded with Params; Err is the
// cause, when there is one (the ConfigMaps' own error).
type Error struct {
	ID     string
	Params map[string]string
	Err    error
}

// Error is the failure in English, as the catalogs word it (package wording words it in the
// reader's language).
func (e *Error) Error() string {
	text := i18n.For(i18n.Default).TMap("wording.cluster."+e.ID, e.Params)
	if e.Err != nil {
		text += ": " + e.Err.Error()
	}
	return text
}

func (e *Error) Unwrap() error { return e.Err }

// Refused is a read that failed: the API server refused it (a missing permission, or a missing
// object), or never answered it (Unreachable). Which request, and the error.
type Refused struct {
	Verb, Resource, Name, Namespace string
	Err                             error
}

// Reason names why the read failed (the catalogs' wording.cluster.<Reason>): "not-found",
// "connection-refused", "unreachable" or "refused".
func (e *Refused) Reason() string {
	switch {
	case e.NotFound():
		return "not-found"
	case e.ConnectionRefused():
		return "connection-refused"
	case e.Unreachable():
		return "unreachable"
	}
	return "refused"
}

// Request is the request as kubectl names it: verb, resource and name ("get configmaps istio").
func (e *Refused) Request() string {
	return strings.TrimSpace(e.Verb + " " + e.Resource + " " + e.Name)
}

// Error is the failure in English, as the catalogs word it (package wording words it in the
// reader's language).
func (e *Refused) Error() string {
	return i18n.For(i18n.Default).T(e.MessageID(), "Request", e.Request(), "Namespace", e.Namespace, "Error", e.Err.Error())
}

// MessageID is the catalogs' sentence for the failure: wording.cluster.<Reason>, with "-in" for
// a request in a namespace.
func (e *Refused) MessageID() string {
	if e.Namespace != "" {
		return "wording.cluster." + e.Reason() + "-in"
	}
	return "wording.cluster." + e.Reason()
}

func (e *Refused) Unwrap() error { return e.Err }

// NotFound reports whether the object was not there (rather than the read refused).
func (e *Refused) NotFound() bool { return apierrors.IsNotFound(e.Err) }

// Unreachable reports whether the API server never answered: the request failed on the way (no
// route, no such host, a timeout, TLS), so it is not the API server's refusal. client-go then
// returns the transport's *url.Error rather than a Status. The error names the server's address.
func (e *Refused) Unreachable() bool {
	var status apierrors.APIStatus
	if errors.As(e.Err, &status) {
		return false
	}
	var ue *url.Error
	var ne net.Error
	return errors.As(e.Err, &ue) || errors.As(e.Err, &ne)
}

// ConnectionRefused reports whether the API server's address refused the connection
// (ECONNREFUSED): nothing listens there. It is one way of Unreachable.
func (e *Refused) ConnectionRefused() bool {
	return e.Unreachable() && errors.Is(e.Err, syscall.ECONNREFUSED)
}

// Read reads the mesh that injects Pods in namespace ("" for none: the revision is then the
// one named, or the one a namespace labelled istio-injection=enabled gets). revision, when not
// empty, is the revision or revision tag to read instead of the namespace's.
func (r Reader) Read(ctx context.Context, namespace, revision string) (*Mesh, error) {
	istioNS := r.IstioNamespace
	if istioNS == "" {
		istioNS = DefaultIstioNamespace
	}
	m := &Mesh{}
	v, err := serverVersion(ctx, r.Client.Discovery())
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
		// What decides which Pods reach the injector, without what only the cluster needs: the
		// object's bookkeeping, and the CA bundle istiod patches in (a long base64 text that a
		// link need not carry and that reads as a secret to the link's scan).
		c.ObjectMeta = metav1.ObjectMeta{Name: c.Name, Labels: c.Labels}
		for i := range c.Webhooks {
			c.Webhooks[i].ClientConfig.CABundle = nil
		}
		b, err := yaml.Marshal(c)
		if err != nil {
			return nil, err
		}
		webhooks = append(webhooks, string(b))
	}
	if len(webhooks) == 0 {
		return nil, &Error{ID: "no-webhooks", Params: map[string]string{"Revision": strconv.Quote(engine.RevisionName(rev)), "Label": revLabel + "=" + engine.RevisionName(rev)}}
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
		return nil, &Error{ID: "configmaps", Params: map[string]string{"Revision": strconv.Quote(engine.RevisionName(rev))}, Err: err}
	}
	m.Own.InjectorConfig, m.Own.Values, m.Own.MeshConfig, m.Own.Istio = read.Mesh.InjectorConfig, read.Mesh.Values, read.Mesh.MeshConfig, read.Mesh.Istio
	return m, nil
}

// Choice is how a revision was chosen, as ids and names (package wording says it): By is
// "tag" (a revision tag named: Tag, and its webhook Configuration), "revision" (a revision
// named: Revision), "webhook" (the first webhook whose selectors take the namespace's Pods:
// Webhook of Configuration, for Namespace, "" for a namespace labelled istio-injection=enabled)
// or "default" (none does: the default revision).
type Choice struct {
	By                                               string
	Tag, Revision, Namespace, Webhook, Configuration string
}

// chooseRevision picks the revision whose webhooks inject the namespace's Pods: the named one
// (a tag resolved to its revision), else the first Istio webhook, in the API server's order,
// whose namespace selector takes the namespace's labels (and whose object selector takes a Pod
// without labels), else the default revision.
func chooseRevision(configs []admissionregistrationv1.MutatingWebhookConfiguration, nsLabels map[string]string, namespace, named string) (rev string, via Choice, err error) {
	revisions := map[string]bool{}
	for _, c := range configs {
		revisions[c.Labels[revLabel]] = true
	}
	known := slices.Sorted(maps.Keys(revisions))
	if named != "" {
		for _, c := range configs {
			if c.Labels[tagLabel] == named {
				return engine.RevisionOf(c.Labels[revLabel]), Choice{By: "tag", Tag: named, Configuration: c.Name}, nil
			}
		}
		if revisions[named] || (named == "default" && revisions[""]) {
			return engine.RevisionOf(named), Choice{By: "revision", Revision: named}, nil
		}
		return "", Choice{}, &Error{ID: "unknown-revision", Params: map[string]string{"Named": strconv.Quote(named), "Known": strings.Join(known, ", ")}}
	}
	for _, c := range configs {
		for _, w := range c.Webhooks {
			if !selects(w.NamespaceSelector, nsLabels) || !selects(w.ObjectSelector, nil) {
				continue
			}
			return engine.RevisionOf(c.Labels[revLabel]), Choice{By: "webhook", Namespace: namespace, Webhook: w.Name, Configuration: c.Name}, nil
		}
	}
	if revisions["default"] {
		return "", Choice{By: "default"}, nil
	}
	return "", Choice{}, &Error{ID: "no-default"}
}

// selects reports whether a webhook's selector takes an object with these labels, as the API
// server reads it (admission.Selector: no selector takes everything). A selector the API server
// would not read takes nothing: its webhook chooses no revision.
func selects(sel *metav1.LabelSelector, set map[string]string) bool {
	s, err := admission.Selector(sel)
	return err == nil && s.Matches(labels.Set(set))
}

// MaxNamespaces bounds the namespaces a Catalog lists (a page shows them all as choices).
const MaxNamespaces = 300

// Catalog is what a cluster offers to read: its Istio revisions, each with the revision tags
// that point at it, and its namespaces with their labels.
type Catalog struct {
	Revisions  []Revision
	Namespaces []Namespace
	// More says the cluster has more namespaces than MaxNamespaces; the first ones, in the API
	// server's order, are listed.
	More bool
}

// Revision is an Istio revision ("default" for the one without a name) and its tags.
type Revision struct {
	Name string
	Tags []string
}

// Namespace is a namespace's name and labels.
type Namespace struct {
	Name   string
	Labels map[string]string
}

// Catalog lists the cluster's Istio revisions (from the MutatingWebhookConfigurations labelled
// istio.io/rev; a tag's webhooks name their revision) and its namespaces (list only).
func (r Reader) Catalog(ctx context.Context) (*Catalog, error) {
	list, err := r.Client.AdmissionregistrationV1().MutatingWebhookConfigurations().List(ctx, metav1.ListOptions{LabelSelector: revLabel})
	if err != nil {
		return nil, &Refused{Verb: "list", Resource: "mutatingwebhookconfigurations", Err: err}
	}
	tags := map[string][]string{}
	for _, c := range list.Items {
		rev := c.Labels[revLabel]
		if tag := c.Labels[tagLabel]; tag != "" && !slices.Contains(tags[rev], tag) {
			tags[rev] = append(tags[rev], tag)
		} else if tags[rev] == nil {
			tags[rev] = []string{}
		}
	}
	cat := &Catalog{}
	for _, rev := range slices.Sorted(maps.Keys(tags)) {
		slices.Sort(tags[rev])
		cat.Revisions = append(cat.Revisions, Revision{Name: rev, Tags: tags[rev]})
	}
	nss, err := r.Client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{Limit: MaxNamespaces})
	if err != nil {
		return nil, &Refused{Verb: "list", Resource: "namespaces", Err: err}
	}
	for _, ns := range nss.Items {
		cat.Namespaces = append(cat.Namespaces, Namespace{Name: ns.Name, Labels: ns.Labels})
	}
	if len(cat.Namespaces) > MaxNamespaces {
		cat.Namespaces = cat.Namespaces[:MaxNamespaces]
		cat.More = true
	}
	cat.More = cat.More || nss.Continue != ""
	return cat, nil
}

// Namespace is the labels of the namespace name (get only).
func (r Reader) Namespace(ctx context.Context, name string) (map[string]string, error) {
	ns, err := r.Client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, &Refused{Verb: "get", Resource: "namespaces", Name: name, Err: err}
	}
	return ns.Labels, nil
}

// Cached is a Reader whose Catalog is kept for TTL, so that a page served to many readers asks
// the API server once in a while, not once a request. Now is the clock (time.Now when nil).
type Cached struct {
	Reader
	TTL time.Duration
	Now func() time.Time

	mu  sync.Mutex
	at  time.Time
	cat *Catalog
	err error
}

// Catalog is the Reader's, read again when the one kept is older than TTL. A refusal is kept
// as long: a cluster that refuses is not asked again on every request.
func (c *Cached) Catalog(ctx context.Context) (*Catalog, error) {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if (c.cat != nil || c.err != nil) && now().Sub(c.at) < c.TTL {
		return c.cat, c.err
	}
	cat, err := c.Reader.Catalog(ctx)
	if err != nil && ctx.Err() != nil {
		return nil, err // this request ended; the next one asks again
	}
	c.cat, c.err, c.at = cat, err, now()
	return cat, err
}

// serverVersion is the API server's version, read under ctx: discovery's ServerVersion takes no
// context, so it runs beside and is given up when ctx ends (the client's own timeout,
// rest.Config.Timeout, ends the read itself).
func serverVersion(ctx context.Context, d discovery.ServerVersionInterface) (*version.Info, error) {
	type answer struct {
		v   *version.Info
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		v, err := d.ServerVersion()
		ch <- answer{v, err}
	}()
	select {
	case a := <-ch:
		return a.v, a.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
