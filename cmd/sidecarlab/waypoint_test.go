package main

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/ambient"
	"github.com/sidecarlab/sidecarlab/report"
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
		if !strings.HasSuffix(lines[0], ",joins ambient,ztunnel share") || !strings.Contains(lines[2], ","+c.want+",") || !strings.HasSuffix(lines[3], ",,") {
			t.Errorf("%s:\n%s", c.set, out)
		}
	}
}

// TestBatchZtunnelShare: batch streams its rows, so it counts the pods in ambient from the
// documents as written before injecting any (BatchStream.Pods); its "ztunnel share" column is
// the one the page's rows have, made from every injected row (engine.Batch, the CNI agent's
// answer, NewZtunnelShare), on --nodes nodes. Under the default profile there is no ztunnel and
// no share; --nodes out of range is a usage error.
func TestBatchZtunnelShare(t *testing.T) {
	quietIstio()
	eng := testEng(t)
	data, err := os.ReadFile("../../engine/testdata/ambient/share.yaml")
	if err != nil {
		t.Fatal(err)
	}
	shareManifest := string(data)
	for _, c := range []struct {
		set   string
		nodes int
		share bool
	}{{"profile=ambient", 3, true}, {"profile=ambient", 40, true}, {"profile=default", 3, false}} {
		s := engine.Settings{Install: engine.InstallOptions{Set: []string{c.set}}}
		r, err := eng.Inject(t.Context(), []byte(shareManifest), nil, s)
		if err != nil {
			t.Fatal(err)
		}
		in, err := eng.Install(t.Context(), s.Install)
		if err != nil {
			t.Fatal(err)
		}
		rows := engine.Batch(r.Documents, r.Findings)
		cni, err := ambient.InstallCNI(in)
		if err != nil {
			t.Fatal(err)
		}
		cni.FillBatch(rows, engine.Namespace{}, engine.NamespaceLabels(r.Documents))
		share := engine.NewZtunnelShare(in, rows, c.nodes)
		for i := range rows {
			share.Fill(&rows[i])
		}
		if got := slices.ContainsFunc(rows, func(r engine.BatchRow) bool { return r.ZtunnelShare != "" }); got != c.share {
			t.Fatalf("%s: a row with a share: %t, want %t", c.set, got, c.share)
		}
		out, _, err := runCLI(t, shareManifest, "batch", "-f", "-", "-o", "csv", "--set", c.set, "--nodes", strconv.Itoa(c.nodes))
		if err != nil {
			t.Fatal(err)
		}
		if want := string(report.BatchCSV(rows)); out != want {
			t.Errorf("%s on %d nodes: the CLI's CSV\n%s\nthe rows'\n%s", c.set, c.nodes, out, want)
		}
		table, _, err := runCLI(t, shareManifest, "batch", "-f", "-", "--set", c.set, "--nodes", strconv.Itoa(c.nodes))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(table, fmt.Sprintf("ztunnel on %d nodes asks for", c.nodes)); got != c.share {
			t.Errorf("%s: the table's total says ztunnel's: %t, want %t:\n%s", c.set, got, c.share, table)
		}
	}
	if _, _, err := runCLI(t, shareManifest, "batch", "-f", "-", "--nodes", "0"); exitCodeOf(err) != 2 {
		t.Errorf("--nodes 0: exit %d, want 2", exitCodeOf(err))
	}
}
