package engine

import (
	"fmt"
	"slices"
	"strings"

	securityclient "istio.io/client-go/pkg/apis/security/v1"
	istioambient "istio.io/istio/pilot/pkg/serviceregistry/ambient"
	"istio.io/istio/pkg/config/mesh"
	"istio.io/istio/pkg/kube/krt"

	"github.com/sidecarlab/sidecarlab/engine/input"
)

// cause says why a policy needs a waypoint once the workload it selects runs in ambient; "" is
// a policy ztunnel enforces whole, at L4.
type cause string

const (
	// causeHTTPAttributes: an AuthorizationPolicy's rules match HTTP attributes, which Istio's
	// conversion for ztunnel names: ztunnel drops those rules of an ALLOW policy and enforces a
	// DENY policy's rules without them — either way more restrictive than written.
	causeHTTPAttributes cause = "http-attributes"
	// causeAction: ztunnel does not support the AuthorizationPolicy's action (CUSTOM, AUDIT).
	causeAction cause = "action"
	// causeTargetRef: the policy binds with targetRef(s), which are for a waypoint or a gateway,
	// never for ztunnel.
	causeTargetRef cause = "target-ref"
	// causeDryRun: ztunnel is not given dry-run AuthorizationPolicies (unless istiod runs with
	// AMBIENT_ENABLE_DRY_RUN_AUTHORIZATION_POLICY).
	causeDryRun cause = "dry-run"
	// causeL7Kind: the kind is L7 through and through (routing, JWT, Envoy's telemetry): only a
	// waypoint applies it to an ambient workload.
	causeL7Kind cause = "l7-kind"
)

// ztunnelAuthz is what Istio's ambient conversion made of one AuthorizationPolicy for ztunnel.
type ztunnelAuthz struct {
	cause cause
	// attributes are the HTTP attributes Istio found, sorted, for causeHTTPAttributes: operation
	// fields ("methods"), source fields ("requestPrincipals") and when keys ("request.headers[x]").
	attributes []string
}

// convertForZtunnel runs Istio's own conversion of AuthorizationPolicies for ztunnel — istiod's
// PolicyCollections (pilot/pkg/serviceregistry/ambient), which calls convertAuthorizationPolicy
// on each policy, under the default mesh config — and says, per policy in order, what ztunnel
// cannot enforce of it. The decision is Istio's: this reads its result (whether it made a policy
// for ztunnel, and the status it wrote on it).
func convertForZtunnel(pols []*securityclient.AuthorizationPolicy) ([]ztunnelAuthz, error) {
	if len(pols) == 0 {
		return nil, nil
	}
	stop := make(chan struct{})
	defer close(stop)
	opts := krt.NewOptionsBuilder(stop, "sidecarlab", nil)
	// Each policy under a name of its own, so that two of the same name both convert and each
	// result is found again; the conversion reads the name only into a dry-run message.
	in := make([]*securityclient.AuthorizationPolicy, len(pols))
	for i, p := range pols {
		c := p.DeepCopy()
		c.Name = fmt.Sprintf("p%d", i)
		in[i] = c
	}
	authz := krt.NewStaticCollection[*securityclient.AuthorizationPolicy](nil, in, opts.WithName("authz")...)
	peers := krt.NewStaticCollection[*securityclient.PeerAuthentication](nil, nil, opts.WithName("peers")...)
	waypoints := krt.NewStaticCollection[istioambient.Waypoint](nil, nil, opts.WithName("waypoints")...)
	meshCfg := krt.NewStatic(&istioambient.MeshConfig{MeshConfig: mesh.DefaultMeshConfig()}, true, opts.WithName("mesh")...)
	converted, _ := istioambient.PolicyCollections(authz, peers, meshCfg, waypoints, opts, istioambient.FeatureFlags{})
	if !converted.WaitUntilSynced(stop) {
		return nil, &input.Fault{ID: "authz-sync"}
	}
	byName := map[string]ztunnelAuthz{}
	for _, wa := range converted.List() {
		var a ztunnelAuthz
		if st := wa.Binding.Status; st != nil {
			switch found, ok := httpAttributes(st.Message); {
			case ok:
				a.cause, a.attributes = causeHTTPAttributes, found
			case strings.Contains(st.Message, "dry-run"):
				a.cause = causeDryRun
			default:
				// "ztunnel does not support the CUSTOM action"
				a.cause = causeAction
			}
		}
		byName[wa.Source.Name] = a
	}
	out := make([]ztunnelAuthz, len(pols))
	for i := range pols {
		a, ok := byName[in[i].Name]
		if !ok {
			// The conversion leaves a policy out without a status only when it binds with
			// targetRef(s): "TargetRef is not intended for ztunnel".
			a.cause = causeTargetRef
		}
		out[i] = a
	}
	return out, nil
}

// httpRulePrefix opens the status Istio's conversion writes on a policy with HTTP rules
// (httpRuleFmt: "ztunnel does not support HTTP attributes (found: methods, paths). …").
const httpRulePrefix = "ztunnel does not support HTTP attributes (found: "

// httpAttributes reads the attributes Istio found out of its status message.
func httpAttributes(msg string) ([]string, bool) {
	rest, ok := strings.CutPrefix(msg, httpRulePrefix)
	if !ok {
		return nil, false
	}
	list, _, ok := strings.Cut(rest, "). ")
	if !ok {
		return nil, false
	}
	found := strings.Split(list, ", ")
	slices.Sort(found)
	return found, true
}

// firstHTTPAttribute is where the first of the attributes Istio found is in the policy's rules,
// as a finding's path: an operation's field (spec.rules[0].to[0].operation.methods), a source's
// (spec.rules[0].from[0].source.requestPrincipals) or a condition's key
// (spec.rules[0].when[0].key). Istio names the attributes, not where they are; this finds them.
func firstHTTPAttribute(p *securityclient.AuthorizationPolicy, found []string) string {
	is := func(name string, n int) bool { return n > 0 && slices.Contains(found, name) }
	for i, r := range p.Spec.GetRules() {
		for j, to := range r.GetTo() {
			op := to.GetOperation()
			for _, f := range []struct {
				name string
				n    int
			}{{"hosts", len(op.GetHosts())}, {"notHosts", len(op.GetNotHosts())}, {"methods", len(op.GetMethods())},
				{"notMethods", len(op.GetNotMethods())}, {"paths", len(op.GetPaths())}, {"notPaths", len(op.GetNotPaths())}} {
				if is(f.name, f.n) {
					return fmt.Sprintf("spec.rules[%d].to[%d].operation.%s", i, j, f.name)
				}
			}
		}
		for j, from := range r.GetFrom() {
			src := from.GetSource()
			for _, f := range []struct {
				name string
				n    int
			}{{"remoteIpBlocks", len(src.GetRemoteIpBlocks())}, {"notRemoteIpBlocks", len(src.GetNotRemoteIpBlocks())},
				{"requestPrincipals", len(src.GetRequestPrincipals())}, {"notRequestPrincipals", len(src.GetNotRequestPrincipals())}} {
				if is(f.name, f.n) {
					return fmt.Sprintf("spec.rules[%d].from[%d].source.%s", i, j, f.name)
				}
			}
		}
		for k, w := range r.GetWhen() {
			if slices.Contains(found, w.GetKey()) {
				return fmt.Sprintf("spec.rules[%d].when[%d].key", i, k)
			}
		}
	}
	return "spec.rules"
}
