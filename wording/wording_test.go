package wording

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/input"

	istiolog "istio.io/istio/pkg/log"

	"github.com/sidecarlab/sidecarlab/engine"
)

// variantParam chooses which of a check's messages a finding gets; it is not in the words.
const variantParam = "cause"

func TestMain(m *testing.M) {
	// Istio's library logs its fake clusters; keep test output readable.
	o := istiolog.DefaultOptions()
	o.SetDefaultOutputLevel(istiolog.OverrideScopeName, istiolog.NoneLevel)
	_ = istiolog.Configure(o)
	os.Exit(m.Run())
}

// findingCases are a finding of every check, with the parameters the engine gives it, and
// phrases its sentence (and fix) must carry.
var findingCases = []struct {
	check    engine.CheckID
	params   map[string]string
	fix      bool
	message  []string
	fixWords string
}{
	{"workload-metadata-annotation", map[string]string{"key": "sidecar.istio.io/proxyCPU", "kind": "Deployment", "readFrom": "spec.template.metadata.annotations"}, true,
		[]string{"sidecar.istio.io/proxyCPU is on the Deployment's own metadata", "spec.template.metadata.annotations", "no effect"}, "pod template"},
	{"cronjob-pod-template-annotation", map[string]string{"key": "sidecar.istio.io/proxyMemory"}, true,
		[]string{"sidecar.istio.io/proxyMemory", "spec.jobTemplate.metadata"}, "spec.jobTemplate.metadata"},
	{"unknown-istio-annotation", map[string]string{"key": "sidecar.istio.io/proxyCpu", "suggestion": "sidecar.istio.io/proxyCPU"}, true,
		[]string{"sidecar.istio.io/proxyCpu is not an annotation Istio knows", "Did you mean sidecar.istio.io/proxyCPU?"}, "Use sidecar.istio.io/proxyCPU."},
	{"deprecated-annotation", map[string]string{"key": "sidecar.istio.io/inject", "description": "Specifies whether or not an Envoy sidecar should be automatically injected into the workload."}, true,
		[]string{"annotation sidecar.istio.io/inject is deprecated", "automatically injected", "label of the same name on the pod template is preferred", "annotation still works", "the label wins"}, "label"},
	{"deprecated-annotation", map[string]string{"key": "sidecar.istio.io/extraStat", "description": "Retired."}, false,
		[]string{"sidecar.istio.io/extraStat is deprecated in Istio's catalog: Retired."}, ""},
	{"inject-value", map[string]string{"value": "no", "result": "injected"}, true, []string{`"no"`, "default injection policy", "the pod IS injected"}, `"true" or "false"`},
	{"inject-value", map[string]string{"value": "False", "result": "skipped"}, true, []string{`"False"`, "exactly \"true\" and \"false\"", "this pod is skipped for another reason"}, `"true" or "false"`},
	{"lenient-native-sidecar", map[string]string{"key": "sidecar.istio.io/nativeSidecar", "value": "False"}, true,
		[]string{`sidecar.istio.io/nativeSidecar is "False"`, `every value except exactly "false"`, "native sidecar"}, `"true" or "false"`},
	{"lenient-bool-read", map[string]string{"key": "prometheus.istio.io/merge-metrics", "value": "False", "read": "false"}, false,
		[]string{"strconv.ParseBool", `takes "False" as false`, "honoured"}, ""},
	{"lenient-bool-ignored", map[string]string{"key": "sidecar.istio.io/rewriteAppHTTPProbers", "value": "yes", "used": "true"}, true,
		[]string{`is "yes"`, "ignored it", "rewriteAppHTTPProbe = true"}, `"true" or "false"`},
	{"lenient-port-zero", map[string]string{"key": "traffic.sidecar.istio.io/excludeOutboundPorts"}, true,
		[]string{"names port 0", "istio-init", "matches nothing"}, "Remove port 0"},
	{"lenient-unchecked", map[string]string{"key": "sidecar.istio.io/logLevel", "value": "loud", "kind": "enum", "enum": "trace, debug"}, false,
		[]string{`is "loud"`, "does not fit its kind, enum (one of trace, debug)", "no check"}, ""},
	{"lenient-unchecked", map[string]string{"key": "sidecar.istio.io/statsHistogramBins", "value": "fifty", "kind": "integer"}, false,
		[]string{`is "fifty"`, "does not fit its kind, integer;", "as written"}, ""},
	{"unknown-proxy-config-field", map[string]string{"field": "holdApplicationUntilProxyStart", "suggestion": "holdApplicationUntilProxyStarts"}, true,
		[]string{`no field "holdApplicationUntilProxyStart"`, `Did you mean "holdApplicationUntilProxyStarts"?`}, "Use holdApplicationUntilProxyStarts."},
	{"hold-swallowed-by-global-lifecycle", nil, true, []string{"values.global.proxy.lifecycle", "pilot-agent wait"}, "postStart"},
	{"hold-ignored-native-sidecar", nil, false, []string{"no effect on a native sidecar"}, ""},
	{"job-classic-sidecar", nil, true, []string{"never completes", "quitquitquit"}, "native sidecar"},
	{"native-sidecar-unsupported", map[string]string{"version": "1.28"}, true, []string{"1.29 or later", "on 1.28"}, "Opt out"},
	{"webhook-auto-stays-classic", map[string]string{"version": "1.30"}, false, []string{"1.33 or later", "1.30 nodes"}, ""},
	{"resource-annotation-drops-defaults", map[string]string{"set": "sidecar.istio.io/proxyCPU", "missing": "requests.memory, limits.cpu, limits.memory"}, false,
		[]string{"With sidecar.istio.io/proxyCPU set", "no requests.memory, limits.cpu, limits.memory"}, ""},
	{"template-injected-nothing", nil, false, []string{"sidecar.istio.io/status", "no istio-proxy", "outside the mesh"}, ""},
	{"template-injected-nothing", map[string]string{"cause": "delimiters"}, false, []string{"[[ ]] delimiters of Istio 1.1 and older", "Go templates' double braces", "never makes the sidecar"}, ""},
	{"template-injected-nothing", map[string]string{"cause": "template-key"}, false, []string{`under "template:"`, `no "templates:"`, "injection templates are empty", "runs the whole file as one template"}, ""},
	{"ignore-unknown-check", map[string]string{"id": "job-clasic-sidecar"}, false, []string{`names "job-clasic-sidecar"`, "ignores nothing"}, ""},
	{"duplicate-key", map[string]string{"key": "spec.replicas", "lines": "6, 7", "value": "3"}, false, []string{"spec.replicas", "lines 6, 7", "keeps the last, 3"}, ""},
	{"ambient-needs-waypoint", map[string]string{"kind": "AuthorizationPolicy", "name": "pol", "namespace": "shop", "workloads": "Deployment shop/web", "action": "ALLOW", "attributes": "methods, paths"}, false,
		[]string{"AuthorizationPolicy shop/pol on Deployment shop/web needs a waypoint", "(methods, paths)", "ALLOW policy without the rules", "allows less"}, ""},
	{"ambient-needs-waypoint", map[string]string{"kind": "AuthorizationPolicy", "name": "pol", "namespace": "shop", "workloads": "Deployment shop/web", "action": "DENY", "attributes": "requestPrincipals"}, false,
		[]string{"DENY policy", "without their HTTP attributes", "denies more"}, ""},
	{"ambient-needs-waypoint", map[string]string{"kind": "AuthorizationPolicy", "name": "ext", "namespace": "shop", "workloads": "Deployment shop/web", "action": "CUSTOM"}, false,
		[]string{"does not support the CUSTOM action"}, ""},
	{"ambient-needs-waypoint", map[string]string{"kind": "AuthorizationPolicy", "name": "pol", "namespace": "shop", "workloads": "Deployment shop/web", "target": "Service/web"}, false,
		[]string{"is a waypoint's", "targetRefs (Service/web)"}, ""},
	{"ambient-needs-waypoint", map[string]string{"kind": "AuthorizationPolicy", "name": "pol", "namespace": "shop", "workloads": "Deployment shop/web", "key": "istio.io/dry-run"}, false,
		[]string{"dry run (istio.io/dry-run)", "AMBIENT_ENABLE_DRY_RUN_AUTHORIZATION_POLICY"}, ""},
	{"ambient-needs-waypoint", map[string]string{"kind": "VirtualService", "name": "vs", "namespace": "shop", "workloads": "Deployment shop/web"}, false,
		[]string{"VirtualService shop/vs routes", "only through a waypoint"}, ""},
	{"ambient-needs-waypoint", map[string]string{"kind": "HTTPRoute", "name": "r", "namespace": "shop", "workloads": "Deployment shop/web"}, false,
		[]string{"HTTPRoute shop/r on the Service", "waypoint"}, ""},
	{"ambient-needs-waypoint", map[string]string{"kind": "RequestAuthentication", "name": "jwt", "namespace": "shop", "workloads": "Deployment shop/web"}, false,
		[]string{"does not read JWTs"}, ""},
	{"ambient-needs-waypoint", map[string]string{"kind": "Telemetry", "name": "logs", "namespace": "istio-system", "workloads": "Deployment shop/web"}, false,
		[]string{"Envoy's telemetry"}, ""},
	{"ambient-policy-l4", map[string]string{"kind": "AuthorizationPolicy", "name": "pol", "namespace": "shop", "workloads": "Deployment shop/web"}, false,
		[]string{"ztunnel enforces AuthorizationPolicy shop/pol on Deployment shop/web as written", "no waypoint"}, ""},
}

// TestFindingWords: every check the engine has is worded (summary, sentence, fix), the sentence
// names every parameter, and a check without a suggestion says nothing about one.
func TestFindingWords(t *testing.T) {
	cased := map[engine.CheckID]bool{}
	for _, c := range findingCases {
		t.Run(string(c.check), func(t *testing.T) {
			cased[c.check] = true
			f := engine.Finding{Check: c.check, Severity: engine.SeverityWarning, Doc: 2, Path: "spec.x", Params: c.params}
			if c.fix {
				f.Fix = &engine.Fix{}
			}
			msg := English.Message(f)
			for _, want := range c.message {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q lacks %q", msg, want)
				}
			}
			for k, v := range c.params {
				if k != variantParam && !strings.Contains(msg+" "+English.FixText(f), v) {
					t.Errorf("param %s=%q is not in the words: %q", k, v, msg)
				}
			}
			if got := English.FixText(f); (got != "") != c.fix || !strings.Contains(got, c.fixWords) {
				t.Errorf("fix %q, want one containing %q (fix: %v)", got, c.fixWords, c.fix)
			}
			f.Fix = nil
			if got := English.FixText(f); got != "" {
				t.Errorf("a finding without a fix has fix words %q", got)
			}
			if c.params["key"] != "sidecar.istio.io/inject" && strings.Contains(msg, "still works") {
				t.Errorf("%s: the inject annotation's words on another key: %q", c.params["key"], msg)
			}
			if s := English.Gist(f); s == "" || !strings.HasPrefix(msg, s) || (len(s) >= len(msg) && len(msg) > 90) {
				t.Errorf("short words %q of %q", s, msg)
			}
			if English.Summary(c.check) == "" {
				t.Error("no summary")
			}
			line := English.Line(engine.Finding{Check: c.check, Severity: engine.SeverityError, Doc: 2, Path: "spec.x", Params: c.params})
			if !strings.HasPrefix(line, "error ["+string(c.check)+"] document 2 spec.x: ") || !strings.Contains(line, msg) {
				t.Errorf("line %q", line)
			}
			// Every language words it too, with every parameter, in words of its own.
			f.Fix = &engine.Fix{}
			if !c.fix {
				f.Fix = nil
			}
			for _, w := range others {
				m, fix := w.Message(f), w.FixText(f)
				if m == msg || (fix != "" && fix == English.FixText(f)) || (fix != "") != c.fix {
					t.Errorf("%s: %q, fix %q: not its own words", w.l.Lang(), m, fix)
				}
				noTemplateGap(t, w.l.Lang(), m+" "+fix)
				for k, v := range c.params {
					if k != "result" && k != variantParam && !strings.Contains(m+" "+fix, v) {
						t.Errorf("%s: param %s=%q is not in the words: %q", w.l.Lang(), k, v, m)
					}
				}
				if s := w.Gist(f); s == "" || !strings.HasPrefix(m, s) {
					t.Errorf("%s: gist %q of %q", w.l.Lang(), s, m)
				}
				if s := w.Summary(c.check); s == "" || s == English.Summary(c.check) {
					t.Errorf("%s: summary %q", w.l.Lang(), s)
				}
			}
		})
	}
	for _, c := range engine.Checks() {
		if !cased[c.ID] {
			t.Errorf("check %s has no case here", c.ID)
		}
	}
	for id := range checks {
		if !cased[id] {
			t.Errorf("words for %s, which is not a check", id)
		}
	}
	noMissing(t)
	// Without a suggestion, no "Did you mean".
	for _, id := range []engine.CheckID{engine.CheckUnknownIstioAnnotation, engine.CheckUnknownProxyConfigField} {
		if m := English.Message(engine.Finding{Check: id, Params: map[string]string{"key": "a.istio.io/x", "field": "x"}}); strings.Contains(m, "Did you mean") {
			t.Errorf("%s without a suggestion: %q", id, m)
		}
	}
}

// TestIgnored: the note on findings the manifest ignored counts them, and says nothing for none.
func TestIgnored(t *testing.T) {
	for n, want := range map[int]string{0: "", 1: "1 finding ignored by the manifest", 3: "3 findings ignored by the manifest"} {
		if got := English.Ignored(n); !strings.HasPrefix(got, want) || (want == "") != (got == "") {
			t.Errorf("English.Ignored(%d) = %q, want %q…", n, got, want)
		}
	}
}

// TestFindingsJSON: the JSON of a worded finding keeps the engine's fields and adds the words
// where API clients read them (message, fix.text).
func TestFindingsJSON(t *testing.T) {
	fs := English.Findings([]engine.Finding{{Check: "job-classic-sidecar", Severity: engine.SeverityError, Doc: 1, Path: "p",
		Fix: &engine.Fix{Steps: []input.Step{{Key: "sidecar.istio.io/nativeSidecar", Value: "true"}}}}})
	if len(fs) != 1 || fs[0].Check != "job-classic-sidecar" || fs[0].Message != English.Message(fs[0].Finding) ||
		fs[0].Fix == nil || fs[0].Fix.Text == "" || len(fs[0].Fix.Steps) != 1 {
		t.Fatalf("%+v", fs)
	}
}

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: app
        image: nginx
`

const job = `apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: migrate
        image: busybox
`

// TestLifecycleWords runs the engine on the cases that give every lifecycle event and verdict
// reason and checks each is worded, and that no words are left for an id the engine never gives.
func TestLifecycleWords(t *testing.T) {
	e, err := engine.New(context.Background(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	hold := input.Step{Key: "proxy.istio.io/config", Value: "holdApplicationUntilProxyStarts: true"}
	lifecycle := `apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
spec:
  values:
    global:
      proxy:
        lifecycle:
          preStop:
            exec:
              command: ["sleep", "5"]
`
	postStartOnly := strings.Replace(lifecycle, "preStop:\n            exec:\n              command: [\"sleep\", \"5\"]", "postStart:\n            exec:\n              command: [\"pilot-agent\", \"wait\"]", 1)
	cases := []struct {
		manifest string
		steps    []input.Step
		s        engine.Settings
	}{
		{deployment, nil, engine.Settings{}},
		{deployment, []input.Step{hold}, engine.Settings{}},
		{deployment, []input.Step{hold}, engine.Settings{Install: engine.InstallOptions{Overlay: lifecycle}}},
		{deployment, nil, engine.Settings{Mode: engine.ModeNative}},
		{deployment, nil, engine.Settings{Mode: engine.ModeNative, Install: engine.InstallOptions{Set: []string{"values.global.proxy.startupProbe.enabled=false"}}}},
		{deployment, []input.Step{{Key: "sidecar.istio.io/inject", Value: "false"}}, engine.Settings{}},
		{job, nil, engine.Settings{}},
		{job, nil, engine.Settings{Mode: engine.ModeNative}},
		// A global lifecycle without preStop replaces the native proxy's drain.
		{deployment, nil, engine.Settings{Mode: engine.ModeNative, Install: engine.InstallOptions{Overlay: postStartOnly}}},
	}
	seen := map[[2]string]bool{}
	seenEvents := map[string]bool{}
	for _, c := range cases {
		r, err := e.Inject(t.Context(), []byte(c.manifest), c.steps, c.s)
		if err != nil {
			t.Fatal(err)
		}
		// Every language words every event and verdict, with its params.
		for _, w := range others {
			for _, l := range w.Lifecycles(engine.Lifecycles(r.Documents)) {
				for _, ev := range append(l.Start, l.Stop...) {
					noTemplateGap(t, w.l.Lang()+" "+ev.Event.Event, ev.What+" "+ev.Short)
					if ev.What == "" || ev.Short == "" || ev.What == English.What(ev.Event) {
						t.Errorf("%s event %s is not worded: %+v", w.l.Lang(), ev.Event.Event, ev)
					}
					for k, p := range ev.Params {
						if p != "" && !strings.Contains(ev.What, p) {
							t.Errorf("%s event %s: param %s=%q is not in %q", w.l.Lang(), ev.Event.Event, k, p, ev.What)
						}
					}
				}
				for _, v := range l.Verdicts {
					en := English.Why(v.Verdict)
					if v.Question == v.ID || v.Question == English.Question(v.Verdict) || v.Why == "" || v.Why == en {
						t.Errorf("%s verdict %s/%s is not worded: %+v", w.l.Lang(), v.ID, v.Reason, v)
					}
					noTemplateGap(t, w.l.Lang()+" "+v.ID, v.Why)
					for k, p := range v.Params {
						if p != "" && !strings.Contains(v.Why, p) {
							t.Errorf("%s verdict %s/%s: param %s=%q is not in %q", w.l.Lang(), v.ID, v.Reason, k, p, v.Why)
						}
					}
				}
			}
		}
		for _, l := range English.Lifecycles(engine.Lifecycles(r.Documents)) {
			for _, ev := range append(l.Start, l.Stop...) {
				seenEvents[ev.Event.Event] = true
				if _, ok := events[ev.Event.Event]; !ok || ev.What == "" || ev.Short == "" {
					t.Errorf("event %s is not worded: %+v", ev.Event.Event, ev)
				}
				for k, p := range ev.Params {
					if p != "" && !strings.Contains(ev.What, p) {
						t.Errorf("event %s: param %s=%q is not in %q", ev.Event.Event, k, p, ev.What)
					}
				}
			}
			for _, v := range l.Verdicts {
				seen[[2]string{v.ID, v.Reason}] = true
				if _, ok := reasons[v.ID][v.Reason]; !ok || v.Question == v.ID || v.Why == "" {
					t.Errorf("verdict %s/%s is not worded: %+v", v.ID, v.Reason, v)
				}
				for k, p := range v.Params {
					if p != "" && !strings.Contains(v.Why, p) {
						t.Errorf("verdict %s/%s: param %s=%q is not in %q", v.ID, v.Reason, k, p, v.Why)
					}
				}
			}
		}
	}
	noMissing(t)
	for id := range events {
		if !seenEvents[id] {
			t.Errorf("words for lifecycle event %s, which no case gave", id)
		}
	}
	for id, rs := range reasons {
		if questions[id] == "" {
			t.Errorf("no question for %s", id)
		}
		for r := range rs {
			if !seen[[2]string{id, r}] {
				t.Errorf("words for verdict %s/%s, which no case gave", id, r)
			}
		}
	}
}
