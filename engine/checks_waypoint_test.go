package engine

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// waypointWorkload is a Deployment (app=web in shop) and the Service that selects it.
const waypointWorkload = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: shop
spec:
  selector: {app: web}
  ports:
  - port: 80
---
`

// authzPolicy is an AuthorizationPolicy in shop selecting app=web, with spec lines after the
// selector (indented by two spaces).
func authzPolicy(spec string) string {
	return "apiVersion: security.istio.io/v1\nkind: AuthorizationPolicy\nmetadata:\n  name: pol\n  namespace: shop\nspec:\n  selector:\n    matchLabels: {app: web}\n" + spec
}

// l7Rule and l4Rule are an AuthorizationPolicy's rules, for authzPolicy: one on HTTP methods,
// one on the caller's namespace.
const (
	l7Rule = "  rules:\n  - to:\n    - operation:\n        methods: [GET]\n"
	l4Rule = "  rules:\n  - from:\n    - source:\n        namespaces: [front]\n"
)

// ambientNS is the request's namespace labelled for ambient.
var ambientNS = Settings{Namespace: Namespace{Labels: map[string]string{"istio.io/dataplane-mode": "ambient"}}}

// waypointFinding is what a test reads of a waypoint finding.
type waypointFinding struct {
	Check  CheckID
	Path   string
	Params map[string]string
}

func waypointFindings(fs []Finding) []waypointFinding {
	var out []waypointFinding
	for _, f := range fs {
		if strings.HasPrefix(string(f.Check), "ambient-") {
			out = append(out, waypointFinding{f.Check, f.Path, f.Params})
		}
	}
	return out
}

// TestWaypointAuthorizationPolicy: each HTTP attribute Istio's conversion for ztunnel flags makes
// the policy need a waypoint, with the attribute's field as the finding's path; a policy of L4
// rules only (principals, namespaces, ipBlocks, ports, L4 when keys) is ztunnel's.
func TestWaypointAuthorizationPolicy(t *testing.T) {
	base := map[string]string{"kind": "AuthorizationPolicy", "name": "pol", "namespace": "shop", "workloads": "Deployment shop/web"}
	with := func(kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range base {
			out[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	cases := []struct {
		name string
		spec string
		want waypointFinding
	}{
		{"methods", "  rules:\n  - to:\n    - operation:\n        methods: [GET]\n",
			waypointFinding{checkNeedsWaypoint, "spec.rules[0].to[0].operation.methods", with("action", "ALLOW", "attributes", "methods")}},
		{"paths and hosts, in the second rule", "  rules:\n  - from:\n    - source:\n        namespaces: [front]\n  - to:\n    - operation:\n        ports: [\"80\"]\n    - operation:\n        hosts: [web.shop]\n        paths: [/admin]\n",
			waypointFinding{checkNeedsWaypoint, "spec.rules[1].to[1].operation.hosts", with("action", "ALLOW", "attributes", "hosts, paths")}},
		{"notMethods and notPaths", "  rules:\n  - to:\n    - operation:\n        notMethods: [DELETE]\n        notPaths: [/x]\n",
			waypointFinding{checkNeedsWaypoint, "spec.rules[0].to[0].operation.notMethods", with("action", "ALLOW", "attributes", "notMethods, notPaths")}},
		{"requestPrincipals", "  rules:\n  - from:\n    - source:\n        requestPrincipals: [\"*\"]\n",
			waypointFinding{checkNeedsWaypoint, "spec.rules[0].from[0].source.requestPrincipals", with("action", "ALLOW", "attributes", "requestPrincipals")}},
		{"remoteIpBlocks in a DENY policy", "  action: DENY\n  rules:\n  - from:\n    - source:\n        remoteIpBlocks: [10.0.0.0/8]\n",
			waypointFinding{checkNeedsWaypoint, "spec.rules[0].from[0].source.remoteIpBlocks", with("action", "DENY", "attributes", "remoteIpBlocks")}},
		{"a when on a request header", "  rules:\n  - when:\n    - key: source.ip\n      values: [10.0.0.1]\n    - key: request.headers[x-user]\n      values: [\"admin\"]\n",
			waypointFinding{checkNeedsWaypoint, "spec.rules[0].when[1].key", with("action", "ALLOW", "attributes", "request.headers[x-user]")}},
		{"CUSTOM", "  action: CUSTOM\n  provider:\n    name: ext-authz\n  rules:\n  - {}\n",
			waypointFinding{checkNeedsWaypoint, "spec.action", with("action", "CUSTOM")}},
		{"L4 only", "  rules:\n  - from:\n    - source:\n        principals: [cluster.local/ns/front/sa/web]\n        namespaces: [front]\n        ipBlocks: [10.0.0.0/8]\n    to:\n    - operation:\n        ports: [\"8080\"]\n    when:\n    - key: source.namespace\n      values: [front]\n    - key: destination.port\n      values: [\"8080\"]\n",
			waypointFinding{checkPolicyL4, "spec.rules", base}},
		{"allow nothing", "", waypointFinding{checkPolicyL4, "spec", base}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			manifest := waypointWorkload + authzPolicy(c.spec)
			r := mustInject(t, testEngine(t), []byte(manifest), nil, ambientNS)
			if diff := cmp.Diff([]waypointFinding{c.want}, waypointFindings(r.Findings)); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
			// Outside ambient, nothing.
			if got := waypointFindings(mustInject(t, testEngine(t), []byte(manifest), nil, Settings{}).Findings); got != nil {
				t.Errorf("without ambient: %v", got)
			}
		})
	}
}

// TestWaypointOtherCauses: a policy ztunnel is never given — bound by targetRefs, dry-run — and
// the kinds that are L7 through and through, each selecting the workload by its own rule.
func TestWaypointOtherCauses(t *testing.T) {
	cases := []struct {
		name, doc string
		want      waypointFinding
	}{
		{"AuthorizationPolicy on the Service", "apiVersion: security.istio.io/v1\nkind: AuthorizationPolicy\nmetadata: {name: pol, namespace: shop}\nspec:\n  targetRefs:\n  - {kind: Service, group: \"\", name: web}\n  rules:\n  - to:\n    - operation: {methods: [GET]}\n",
			waypointFinding{checkNeedsWaypoint, "spec.targetRefs[0]", map[string]string{"kind": "AuthorizationPolicy", "name": "pol", "namespace": "shop", "target": "Service/web", "workloads": "Deployment shop/web"}}},
		{"dry-run", "apiVersion: security.istio.io/v1\nkind: AuthorizationPolicy\nmetadata:\n  name: pol\n  namespace: shop\n  annotations: {istio.io/dry-run: \"true\"}\nspec:\n  rules:\n  - from:\n    - source: {namespaces: [front]}\n",
			waypointFinding{checkNeedsWaypoint, `metadata.annotations["istio.io/dry-run"]`, map[string]string{"kind": "AuthorizationPolicy", "name": "pol", "namespace": "shop", "key": "istio.io/dry-run", "workloads": "Deployment shop/web"}}},
		{"VirtualService by short name", "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: vs, namespace: shop}\nspec:\n  hosts: [web]\n  http:\n  - route:\n    - destination: {host: web}\n",
			waypointFinding{checkNeedsWaypoint, "spec.http", map[string]string{"kind": "VirtualService", "name": "vs", "namespace": "shop", "workloads": "Deployment shop/web"}}},
		{"VirtualService by FQDN, for the mesh", "apiVersion: networking.istio.io/v1beta1\nkind: VirtualService\nmetadata: {name: vs, namespace: other}\nspec:\n  hosts: [web.shop.svc.cluster.local]\n  gateways: [mesh, ingress]\n  tcp:\n  - route:\n    - destination: {host: web.shop.svc.cluster.local}\n",
			waypointFinding{checkNeedsWaypoint, "spec.tcp", map[string]string{"kind": "VirtualService", "name": "vs", "namespace": "other", "workloads": "Deployment shop/web"}}},
		{"HTTPRoute on the Service", "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: route, namespace: shop}\nspec:\n  parentRefs:\n  - {group: \"\", kind: Service, name: web, port: 80}\n  rules:\n  - backendRefs:\n    - {name: web, port: 80}\n",
			waypointFinding{checkNeedsWaypoint, "spec.rules", map[string]string{"kind": "HTTPRoute", "name": "route", "namespace": "shop", "workloads": "Deployment shop/web"}}},
		{"RequestAuthentication", "apiVersion: security.istio.io/v1\nkind: RequestAuthentication\nmetadata: {name: jwt, namespace: shop}\nspec:\n  selector:\n    matchLabels: {app: web}\n  jwtRules:\n  - issuer: https://issuer.example\n",
			waypointFinding{checkNeedsWaypoint, "spec.jwtRules", map[string]string{"kind": "RequestAuthentication", "name": "jwt", "namespace": "shop", "workloads": "Deployment shop/web"}}},
		{"Telemetry in the root namespace", "apiVersion: telemetry.istio.io/v1\nkind: Telemetry\nmetadata: {name: logs, namespace: istio-system}\nspec:\n  accessLogging:\n  - providers:\n    - name: envoy\n",
			waypointFinding{checkNeedsWaypoint, "spec.accessLogging", map[string]string{"kind": "Telemetry", "name": "logs", "namespace": "istio-system", "workloads": "Deployment shop/web"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := mustInject(t, testEngine(t), []byte(waypointWorkload+c.doc), nil, ambientNS)
			if diff := cmp.Diff([]waypointFinding{c.want}, waypointFindings(r.Findings)); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWaypointSelection: a policy that does not select the workload, or a workload that is not
// in ambient, has no finding; a pod label or a Namespace of the input puts it in ambient.
func TestWaypointSelection(t *testing.T) {
	methods := "  rules:\n  - to:\n    - operation: {methods: [GET]}\n"
	none := Settings{Namespace: Namespace{Labels: map[string]string{"istio.io/dataplane-mode": "none"}}}
	ambientPod := strings.Replace(waypointWorkload, "labels: {app: web}", "labels: {app: web, istio.io/dataplane-mode: ambient}", 1)
	nsDoc := "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n  labels: {istio.io/dataplane-mode: ambient}\n---\n"
	cases := []struct {
		name     string
		manifest string
		s        Settings
		want     bool
	}{
		{"another app", waypointWorkload + strings.Replace(authzPolicy(methods), "{app: web}", "{app: db}", 1), ambientNS, false},
		{"another namespace", waypointWorkload + strings.Replace(authzPolicy(methods), "namespace: shop", "namespace: other", 1), ambientNS, false},
		{"the root namespace", waypointWorkload + strings.Replace(authzPolicy(methods), "namespace: shop", "namespace: istio-system", 1), ambientNS, true},
		{"a VirtualService for an ingress gateway only", waypointWorkload + "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: vs, namespace: shop}\nspec:\n  hosts: [web]\n  gateways: [ingress]\n  http:\n  - route:\n    - destination: {host: web}\n", ambientNS, false},
		{"a VirtualService for another host", waypointWorkload + "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: vs, namespace: shop}\nspec:\n  hosts: [db]\n  http:\n  - route:\n    - destination: {host: db}\n", ambientNS, false},
		{"an HTTPRoute on a Gateway", waypointWorkload + "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: r, namespace: shop}\nspec:\n  parentRefs:\n  - {name: ingress}\n  rules:\n  - backendRefs:\n    - {name: web, port: 80}\n", ambientNS, false},
		{"the namespace opts out", waypointWorkload + authzPolicy(methods), none, false},
		{"the pod opts in", ambientPod + authzPolicy(methods), none, true},
		{"a Namespace of the input", nsDoc + waypointWorkload + authzPolicy(methods), Settings{}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := mustInject(t, testEngine(t), []byte(c.manifest), nil, c.s)
			if got := len(waypointFindings(r.Findings)) > 0; got != c.want {
				t.Errorf("finding: %v, want %v (%v)", got, c.want, waypointFindings(r.Findings))
			}
		})
	}
}

// TestWaypointAmbientProfile: the ambient profile's CNI agent puts every workload in view,
// without a label.
func TestWaypointAmbientProfile(t *testing.T) {
	s := Settings{Install: InstallOptions{Set: []string{"profile=ambient"}}}
	r := mustInject(t, testEngine(t), []byte(waypointWorkload+authzPolicy("  rules:\n  - to:\n    - operation: {paths: [/x]}\n")), nil, s)
	if got := waypointFindings(r.Findings); len(got) != 1 || got[0].Check != checkNeedsWaypoint {
		t.Errorf("findings %v, want one %s", got, checkNeedsWaypoint)
	}
}

// TestWaypointIgnoreAndLocate: the workload's sidecarlab.dev/ignore moves the finding to the
// ignored ones; the finding points at the field's line in the input.
func TestWaypointIgnoreAndLocate(t *testing.T) {
	manifest := waypointWorkload + authzPolicy("  rules:\n  - to:\n    - operation:\n        methods: [GET]\n")
	r := mustInject(t, testEngine(t), []byte(manifest), nil, ambientNS)
	fs := waypointFindings(r.Findings)
	if len(fs) != 1 {
		t.Fatalf("findings %v", fs)
	}
	var f Finding
	for _, x := range r.Findings {
		if x.Check == checkNeedsWaypoint {
			f = x
		}
	}
	loc := Locate(r.Documents, []Finding{f})[0]
	lines := strings.Split(manifest, "\n")
	if !loc.Exact || !strings.Contains(lines[loc.Line-1], "methods: [GET]") {
		t.Errorf("location %+v: line %q", loc, lines[loc.Line-1])
	}
	ignored := strings.Replace(manifest, "  name: web\n  namespace: shop\nspec:\n  selector", "  name: web\n  namespace: shop\n  annotations: {sidecarlab.dev/ignore: ambient-needs-waypoint}\nspec:\n  selector", 1)
	r = mustInject(t, testEngine(t), []byte(ignored), nil, ambientNS)
	if got := waypointFindings(r.Findings); got != nil {
		t.Errorf("ignored, yet found: %v", got)
	}
	if got := waypointFindings(r.Ignored); len(got) != 1 {
		t.Errorf("ignored %v, want the finding", got)
	}
}

// TestWaypointNotMemoised: the timeline's rows are memoised without the request's namespace;
// the waypoint findings follow the namespace of each request.
func TestWaypointNotMemoised(t *testing.T) {
	manifest := []byte(waypointWorkload + authzPolicy("  rules:\n  - to:\n    - operation: {methods: [GET]}\n"))
	e := testEngine(t)
	for i, s := range []Settings{{}, ambientNS, {}} {
		tl, err := e.Timeline(context.Background(), manifest, nil, s)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := len(waypointFindings(tl.Findings)), i%2; got != want {
			t.Errorf("request %d: %d waypoint findings, want %d", i, got, want)
		}
	}
}

// TestWaypointBatch: the streamed batch puts the policy's finding on the policy's row, as
// Inject and Batch do.
func TestWaypointBatch(t *testing.T) {
	manifest := []byte(authzPolicy("  rules:\n  - to:\n    - operation: {methods: [GET]}\n") + "---\n" + waypointWorkload)
	e := testEngine(t)
	in := mustInject(t, e, manifest, nil, ambientNS)
	want := Batch(in.Documents, in.Findings)
	b, err := e.NewBatchStream(context.Background(), manifest, nil, ambientNS)
	if err != nil {
		t.Fatal(err)
	}
	var got []BatchRow
	if err := b.Run(context.Background(), func(it BatchItem) error { got = append(got, it.Row); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(want[0].Pitfalls, string(checkNeedsWaypoint)) {
		t.Fatalf("the policy's row %+v lacks %s", want[0], checkNeedsWaypoint)
	}
	for i := range want {
		if !slices.Equal(want[i].Pitfalls, got[i].Pitfalls) {
			t.Errorf("row %d: pitfalls %v, streamed %v", i+1, want[i].Pitfalls, got[i].Pitfalls)
		}
	}
}

// TestHTTPAttributeFields: every HTTP attribute Istio's conversion names for an operation or a
// source has its field found in the rules (the finding's path), so the path never falls back to
// spec.rules for an attribute Istio names.
func TestHTTPAttributeFields(t *testing.T) {
	fields := map[string]string{
		"hosts": "to", "notHosts": "to", "methods": "to", "notMethods": "to", "paths": "to", "notPaths": "to",
		"remoteIpBlocks": "from", "notRemoteIpBlocks": "from", "requestPrincipals": "from", "notRequestPrincipals": "from",
	}
	for name, side := range fields {
		part := "operation"
		if side == "from" {
			part = "source"
		}
		spec := "  rules:\n  - " + side + ":\n    - " + part + ":\n        " + name + ": [\"10.0.0.0/8\"]\n"
		r := mustInject(t, testEngine(t), []byte(waypointWorkload+authzPolicy(spec)), nil, ambientNS)
		got := waypointFindings(r.Findings)
		want := "spec.rules[0]." + side + "[0]." + part + "." + name
		if len(got) != 1 || got[0].Path != want || got[0].Params["attributes"] != name {
			t.Errorf("%s: %v, want path %s", name, got, want)
		}
	}
}
