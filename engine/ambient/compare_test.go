package ambient

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/google/go-cmp/cmp"
	"istio.io/api/annotation"

	"github.com/sidecarlab/sidecarlab/engine"
)

const compareManifest = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata:
      labels: {app: web}
      annotations: {example.com/team: shop, traffic.sidecar.istio.io/excludeOutboundPorts: "3306"}
    spec:
      containers:
      - {name: web, image: nginx}
---
apiVersion: batch/v1
kind: Job
metadata: {name: once}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: work, image: busybox}
---
apiVersion: v1
kind: Pod
metadata: {name: host}
spec:
  hostNetwork: true
  containers:
  - {name: host, image: busybox}
---
apiVersion: v1
kind: Pod
metadata: {name: labelled, labels: {sidecar.istio.io/inject: "true"}}
spec:
  containers:
  - {name: app, image: busybox}
`

// TestCompare: each workload says whether it joins ambient and by which rule, what its lifecycle
// becomes, and what ambient does with its annotations — the manifest's and the steps' alike.
func TestCompare(t *testing.T) {
	eng, err := engine.New(context.Background(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	steps := []input.Step{{Key: annotation.SidecarProxyCPU.Name, Value: "200m"}}
	c, err := Compare(context.Background(), eng, []byte(compareManifest), steps, engine.Settings{Namespace: engine.Namespace{Name: "shop"}}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Workloads) != 4 {
		t.Fatalf("%d workloads", len(c.Workloads))
	}
	web, job, host, labelled := c.Workloads[0], c.Workloads[1], c.Workloads[2], c.Workloads[3]
	if web.Enrolment == nil || !web.Enrolment.Joins || web.Enrolment.Rule != RuleSelector {
		t.Errorf("web in an ambient namespace: %+v", web.Enrolment)
	}
	if web.AmbientPod.Namespace != "shop" {
		t.Errorf("web's pod is in %q, want the settings' namespace", web.AmbientPod.Namespace)
	}
	if diff := cmp.Diff([]string{FactNoProxy, FactNoRace}, web.Facts); diff != "" {
		t.Errorf("web's facts (-want +got):\n%s", diff)
	}
	if !slices.Contains(job.Facts, FactJobCompletes) {
		t.Errorf("the Job's facts %v do not say it completes", job.Facts)
	}
	if host.Enrolment == nil || host.Enrolment.Joins || host.Enrolment.Rule != RuleHostNetwork || !slices.Contains(host.Facts, FactOutside) {
		t.Errorf("a hostNetwork pod: %+v, facts %v", host.Enrolment, host.Facts)
	}
	if !labelled.InjectLabel || slices.Contains(labelled.Facts, FactNoRace) || web.InjectLabel {
		t.Errorf("the sidecar.istio.io/inject=true label: labelled %v (facts %v), web %v", labelled.InjectLabel, labelled.Facts, web.InjectLabel)
	}
	var names []string
	for _, r := range web.Annotations {
		names = append(names, r.Annotation)
	}
	// The step's annotation and the manifest's Istio one, not example.com's, nor any the
	// sidecar side's injection wrote.
	if diff := cmp.Diff([]string{annotation.SidecarProxyCPU.Name, annotation.SidecarTrafficExcludeOutboundPorts.Name}, names); diff != "" {
		t.Errorf("web's annotation rows (-want +got):\n%s", diff)
	}
	if len(job.Annotations) != 1 || job.Annotations[0].Annotation != annotation.SidecarProxyCPU.Name {
		t.Errorf("the Job's rows: %+v", job.Annotations)
	}
	if !strings.HasSuffix(strings.Join(c.Settings.Install.Set, ","), engine.AmbientProfile) {
		t.Errorf("the sidecar side's options: %v", c.Settings.Install.Set)
	}
}

func TestLifecycleFacts(t *testing.T) {
	for _, tc := range []struct {
		kind  string
		joins bool
		want  []string
	}{
		{"Deployment", true, []string{FactNoProxy, FactNoRace}},
		{"Job", true, []string{FactNoProxy, FactNoRace, FactJobCompletes}},
		{"CronJob", true, []string{FactNoProxy, FactNoRace, FactJobCompletes}},
		{"Job", false, []string{FactNoProxy, FactOutside}},
	} {
		if diff := cmp.Diff(tc.want, LifecycleFacts(tc.kind, tc.joins)); diff != "" {
			t.Errorf("%s joins=%v (-want +got):\n%s", tc.kind, tc.joins, diff)
		}
	}
	if got := AmbientNamespace(map[string]string{"a": "b"}); got["a"] != "b" || got["istio.io/dataplane-mode"] != "ambient" {
		t.Errorf("AmbientNamespace = %v", got)
	}
}
