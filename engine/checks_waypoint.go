package engine

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"istio.io/api/annotation"
	"istio.io/api/label"
	networkingclient "istio.io/client-go/pkg/apis/networking/v1"
	securityclient "istio.io/client-go/pkg/apis/security/v1"
	telemetryclient "istio.io/client-go/pkg/apis/telemetry/v1"
	"istio.io/istio/pilot/pkg/model"
	"istio.io/istio/pilot/pkg/serviceregistry/provider"
	"istio.io/istio/pkg/config"
	"istio.io/istio/pkg/config/constants"
	corev1 "k8s.io/api/core/v1"
	klabels "k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"
)

// The waypoint checks look at the policies of the input that select one of its workloads, once
// that workload runs in ambient: what the node's ztunnel enforces (L4) and what needs a waypoint
// (L7). Unlike the other checks they read several documents (a policy, the workloads it selects,
// the Services that select them, the Namespaces) and the request's namespace, so they run apart
// from the row's checks (see waypointChecks) and their findings sit on the policy's document.
const (
	// Params: kind, name, namespace (the policy's), workloads (those it selects, "Deployment
	// shop/web, …"); and by what makes it L7: action and attributes (an AuthorizationPolicy's HTTP
	// attributes, as Istio's conversion names them), action alone (CUSTOM, AUDIT), target (its
	// first targetRef, "Service/web"), key (the dry-run annotation), or the kind alone.
	checkNeedsWaypoint = CheckAmbientNeedsWaypoint
	// Params: kind, name, namespace, workloads.
	checkPolicyL4 = CheckAmbientPolicyL4
)

// waypointCheckList are the waypoint checks, reported after the row's checks.
var waypointCheckList = []Check{{checkNeedsWaypoint, SeverityInfo}, {checkPolicyL4, SeverityInfo}}

// maxListedWorkloads bounds the workloads a finding names; the rest are counted.
const maxListedWorkloads = 8

// rootNamespace is the mesh's root namespace under the default mesh config: a policy there
// selects workloads of every namespace.
const rootNamespace = constants.IstioSystemNamespace

// clusterDomain is the default trust and DNS domain a short host name resolves under.
const clusterDomain = constants.DefaultClusterLocalDomain

// policyKinds are the kinds the waypoint checks read, by API group.
var policyKinds = map[string][]string{
	"security.istio.io":         {"AuthorizationPolicy", "RequestAuthentication"},
	"telemetry.istio.io":        {"Telemetry"},
	"networking.istio.io":       {"VirtualService"},
	"gateway.networking.k8s.io": {"HTTPRoute"},
}

// isPolicy says whether a document is of a kind the waypoint checks read.
func isPolicy(d Document) bool {
	group, _, _ := strings.Cut(d.APIVersion, "/")
	return slices.Contains(policyKinds[group], d.Kind)
}

// mayHavePolicy says, from the bytes alone, whether a document may be one: a batch reads its
// documents for the waypoint checks only when one may be.
func mayHavePolicy(raw []byte) bool {
	s := string(raw)
	for group := range policyKinds {
		if strings.Contains(s, group) {
			return true
		}
	}
	return false
}

// policyDoc is one policy document of the input, read into Istio's type for its kind.
type policyDoc struct {
	d         Document
	namespace string
	authz     *securityclient.AuthorizationPolicy
	// targetable is the policy's spec for the kinds that select with a selector or targetRefs.
	targetable model.TargetablePolicy
	ra         *securityclient.RequestAuthentication
	tel        *telemetryclient.Telemetry
	vs         *networkingclient.VirtualService
	route      *gatewayv1.HTTPRoute
	// ztunnel is what Istio's conversion made of an AuthorizationPolicy.
	ztunnel ztunnelAuthz
}

// ambientWorkload is a workload of the input that runs in ambient.
type ambientWorkload struct {
	d      Document
	ns     string
	labels map[string]string
	// services are the input's Services of its namespace that select its pods; waypoint is the
	// waypoint it uses (istio.io/use-waypoint on the pod, a Service, or the namespace).
	services []*corev1.Service
	waypoint string
	skip     map[string]bool
}

// waypointChecks runs the waypoint checks on a row's documents. A finding a workload opts out of
// (IgnoreAnnotation) leaves that workload out; a finding all of whose workloads opt out is
// returned as ignored.
func (e *Engine) waypointChecks(ctx context.Context, p *prepared, docs []Document) (found, ignored []Finding, err error) {
	var pols []*policyDoc
	for _, d := range docs {
		if d.Error == nil && isPolicy(d) {
			if pd := readPolicy(d, p.settings); pd != nil {
				pols = append(pols, pd)
			}
		}
	}
	if len(pols) == 0 {
		return nil, nil, nil
	}
	workloads := e.ambientWorkloads(p, docs)
	if len(workloads) == 0 {
		return nil, nil, nil
	}
	var authz []*securityclient.AuthorizationPolicy
	for _, pd := range pols {
		if pd.authz != nil {
			authz = append(authz, pd.authz)
		}
	}
	converted, err := convertForZtunnel(authz)
	if err != nil {
		return nil, nil, err
	}
	i := 0
	for _, pd := range pols {
		if pd.authz != nil {
			pd.ztunnel = converted[i]
			i++
		}
	}
	for _, pd := range pols {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		f := pd.finding()
		var names, skipped []string
		for _, w := range workloads {
			if !pd.selects(w) {
				continue
			}
			name := w.d.Kind + " " + w.ns + "/" + w.d.Name
			if w.skip[string(f.Check)] {
				skipped = append(skipped, name)
			} else {
				names = append(names, name)
			}
		}
		switch {
		case len(names) > 0:
			f.Params["workloads"] = listWorkloads(names)
			found = append(found, f)
		case len(skipped) > 0:
			f.Params["workloads"] = listWorkloads(skipped)
			ignored = append(ignored, f)
		}
	}
	return found, ignored, nil
}

// listWorkloads names the workloads, up to maxListedWorkloads, and counts the rest ("+3").
func listWorkloads(names []string) string {
	if len(names) <= maxListedWorkloads {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:maxListedWorkloads], ", ") + ", +" + strconv.Itoa(len(names)-maxListedWorkloads)
}

// readPolicy reads a policy document into Istio's type for its kind; nil when it does not read
// (Istio's API server would refuse it as well).
func readPolicy(d Document, s Settings) *policyDoc {
	pd := &policyDoc{d: d, namespace: docNamespace(d.Namespace, s)}
	var err error
	switch d.Kind {
	case "AuthorizationPolicy":
		pd.authz = &securityclient.AuthorizationPolicy{}
		err = yaml.Unmarshal([]byte(d.Input), pd.authz)
		pd.targetable = &pd.authz.Spec
	case "RequestAuthentication":
		pd.ra = &securityclient.RequestAuthentication{}
		err = yaml.Unmarshal([]byte(d.Input), pd.ra)
		pd.targetable = &pd.ra.Spec
	case "Telemetry":
		pd.tel = &telemetryclient.Telemetry{}
		err = yaml.Unmarshal([]byte(d.Input), pd.tel)
		pd.targetable = &pd.tel.Spec
	case "VirtualService":
		pd.vs = &networkingclient.VirtualService{}
		err = yaml.Unmarshal([]byte(d.Input), pd.vs)
	case "HTTPRoute":
		pd.route = &gatewayv1.HTTPRoute{}
		err = yaml.Unmarshal([]byte(d.Input), pd.route)
	}
	if err != nil {
		return nil
	}
	return pd
}

// docNamespace is a document's namespace as kubectl applies it: its own, else the request's
// namespace, else "default".
func docNamespace(ns string, s Settings) string {
	switch {
	case ns != "":
		return ns
	case s.Namespace.Name != "":
		return s.Namespace.Name
	}
	return "default"
}

// ambientWorkloads are the row's workloads that run in ambient, with the Services that select
// them. A workload is looked at as ambient when its pod template or its namespace says
// istio.io/dataplane-mode=ambient (the pod's label wins, and any other value keeps it out, as
// the CNI agent's selectors read it), or, when neither says, the installation's CNI agent has
// ambient on (AMBIENT_ENABLED: the ambient profile): the reader is looking at ambient, and the
// finding says what the workload would need there.
func (e *Engine) ambientWorkloads(p *prepared, docs []Document) []ambientWorkload {
	nsLabels := NamespaceLabels(docs)
	var services []*corev1.Service
	// Services pass through injection as they are written: their text is what there is of them.
	for _, d := range docs {
		if d.Error == nil && d.APIVersion == "v1" && d.Kind == "Service" {
			svc := &corev1.Service{}
			if err := yaml.Unmarshal([]byte(d.Input), svc); err == nil {
				svc.Namespace = docNamespace(svc.Namespace, p.settings)
				services = append(services, svc)
			}
		}
	}
	installed := false
	if v, err := strconv.ParseBool(p.install.CNI()["AMBIENT_ENABLED"]); err == nil {
		installed = v
	}
	var out []ambientWorkload
	for _, d := range docs {
		in, _, ok := d.objects()
		if !ok {
			continue
		}
		_, tmpl, _, ok := podParts(in)
		if !ok {
			continue
		}
		w := ambientWorkload{d: d, ns: docNamespace(d.Namespace, p.settings), labels: tmpl.Labels, skip: map[string]bool{}}
		ns := p.settings.Namespace.LabelsOf(w.ns, nsLabels)
		mode, onPod := w.labels[label.IoIstioDataplaneMode.Name]
		if !onPod {
			mode, onPod = ns[label.IoIstioDataplaneMode.Name]
		}
		if (onPod && mode != constants.DataplaneModeAmbient) || (!onPod && !installed) {
			continue
		}
		for _, svc := range services {
			if svc.Namespace == w.ns && len(svc.Spec.Selector) > 0 && klabels.SelectorFromSet(svc.Spec.Selector).Matches(klabels.Set(w.labels)) {
				w.services = append(w.services, svc)
			}
		}
		w.waypoint = useWaypoint(w, ns)
		if c, ok := newDocContext(p, e.catalog, d); ok {
			for _, a := range c.ignoreAnnotations() {
				for _, id := range a.ids {
					w.skip[id] = true
				}
			}
		}
		out = append(out, w)
	}
	return out
}

// useWaypoint is the waypoint a workload's traffic goes through: istio.io/use-waypoint on the
// pod, else on a Service that selects it, else on its namespace; "" when none says.
func useWaypoint(w ambientWorkload, ns map[string]string) string {
	key := label.IoIstioUseWaypoint.Name
	if v := w.labels[key]; v != "" {
		return v
	}
	for _, svc := range w.services {
		if v := svc.Labels[key]; v != "" {
			return v
		}
	}
	return ns[key]
}

// selects says whether the policy applies to the workload's traffic, as Istio attaches it.
// A policy with a selector (or none) attaches to the workload's own proxy, by Istio's
// WorkloadPolicyMatcher; one with targetRefs attaches to the waypoint of the workload's
// Services or of its istio.io/use-waypoint, by the same matcher as a waypoint runs it. A
// VirtualService applies to the mesh's traffic (no gateways, or "mesh") for a host that is one of
// the workload's Services, resolved as Istio resolves a short name; an HTTPRoute, through a
// parentRef to one of them.
func (pd *policyDoc) selects(w ambientWorkload) bool {
	switch {
	case pd.targetable != nil:
		if pd.namespace != w.ns && pd.namespace != rootNamespace {
			return false
		}
		name := types.NamespacedName{Namespace: pd.namespace, Name: pd.d.Name}
		kind := config.GroupVersionKind{Group: strings.Split(pd.d.APIVersion, "/")[0], Kind: pd.d.Kind}
		if len(model.GetTargetRefs(pd.targetable)) == 0 {
			return model.PolicyMatcherFor(w.ns, w.labels, false).WithRootNamespace(rootNamespace).ShouldAttachPolicy(kind, name, pd.targetable)
		}
		m := model.WorkloadPolicyMatcher{WorkloadNamespace: w.ns, IsWaypoint: true, RootNamespace: rootNamespace,
			WorkloadLabels: map[string]string{label.IoK8sNetworkingGatewayGatewayName.Name: w.waypoint}}
		for _, svc := range w.services {
			m.Services = append(m.Services, model.ServiceInfoForPolicyMatcher{Name: svc.Name, Namespace: svc.Namespace, Registry: provider.Kubernetes})
		}
		return m.ShouldAttachPolicy(kind, name, pd.targetable)
	case pd.vs != nil:
		gws := pd.vs.Spec.GetGateways()
		if len(gws) > 0 && !slices.Contains(gws, constants.IstioMeshGateway) {
			return false
		}
		for _, h := range pd.vs.Spec.GetHosts() {
			fqdn := string(model.ResolveShortnameToFQDN(h, config.Meta{Namespace: pd.namespace, Domain: clusterDomain}))
			for _, svc := range w.services {
				if fqdn == svc.Name+"."+svc.Namespace+".svc."+clusterDomain {
					return true
				}
			}
		}
	case pd.route != nil:
		_, ok := pd.serviceParent(w)
		return ok
	}
	return false
}

// serviceParent is the index of the route's first parentRef to one of the workload's Services.
func (pd *policyDoc) serviceParent(w ambientWorkload) (int, bool) {
	for i, ref := range pd.route.Spec.ParentRefs {
		if ref.Kind == nil || *ref.Kind != "Service" || (ref.Group != nil && *ref.Group != "" && *ref.Group != "core") {
			continue
		}
		ns := pd.namespace
		if ref.Namespace != nil && *ref.Namespace != "" {
			ns = string(*ref.Namespace)
		}
		for _, svc := range w.services {
			if svc.Name == string(ref.Name) && svc.Namespace == ns {
				return i, true
			}
		}
	}
	return 0, false
}

// finding is the policy's finding, without its workloads: where ambient enforces it, and the
// field that makes it L7.
func (pd *policyDoc) finding() Finding {
	params := map[string]string{"kind": pd.d.Kind, "name": pd.d.Name, "namespace": pd.namespace}
	f := Finding{Check: checkNeedsWaypoint, Severity: SeverityInfo, Doc: pd.d.Index, Params: params}
	if pd.authz == nil {
		f.Path = pd.l7Field()
		return f
	}
	spec := &pd.authz.Spec
	switch pd.ztunnel.cause {
	case causeHTTPAttributes:
		params["action"] = spec.GetAction().String()
		params["attributes"] = strings.Join(pd.ztunnel.attributes, ", ")
		f.Path = firstHTTPAttribute(pd.authz, pd.ztunnel.attributes)
	case causeAction:
		params["action"] = spec.GetAction().String()
		f.Path = "spec.action"
	case causeTargetRef:
		ref := model.GetTargetRefs(spec)[0]
		params["target"] = ref.GetKind() + "/" + ref.GetName()
		f.Path = "spec.targetRefs[0]"
		if len(spec.GetTargetRefs()) == 0 {
			f.Path = "spec.targetRef"
		}
	case causeDryRun:
		params["key"] = annotation.IoIstioDryRun.Name
		f.Path = fmt.Sprintf("metadata.annotations[%q]", annotation.IoIstioDryRun.Name)
	default:
		f.Check, f.Path = checkPolicyL4, "spec"
		if len(spec.GetRules()) > 0 {
			f.Path = "spec.rules"
		}
	}
	return f
}

// l7Field is the field of a kind that is L7 through and through that says what a waypoint would
// do: a VirtualService's routes, an HTTPRoute's rules, a RequestAuthentication's JWT rules, a
// Telemetry's settings; the spec when it has none of them.
func (pd *policyDoc) l7Field() string {
	var fields []struct {
		path string
		set  bool
	}
	add := func(path string, set bool) {
		fields = append(fields, struct {
			path string
			set  bool
		}{path, set})
	}
	switch {
	case pd.vs != nil:
		s := &pd.vs.Spec
		add("spec.http", len(s.GetHttp()) > 0)
		add("spec.tls", len(s.GetTls()) > 0)
		add("spec.tcp", len(s.GetTcp()) > 0)
	case pd.route != nil:
		add("spec.rules", len(pd.route.Spec.Rules) > 0)
	case pd.ra != nil:
		add("spec.jwtRules", len(pd.ra.Spec.GetJwtRules()) > 0)
	case pd.tel != nil:
		s := &pd.tel.Spec
		add("spec.accessLogging", len(s.GetAccessLogging()) > 0)
		add("spec.metrics", len(s.GetMetrics()) > 0)
		add("spec.tracing", len(s.GetTracing()) > 0)
	}
	for _, f := range fields {
		if f.set {
			return f.path
		}
	}
	return "spec"
}
