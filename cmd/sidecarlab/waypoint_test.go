package main

import (
	"strings"
	"testing"
)

// waypointManifest is an ambient namespace, a Deployment in it and two AuthorizationPolicies
// that select it: one with an HTTP rule (methods, line 27), one of L4 rules only (line 34).
const waypointManifest = `apiVersion: v1
kind: Namespace
metadata:
  name: shop
  labels: {istio.io/dataplane-mode: ambient}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx}]
---
apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: only-get, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  rules:
  - from:
    - source: {namespaces: [front]}
    to:
    - operation:
        methods: [GET]
---
apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: from-front, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  rules:
  - from:
    - source: {principals: [cluster.local/ns/front/sa/web]}
`

// TestCheckWaypoint: check says which policy needs a waypoint in ambient, at its field's line,
// and which ztunnel enforces; batch lists them on the policies' rows.
func TestCheckWaypoint(t *testing.T) {
	out, _, err := runCLI(t, waypointManifest, "check", "-f", "-", "--fail-on", "none")
	if err != nil {
		t.Fatal(err)
	}
	heads := lineHeads(out)
	if len(heads) != 2 || !strings.HasSuffix(heads[0], ":27:9: info:  [ambient-needs-waypoint]") || !strings.HasSuffix(heads[1], ":34:3: info:  [ambient-policy-l4]") {
		t.Errorf("heads %q\n%s", heads, out)
	}
	out, _, err = runCLI(t, waypointManifest, "batch", "-f", "-", "-o", "csv")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out, "\n")
	if len(lines) < 5 || !strings.Contains(lines[3], "only-get") || !strings.Contains(lines[3], "ambient-needs-waypoint") ||
		!strings.Contains(lines[4], "ambient-policy-l4") {
		t.Errorf("batch:\n%s", out)
	}
}

// TestBatchJoinsAmbient: batch's "joins ambient" column reads the manifest's Namespace: under
// the ambient profile the Deployment in the ambient namespace joins; under the default profile
// nothing captures it; a document without pods has no answer.
func TestBatchJoinsAmbient(t *testing.T) {
	for _, c := range []struct {
		set, want string
	}{{"profile=ambient", "yes"}, {"profile=default", "no"}} {
		out, _, err := runCLI(t, waypointManifest, "batch", "-f", "-", "-o", "csv", "--set", c.set)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(out, "\n")
		if !strings.HasSuffix(lines[0], ",joins ambient") || !strings.HasSuffix(lines[2], ","+c.want) || !strings.HasSuffix(lines[3], ",") {
			t.Errorf("%s:\n%s", c.set, out)
		}
	}
}
