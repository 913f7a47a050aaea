package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
	"github.com/sidecarlab/sidecarlab/wording"
)

// TestDiffAmbient: `diff --ambient` prints each workload with the ambient profile's sidecar
// (istio-validation, never istio-init) beside itself in ambient: it joins by the enablement
// selector, the proxy and its init container go, both lifecycles, Pod Security at both levels,
// the annotations' rows with their sources, and the capacity on the nodes given; -o json says the
// same as data, and the same data in every language.
func TestDiffAmbient(t *testing.T) {
	out, stderr, err := runCLI(t, testkit.Deployment, "diff", "--ambient", "-f", "-", "--nodes", "7", "--annotate", "traffic.sidecar.istio.io/excludeOutboundPorts=3306")
	if err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	for _, want := range []string{
		"`profile=ambient`",
		"document 1: Deployment/web\n",
		"(rule 2 of its `enablementSelectors`)",
		"- spec.template.spec.containers[istio-proxy]: ",
		"- spec.template.spec.initContainers[istio-validation]: ",
		"lifecycle in ambient (READY 1/1):",
		"No startup race",
		"baseline: allowed",
		"restricted: forbidden: pods \"web-<hash>-<random>\" is forbidden",
		"traffic.sidecar.istio.io/excludeOutboundPorts: ignored in ambient",
		"https://github.com/istio/istio/issues/49829",
		"capacity on 7 nodes",
		"ztunnel: 7 nodes × cpu=200m memory=512Mi = cpu=1.4 memory=3.5Gi",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "istio-init") {
		t.Errorf("the sidecar side has istio-init:\n%s", out)
	}

	var data [2]any
	for i, lang := range []string{"en", "ja"} {
		js, stderr, err := runCLI(t, testkit.Deployment, "diff", "--ambient", "-f", "-", "-o", "json", "--lang", lang)
		if err != nil {
			t.Fatalf("%s: %v: %s", lang, err, stderr)
		}
		var got wording.AmbientComparison
		if err := json.Unmarshal([]byte(js), &got); err != nil {
			t.Fatal(err)
		}
		if len(got.Workloads) != 1 || got.Capacity.Nodes != 3 || got.Capacity.Pods != 1 || got.Workloads[0].Enrolment == nil || !got.Workloads[0].Enrolment.Joins {
			t.Fatalf("%s: %s", lang, js)
		}
		if lang == "ja" && got.Workloads[0].Enrolment.Text == "" || strings.Contains(got.Workloads[0].Enrolment.Text, "Joins") == (lang == "ja") {
			t.Errorf("%s: the enrolment's text %q is not in the language", lang, got.Workloads[0].Enrolment.Text)
		}
		if err := json.Unmarshal([]byte(js), &data[i]); err != nil {
			t.Fatal(err)
		}
		api.SetSentencesAside(data[i])
	}
	a, _ := json.Marshal(data[0])
	b, _ := json.Marshal(data[1])
	if string(a) != string(b) {
		t.Error("the data of -o json changes with the language")
	}
}

func TestDiffAmbientUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{"diff", "-f", "-", "--nodes", "4"}, "--nodes needs --ambient", 2},
		{[]string{"diff", "-f", "-", "--ambient", "--unified"}, "--unified is not available", 2},
		{[]string{"diff", "-f", "-", "--ambient", "--nodes", "0"}, "the node count must be a whole number from 1 to 100000", 1},
	} {
		_, stderr, err := runCLI(t, testkit.Deployment, tc.args...)
		if exitCodeOf(err) != tc.code || !strings.Contains(stderr+errText(err), tc.want) {
			t.Errorf("%v: exit %d, %q; want %d, %q", tc.args, exitCodeOf(err), stderr+errText(err), tc.code, tc.want)
		}
	}
	if _, stderr, err := runCLI(t, testkit.Deployment, "diff", "-f", "-", "--ambient", "--nodes", "1"); err != nil {
		t.Errorf("--ambient --nodes 1: %v: %s", err, stderr)
	}
}
