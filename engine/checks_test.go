package engine

import (
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/catalog"
	"github.com/sidecarlab/sidecarlab/engine/input"
)

const labDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: lab
spec:
  selector:
    matchLabels:
      app: lab
  template:
    metadata:
      labels:
        app: lab
    spec:
      containers:
      - name: app
        image: nginx
`

// withPodAnnotation writes annotations (raw YAML lines) onto the lab Deployment's pod template.
func withPodAnnotation(lines string) string {
	return strings.Replace(labDeployment, "      labels:\n        app: lab\n    spec", "      annotations:\n"+lines+"      labels:\n        app: lab\n    spec", 1)
}

const holdAndLifecycle = `apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
spec:
  values:
    global:
      proxy:
        holdApplicationUntilProxyStarts: true
        lifecycle:
          preStop:
            exec:
              command: ["sleep", "5"]
`

// params are a finding's expected parameters.
type params map[string]string

// holdAndBareTemplate turns hold on mesh-wide and adds an injection template "bare" that
// injects istio-proxy with no lifecycle at all.
const holdAndBareTemplate = `apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
spec:
  values:
    global:
      proxy:
        holdApplicationUntilProxyStarts: true
    sidecarInjectorWebhook:
      templates:
        bare: |
          spec:
            containers:
            - name: istio-proxy
              image: proxyv2
`

// otherTemplates adds injection templates of a team's own: "label-only", which injects nothing
// but a label, and "logger", which injects a container of its own and no istio-proxy.
const otherTemplates = `apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
spec:
  values:
    sidecarInjectorWebhook:
      templates:
        label-only: |
          metadata:
            labels:
              touched: "yes"
        logger: |
          spec:
            containers:
            - name: logger
              image: busybox
`

// oldDelimitersTemplate adds a template "old" whose actions are in Istio 1.1's [[ ]]: text to
// every later Istio, and the only thing it would make is an annotation.
const oldDelimitersTemplate = `apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
spec:
  values:
    sidecarInjectorWebhook:
      templates:
        old: |
          metadata:
            annotations:
              discovery: "[[ .ProxyConfig.DiscoveryAddress ]]"
`

// istio11Config is the shape of Istio 1.1's istio-sidecar-injector ConfigMap's config (its
// policy, and one template under "template:", in [[ ]] delimiters), shortened.
const istio11Config = `policy: enabled
template: |-
  initContainers:
  - name: istio-init
    image: "docker.io/istio/proxy_init:1.1.3"
    args: ["-p", [[ .MeshConfig.ProxyListenPort ]]]
  containers:
  - name: istio-proxy
    image: [[ annotation .ObjectMeta ` + "`sidecar.istio.io/proxyImage`" + ` "docker.io/istio/proxyv2:1.1.3" ]]
`

// meshHoldAndLifecycle turns hold on in the mesh-wide proxy config and sets a global lifecycle.
const meshHoldAndLifecycle = `apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
spec:
  meshConfig:
    defaultConfig:
      holdApplicationUntilProxyStarts: true
  values:
    global:
      proxy:
        lifecycle:
          preStop:
            exec:
              command: ["sleep", "5"]
`

var hold = input.Step{Key: "proxy.istio.io/config", Value: "holdApplicationUntilProxyStarts: true"}

// TestChecks runs every check on a case that trips it and one that does not. Where the finding
// has a one-click fix, applying it must clear the finding.
func TestChecks(t *testing.T) {
	t.Parallel()
	e := testEngine(t)
	job := string(readFile(t, "testdata/corpus/job.yaml"))
	cronjob := string(readFile(t, "testdata/corpus/cronjob.yaml"))
	cases := []struct {
		name     string
		manifest string
		steps    []input.Step
		s        Settings
		check    CheckID
		fires    bool
		path     string // when it fires, the path must contain this
		params   params // and its params include these
	}{
		{"annotation on the Deployment's metadata", strings.Replace(labDeployment, "  name: lab\n", "  name: lab\n  annotations:\n    sidecar.istio.io/proxyCPU: 300m\n", 1), nil, Settings{},
			"workload-metadata-annotation", true, `metadata.annotations["sidecar.istio.io/proxyCPU"]`, params{"key": "sidecar.istio.io/proxyCPU", "kind": "Deployment", "readFrom": "spec.template.metadata.annotations"}},
		{"annotation on the pod template", withPodAnnotation("        sidecar.istio.io/proxyCPU: 300m\n"), nil, Settings{}, "workload-metadata-annotation", false, "", nil},
		{"a non-Istio annotation on the Deployment", strings.Replace(labDeployment, "  name: lab\n", "  name: lab\n  annotations:\n    example.com/owner: me\n", 1), nil, Settings{}, "workload-metadata-annotation", false, "", nil},

		{"CronJob annotation on its pod template", strings.Replace(cronjob, "          labels:\n            app: report", "          annotations:\n            sidecar.istio.io/proxyMemory: 64Mi\n          labels:\n            app: report", 1), nil, Settings{},
			"cronjob-pod-template-annotation", true, "spec.jobTemplate.spec.template.metadata.annotations", params{"key": "sidecar.istio.io/proxyMemory"}},
		{"CronJob annotation on spec.jobTemplate.metadata", cronjob, nil, Settings{}, "cronjob-pod-template-annotation", false, "", nil},

		{"misspelled annotation", labDeployment, []input.Step{{Key: "sidecar.istio.io/proxyCpu", Value: "100m"}}, Settings{},
			"unknown-istio-annotation", true, "sidecar.istio.io/proxyCpu", params{"key": "sidecar.istio.io/proxyCpu", "suggestion": "sidecar.istio.io/proxyCPU"}},
		{"known annotation", labDeployment, []input.Step{{Key: "sidecar.istio.io/proxyCPU", Value: "100m"}}, Settings{}, "unknown-istio-annotation", false, "", nil},
		{"annotation outside Istio's prefixes", labDeployment, []input.Step{{Key: "example.com/proxyCpu", Value: "1"}}, Settings{}, "unknown-istio-annotation", false, "", nil},

		{"misspelled proxy config field", labDeployment, []input.Step{{Key: "proxy.istio.io/config", Value: "holdApplicationUntilProxyStart: true"}}, Settings{},
			"unknown-proxy-config-field", true, "holdApplicationUntilProxyStart", params{"field": "holdApplicationUntilProxyStart", "suggestion": "holdApplicationUntilProxyStarts"}},
		{"nested unknown proxy config field", labDeployment, []input.Step{{Key: "proxy.istio.io/config", Value: "tracing:\n  samplingg: 10\n"}}, Settings{},
			"unknown-proxy-config-field", true, "tracing.samplingg", params{"field": "tracing.samplingg", "suggestion": "sampling"}},
		{"known proxy config fields", labDeployment, []input.Step{{Key: "proxy.istio.io/config", Value: "concurrency: 2\ntracing:\n  sampling: 10\nproxyMetadata:\n  ANY_KEY: x\n"}}, Settings{}, "unknown-proxy-config-field", false, "", nil},

		{"hold with a global lifecycle", labDeployment, nil, Settings{Install: InstallOptions{Overlay: holdAndLifecycle}},
			"hold-swallowed-by-global-lifecycle", true, "containers[istio-proxy].lifecycle", nil},
		{"hold without a global lifecycle", labDeployment, nil, Settings{Install: InstallOptions{Set: []string{"values.global.proxy.holdApplicationUntilProxyStarts=true"}}}, "hold-swallowed-by-global-lifecycle", false, "", nil},
		{"hold by annotation with a global lifecycle", labDeployment, []input.Step{hold}, Settings{Install: InstallOptions{Overlay: strings.Replace(holdAndLifecycle, "        holdApplicationUntilProxyStarts: true\n", "", 1)}},
			"hold-swallowed-by-global-lifecycle", true, "lifecycle", nil},

		// A template of the installation's own that writes no postStart: the hold has no wait,
		// but no global lifecycle took it, so this check (which names that cause) stays quiet.
		{"hold under a template without postStart", labDeployment, []input.Step{{Key: "inject.istio.io/templates", Value: "bare"}}, Settings{Install: InstallOptions{Overlay: holdAndBareTemplate}}, "hold-swallowed-by-global-lifecycle", false, "", nil},
		// Hold on mesh-wide, but the pod turns it off in its own proxy config: no hold to swallow.
		{"mesh-wide hold the pod turns off, with a global lifecycle", labDeployment, []input.Step{{Key: "proxy.istio.io/config", Value: "holdApplicationUntilProxyStarts: false"}}, Settings{Install: InstallOptions{Overlay: meshHoldAndLifecycle}}, "hold-swallowed-by-global-lifecycle", false, "", nil},
		{"hold with a native sidecar", labDeployment, []input.Step{hold}, Settings{Mode: ModeNative}, "hold-ignored-native-sidecar", true, "initContainers[istio-proxy]", nil},
		{"hold with a classic sidecar", labDeployment, []input.Step{hold}, Settings{}, "hold-ignored-native-sidecar", false, "", nil},

		{"Job with a classic sidecar", job, nil, Settings{}, "job-classic-sidecar", true, "containers[istio-proxy]", nil},
		{"CronJob with a classic sidecar", cronjob, nil, Settings{}, "job-classic-sidecar", true, "spec.jobTemplate.spec.template.spec.containers[istio-proxy]", nil},
		{"Job with a native sidecar", job, nil, Settings{Mode: ModeNative}, "job-classic-sidecar", false, "", nil},
		{"Deployment with a classic sidecar", labDeployment, nil, Settings{}, "job-classic-sidecar", false, "", nil},

		{"native sidecar on 1.28", labDeployment, []input.Step{{Key: "sidecar.istio.io/nativeSidecar", Value: "true"}}, Settings{Mode: ModeWebhook, KubernetesVersion: "1.28"},
			"native-sidecar-unsupported", true, "restartPolicy", params{"version": "1.28"}},
		{"native sidecar on 1.29, the first with native sidecars", labDeployment, []input.Step{{Key: "sidecar.istio.io/nativeSidecar", Value: "true"}}, Settings{Mode: ModeWebhook, KubernetesVersion: "1.29"}, "native-sidecar-unsupported", false, "", nil},
		{"native sidecar on 1.30", labDeployment, []input.Step{{Key: "sidecar.istio.io/nativeSidecar", Value: "true"}}, Settings{Mode: ModeWebhook, KubernetesVersion: "1.30"}, "native-sidecar-unsupported", false, "", nil},

		{"webhook auto on 1.30 nodes", labDeployment, nil, Settings{Mode: ModeWebhook, KubernetesVersion: "1.30"}, "webhook-auto-stays-classic", true, "containers[istio-proxy]", params{"version": "1.30"}},
		{"webhook auto on 1.32 nodes", labDeployment, nil, Settings{Mode: ModeWebhook, KubernetesVersion: "1.32"}, "webhook-auto-stays-classic", true, "containers[istio-proxy]", params{"version": "1.32"}},
		{"webhook auto on 1.32 nodes, the pod opted out of native sidecars itself", labDeployment, []input.Step{{Key: "sidecar.istio.io/nativeSidecar", Value: "false"}}, Settings{Mode: ModeWebhook, KubernetesVersion: "1.32"}, "webhook-auto-stays-classic", false, "", nil},
		{"webhook auto on 1.33 nodes, the first it goes native on", labDeployment, nil, Settings{Mode: ModeWebhook, KubernetesVersion: "1.33"}, "webhook-auto-stays-classic", false, "", nil},
		{"webhook auto on 1.34 nodes", labDeployment, nil, Settings{Mode: ModeWebhook, KubernetesVersion: "1.34"}, "webhook-auto-stays-classic", false, "", nil},
		{"kube-inject is not the webhook", labDeployment, nil, Settings{}, "webhook-auto-stays-classic", false, "", nil},

		{"deprecated annotation", labDeployment, []input.Step{{Key: "sidecar.istio.io/statsInclusionPrefixes", Value: "cluster.outbound"}}, Settings{}, "deprecated-annotation", true, "statsInclusionPrefixes", params{"key": "sidecar.istio.io/statsInclusionPrefixes"}},
		{"current annotation", labDeployment, []input.Step{{Key: "sidecar.istio.io/logLevel", Value: "debug"}}, Settings{}, "deprecated-annotation", false, "", nil},

		{"inject: yes", withPodAnnotation("        sidecar.istio.io/inject: \"yes\"\n"), nil, Settings{}, "inject-value", true, "sidecar.istio.io/inject", params{"value": "yes"}},
		{"inject label True", strings.Replace(labDeployment, "      labels:\n        app: lab\n    spec", "      labels:\n        app: lab\n        sidecar.istio.io/inject: \"True\"\n    spec", 1), nil, Settings{}, "inject-value", true, "labels", params{"value": "True"}},
		{"inject: true", withPodAnnotation("        sidecar.istio.io/inject: \"true\"\n"), nil, Settings{}, "inject-value", false, "", nil},
		// A step Istio accepts leniently runs (it is not refused) and the finding says what Istio did.
		{"inject=no as a step", labDeployment, []input.Step{{Key: "sidecar.istio.io/inject", Value: "no"}}, Settings{}, "inject-value", true, `annotations["sidecar.istio.io/inject"]`, params{"value": "no", "result": "injected"}},
		// IntoObject falls back to the policy "enabled", so only another reason skips the pod.
		{"inject=False on a hostNetwork pod", string(readFile(t, "testdata/corpus/skipped-host-network.yaml")), []input.Step{{Key: "sidecar.istio.io/inject", Value: "False"}}, Settings{},
			"inject-value", true, `annotations["sidecar.istio.io/inject"]`, params{"value": "False", "result": "skipped"}},

		{"nativeSidecar=TRUE", labDeployment, []input.Step{{Key: "sidecar.istio.io/nativeSidecar", Value: "TRUE"}}, Settings{}, "lenient-native-sidecar", true, `annotations["sidecar.istio.io/nativeSidecar"]`, params{"key": "sidecar.istio.io/nativeSidecar", "value": "TRUE"}},
		{"nativeSidecar=False turns native sidecars on", labDeployment, []input.Step{{Key: "sidecar.istio.io/nativeSidecar", Value: "False"}}, Settings{}, "lenient-native-sidecar", true, "nativeSidecar", params{"value": "False"}},
		{"nativeSidecar=no", labDeployment, []input.Step{{Key: "sidecar.istio.io/nativeSidecar", Value: "no"}}, Settings{}, "lenient-native-sidecar", true, "nativeSidecar", params{"value": "no"}},
		{"nativeSidecar=true", labDeployment, []input.Step{{Key: "sidecar.istio.io/nativeSidecar", Value: "true"}}, Settings{}, "lenient-native-sidecar", false, "", nil},
		{"nativeSidecar=false", labDeployment, []input.Step{{Key: "sidecar.istio.io/nativeSidecar", Value: "false"}}, Settings{}, "lenient-native-sidecar", false, "", nil},

		{"merge-metrics=False", labDeployment, []input.Step{{Key: "prometheus.istio.io/merge-metrics", Value: "False"}}, Settings{}, "lenient-bool-read", true, "merge-metrics", params{"key": "prometheus.istio.io/merge-metrics", "value": "False", "read": "false"}},
		{"rewriteAppHTTPProbers=1", labDeployment, []input.Step{{Key: "sidecar.istio.io/rewriteAppHTTPProbers", Value: "1"}}, Settings{}, "lenient-bool-read", true, "rewriteAppHTTPProbers", params{"value": "1", "read": "true"}},
		{"merge-metrics=false", labDeployment, []input.Step{{Key: "prometheus.istio.io/merge-metrics", Value: "false"}}, Settings{}, "lenient-bool-read", false, "", nil},
		{"rewriteAppHTTPProbers=yes is not read", labDeployment, []input.Step{{Key: "sidecar.istio.io/rewriteAppHTTPProbers", Value: "yes"}}, Settings{}, "lenient-bool-read", false, "", nil},

		{"rewriteAppHTTPProbers=yes", labDeployment, []input.Step{{Key: "sidecar.istio.io/rewriteAppHTTPProbers", Value: "yes"}}, Settings{}, "lenient-bool-ignored", true, "rewriteAppHTTPProbers", params{"value": "yes", "used": "true"}},
		{"rewriteAppHTTPProbers=yes, probes not rewritten by the installation", labDeployment, []input.Step{{Key: "sidecar.istio.io/rewriteAppHTTPProbers", Value: "yes"}}, Settings{Install: InstallOptions{Set: []string{"values.sidecarInjectorWebhook.rewriteAppHTTPProbe=false"}}},
			"lenient-bool-ignored", true, "rewriteAppHTTPProbers", params{"value": "yes", "used": "false"}},
		{"rewriteAppHTTPProbers=False", labDeployment, []input.Step{{Key: "sidecar.istio.io/rewriteAppHTTPProbers", Value: "False"}}, Settings{}, "lenient-bool-ignored", false, "", nil},

		{"excludeOutboundPorts=0", labDeployment, []input.Step{{Key: "traffic.sidecar.istio.io/excludeOutboundPorts", Value: "0"}}, Settings{}, "lenient-port-zero", true, "excludeOutboundPorts", params{"key": "traffic.sidecar.istio.io/excludeOutboundPorts"}},
		{"includeInboundPorts with 0 among others", labDeployment, []input.Step{{Key: "traffic.sidecar.istio.io/includeInboundPorts", Value: "8080, 0"}}, Settings{}, "lenient-port-zero", true, "includeInboundPorts", nil},
		{"excludeOutboundPorts=3306,6379", labDeployment, []input.Step{{Key: "traffic.sidecar.istio.io/excludeOutboundPorts", Value: "3306,6379"}}, Settings{}, "lenient-port-zero", false, "", nil},

		{"logLevel=loud", labDeployment, []input.Step{{Key: "sidecar.istio.io/logLevel", Value: "loud"}}, Settings{}, "lenient-unchecked", true, "logLevel", params{"key": "sidecar.istio.io/logLevel", "value": "loud", "kind": "enum", "enum": "trace, debug, info, warning, error, critical, off"}},
		{"includeOutboundPorts=eighty", labDeployment, []input.Step{{Key: "traffic.sidecar.istio.io/includeOutboundPorts", Value: "eighty"}}, Settings{}, "lenient-unchecked", true, "includeOutboundPorts", params{"kind": "port-list"}},
		{"statsHistogramBins=fifty", labDeployment, []input.Step{{Key: "sidecar.istio.io/statsHistogramBins", Value: "fifty"}}, Settings{}, "lenient-unchecked", true, "statsHistogramBins", params{"kind": "integer"}},
		{"logLevel=debug", labDeployment, []input.Step{{Key: "sidecar.istio.io/logLevel", Value: "debug"}}, Settings{}, "lenient-unchecked", false, "", nil},
		{"includeOutboundPorts=0 is port zero's", labDeployment, []input.Step{{Key: "traffic.sidecar.istio.io/includeOutboundPorts", Value: "0"}}, Settings{}, "lenient-unchecked", false, "", nil},
		{"status port with spaces, which Istio's validator takes", labDeployment, []input.Step{{Key: "status.sidecar.istio.io/port", Value: " 15021"}}, Settings{}, "lenient-unchecked", false, "", nil},
		{"nativeSidecar=TRUE is its own check's", labDeployment, []input.Step{{Key: "sidecar.istio.io/nativeSidecar", Value: "TRUE"}}, Settings{}, "lenient-unchecked", false, "", nil},
		// A value Istio's template cannot use fails the document with Istio's message: no finding.
		{"userVolume that is not JSON fails in Istio", labDeployment, []input.Step{{Key: "sidecar.istio.io/userVolume", Value: `{"v":`}}, Settings{}, "lenient-unchecked", false, "", nil},

		{"one resource annotation", labDeployment, []input.Step{{Key: "sidecar.istio.io/proxyCPU", Value: "200m"}}, Settings{}, "resource-annotation-drops-defaults", true, "resources", params{"set": "sidecar.istio.io/proxyCPU", "missing": "requests.memory, limits.cpu, limits.memory"}},
		{"all four resource annotations", labDeployment, []input.Step{{Key: "sidecar.istio.io/proxyCPU", Value: "200m"}, {Key: "sidecar.istio.io/proxyCPULimit", Value: "1"}, {Key: "sidecar.istio.io/proxyMemory", Value: "128Mi"}, {Key: "sidecar.istio.io/proxyMemoryLimit", Value: "1Gi"}}, Settings{}, "resource-annotation-drops-defaults", false, "", nil},
		{"no resource annotation", labDeployment, nil, Settings{}, "resource-annotation-drops-defaults", false, "", nil},

		{"a template that injects nothing", labDeployment, []input.Step{{Key: "inject.istio.io/templates", Value: "label-only"}}, Settings{Install: InstallOptions{Overlay: otherTemplates}},
			"template-injected-nothing", true, `annotations["sidecar.istio.io/status"]`, params{"cause": ""}},
		{"a template in Istio 1.1's [[ ]] delimiters", labDeployment, []input.Step{{Key: "inject.istio.io/templates", Value: "old"}}, Settings{Install: InstallOptions{Overlay: oldDelimitersTemplate}},
			"template-injected-nothing", true, `annotations["sidecar.istio.io/status"]`, params{"cause": "delimiters"}},
		// Istio 1.1's injector ConfigMap: its template is under "template:" (in [[ ]] too, but
		// the key is why nothing runs).
		{"an Istio 1.1 injector config", labDeployment, nil, Settings{Install: InstallOptions{Mesh: OwnMesh{InjectorConfig: istio11Config, Values: "{}", MeshConfig: "{}"}}},
			"template-injected-nothing", true, `annotations["sidecar.istio.io/status"]`, params{"cause": "template-key"}},
		{"the sidecar template", labDeployment, nil, Settings{}, "template-injected-nothing", false, "", nil},
		{"a template that injects a container of its own", labDeployment, []input.Step{{Key: "inject.istio.io/templates", Value: "logger"}}, Settings{Install: InstallOptions{Overlay: otherTemplates}}, "template-injected-nothing", false, "", nil},
		{"a pod Istio skips", labDeployment, []input.Step{{Key: "sidecar.istio.io/inject", Value: "false"}}, Settings{}, "template-injected-nothing", false, "", nil},

		{"an ignore naming no check", withPodAnnotation("        sidecarlab.dev/ignore: job-classic-sidecar,job-clasic-sidecar\n"), nil, Settings{},
			"ignore-unknown-check", true, `spec.template.metadata.annotations["sidecarlab.dev/ignore"]`, params{"id": "job-clasic-sidecar"}},
		{"an ignore naming checks", withPodAnnotation("        sidecarlab.dev/ignore: job-classic-sidecar, inject-value\n"), nil, Settings{}, "ignore-unknown-check", false, "", nil},

		{"an image written twice", strings.Replace(labDeployment, "        image: nginx\n", "        image: nginx\n        image: nginx:1.27\n", 1), nil, Settings{},
			"duplicate-key", true, "spec.template.spec.containers[app].image", params{"key": "spec.template.spec.containers[app].image", "lines": "16, 17", "value": "nginx:1.27"}},
		{"the same key in two mappings", withPodAnnotation("        app: lab\n"), nil, Settings{}, "duplicate-key", false, "", nil},

		// The waypoint checks (checks_waypoint_test.go has the rest): the policy is document 1.
		{"a policy of HTTP rules in ambient", authzPolicy(l7Rule) + "---\n" + waypointWorkload, nil, ambientNS,
			"ambient-needs-waypoint", true, "spec.rules[0].to[0].operation.methods", params{"action": "ALLOW", "attributes": "methods"}},
		{"a policy of HTTP rules outside ambient", authzPolicy(l7Rule) + "---\n" + waypointWorkload, nil, Settings{}, "ambient-needs-waypoint", false, "", nil},
		{"a policy of L4 rules in ambient", authzPolicy(l4Rule) + "---\n" + waypointWorkload, nil, ambientNS,
			"ambient-policy-l4", true, "spec.rules", params{"workloads": "Deployment shop/web"}},
		{"a policy of HTTP rules is not L4", authzPolicy(l7Rule) + "---\n" + waypointWorkload, nil, ambientNS, "ambient-policy-l4", false, "", nil},
	}
	tested := map[CheckID][2]bool{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := mustInject(t, e, []byte(c.manifest), c.steps, c.s)
			var got *Finding
			for i, f := range r.Findings {
				if f.Check == c.check {
					got = &r.Findings[i]
				}
			}
			if (got != nil) != c.fires {
				t.Fatalf("%s fired: %v, want %v (findings: %v)", c.check, got != nil, c.fires, r.Findings)
			}
			tt := tested[c.check]
			if c.fires {
				tt[0] = true
			} else {
				tt[1] = true
			}
			tested[c.check] = tt
			if got == nil {
				return
			}
			if !strings.Contains(got.Path, c.path) || got.Doc != 1 {
				t.Fatalf("finding %+v: want path containing %q in document 1", got, c.path)
			}
			for k, v := range c.params {
				if got.Params[k] != v {
					t.Fatalf("finding %+v: want param %s=%q", got, k, v)
				}
			}
			if got.Fix != nil && len(got.Fix.Steps) > 0 {
				fixed := mustInject(t, e, []byte(c.manifest), append(append([]input.Step(nil), c.steps...), got.Fix.Steps...), c.s)
				for _, f := range fixed.Findings {
					if f.Check == c.check {
						t.Fatalf("the fix %v did not clear the finding: %v", got.Fix.Steps, f)
					}
				}
			}
		})
	}
	for _, c := range Checks() {
		if tt := tested[c.ID]; !tt[0] || !tt[1] {
			t.Errorf("check %s lacks a case that trips it (%v) or one that does not (%v)", c.ID, tt[0], tt[1])
		}
	}
}

// TestOldTemplateKey: a config with "template:" alone is older Istio's; one that has both keys
// (Istio's charts since the named templates) or only "templates:" is not, nor a bare template.
func TestOldTemplateKey(t *testing.T) {
	for in, want := range map[string]bool{
		istio11Config: true,
		"policy: enabled\ntemplate: \"{{ Template_Version_And_Istio_Version_Mismatched_Check_Installation }}\"\ntemplates:\n  sidecar: |\n    spec: {}\n": false,
		"templates:\n  sidecar: |\n    spec: {}\n":                  false,
		"template: x\ntemplates: {}\n":                              true,
		"containers:\n- name: istio-proxy\n  image: [[ .Image ]]\n": false,
		"values:\n  template: x\n":                                  false,
		"not: [valid":                                               false,
	} {
		if got := oldTemplateKey(in); got != want {
			t.Errorf("oldTemplateKey(%q) = %v, want %v", in, got, want)
		}
	}
}

// TestOldDelimiters: Istio 1.1's [[ ]] actions are told from YAML's nested flow sequences and
// from Go's {{ }}.
func TestOldDelimiters(t *testing.T) {
	for in, want := range map[string]bool{
		"image: [[ .ProxyConfig.Image ]]":                    true,
		"[[- if eq .Values.x true ]]":                        true,
		"[[ $holdProxy := .Values.hold ]]":                   true,
		"args: [[1, 2], [3]]":                                false,
		"image: {{ .ProxyImage }}":                           false,
		"no brackets at all":                                 false,
		"ports: [[8080]] then [[ end ]]":                     true,
		"a YAML list [[a, b]] and Go's {{ if .X }}{{ end }}": false,
	} {
		if got := oldDelimiters(in); got != want {
			t.Errorf("oldDelimiters(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestClosest(t *testing.T) {
	cands := []string{"sidecar.istio.io/proxyCPU", "sidecar.istio.io/proxyMemory", "sidecar.istio.io/inject"}
	cases := map[string]string{
		"sidecar.istio.io/proxyCpu":  "sidecar.istio.io/proxyCPU",
		"sidecar.istio.io/injekt":    "sidecar.istio.io/inject",
		"sidecar.istio.io/something": "",
	}
	for in, want := range cases {
		if got := catalog.Closest(in, cands); got != want {
			t.Errorf("closest(%q) = %q, want %q", in, got, want)
		}
	}
}
