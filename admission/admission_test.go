package admission

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	istiolog "istio.io/istio/pkg/log"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/ambient"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

var (
	adm        *Admitter
	testEngine *engine.Engine
)

func TestMain(m *testing.M) {
	testkit.CollectLess()
	o := istiolog.DefaultOptions()
	o.SetDefaultOutputLevel(istiolog.OverrideScopeName, istiolog.NoneLevel)
	_ = istiolog.Configure(o)
	e, err := engine.New(context.Background(), engine.Options{})
	if err != nil {
		panic(err)
	}
	adm, testEngine = New(e), e
	code := m.Run()
	adm.Close()
	e.Close()
	os.Exit(code)
}

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
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
`

func admitOne(t *testing.T, manifest string, s engine.Settings, ns engine.Namespace) Result {
	t.Helper()
	s.Namespace = ns
	rs, err := adm.Admit(t.Context(), []byte(manifest), nil, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 {
		t.Fatalf("%d results", len(rs))
	}
	if rs[0].Error != "" {
		t.Fatal(rs[0].Error)
	}
	return rs[0]
}

func called(r Result) []string {
	var out []string
	for _, w := range r.Webhooks {
		if w.Called {
			out = append(out, w.Name)
		}
	}
	return out
}

func TestWebhookSelection(t *testing.T) {
	cases := []struct {
		name     string
		ns       engine.Namespace
		podLabel string
		want     string // the webhook called, "" for none
		injected bool
	}{
		{"namespace labelled istio-injection=enabled", engine.Namespace{Name: "shop", Labels: map[string]string{"istio-injection": "enabled"}}, "", "namespace.sidecar-injector.istio.io", true},
		{"namespace without a label", engine.Namespace{Name: "shop"}, "", "", false},
		{"namespace with istio.io/rev=default", engine.Namespace{Name: "shop", Labels: map[string]string{"istio.io/rev": "default"}}, "", "rev.namespace.sidecar-injector.istio.io", true},
		{"namespace with another revision", engine.Namespace{Name: "shop", Labels: map[string]string{"istio.io/rev": "canary"}}, "", "", false},
		{"pod label inject=false in an enabled namespace", engine.Namespace{Name: "shop", Labels: map[string]string{"istio-injection": "enabled"}}, "sidecar.istio.io/inject: \"false\"", "", false},
		{"pod label inject=true, namespace unlabelled", engine.Namespace{Name: "shop"}, "sidecar.istio.io/inject: \"true\"", "object.sidecar-injector.istio.io", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := deployment
			if c.podLabel != "" {
				m = strings.Replace(m, "labels: {app: web}\n    spec:", "labels: {app: web, "+c.podLabel+"}\n    spec:", 1)
			}
			r := admitOne(t, m, engine.Settings{}, c.ns)
			got := strings.Join(called(r), ",")
			if got != c.want {
				t.Fatalf("webhooks called: %q, want %q", got, c.want)
			}
			if r.Injected != c.injected {
				t.Fatalf("injected %v, want %v", r.Injected, c.injected)
			}
			if !r.Admitted {
				t.Fatalf("not admitted: %v", r.Violations)
			}
		})
	}
}

func TestPodSecurity(t *testing.T) {
	baseline := engine.Namespace{Name: "shop", Labels: map[string]string{"istio-injection": "enabled", "pod-security.kubernetes.io/enforce": "baseline"}}
	r := admitOne(t, deployment, engine.Settings{}, baseline)
	if !r.Injected || r.Admitted {
		t.Fatalf("baseline, classic injection: injected %v admitted %v, want injected and rejected", r.Injected, r.Admitted)
	}
	if len(r.Violations) == 0 || !strings.Contains(r.Violations[0], `violates PodSecurity "baseline:latest"`) || !strings.Contains(r.Violations[0], "NET_ADMIN") {
		t.Fatalf("violations: %q", r.Violations)
	}
	// With Istio CNI, istio-init is gone and baseline admits the pod.
	cni := engine.Settings{Install: engine.InstallOptions{Set: []string{"components.cni.enabled=true"}}}
	r = admitOne(t, deployment, cni, baseline)
	if !r.Injected || !r.Admitted {
		t.Fatalf("baseline with CNI: injected %v admitted %v (%q), want injected and admitted", r.Injected, r.Admitted, r.Violations)
	}
	// Not injected at all: baseline admits the plain pod.
	r = admitOne(t, deployment, engine.Settings{}, engine.Namespace{Name: "shop", Labels: map[string]string{"pod-security.kubernetes.io/enforce": "baseline"}})
	if r.Injected || !r.Admitted {
		t.Fatalf("baseline, not injected: injected %v admitted %v", r.Injected, r.Admitted)
	}
	// restricted rejects even the CNI pod (the charts' seccompProfile is empty).
	restricted := engine.Namespace{Name: "shop", Labels: map[string]string{"istio-injection": "enabled", "pod-security.kubernetes.io/enforce": "restricted"}}
	r = admitOne(t, deployment, cni, restricted)
	if r.Admitted {
		t.Fatal("restricted admitted the injected pod")
	}
	t.Logf("restricted, CNI: %q", r.Violations)
	// audit (and warn) only record: the pod the audit level finds fault with is admitted, and
	// the violation is reported beside it, as the API server's audit annotation has it.
	audit := engine.Namespace{Name: "shop", Labels: map[string]string{"istio-injection": "enabled", "pod-security.kubernetes.io/audit": "baseline"}}
	r = admitOne(t, deployment, engine.Settings{}, audit)
	if !r.Injected || !r.Admitted || len(r.Violations) == 0 || !strings.Contains(strings.Join(r.Violations, " "), "NET_ADMIN") {
		t.Fatalf("audit=baseline, classic injection: injected %v admitted %v violations %q, want injected, admitted, the audit's violation reported", r.Injected, r.Admitted, r.Violations)
	}
}

// TestTraceMatchesWebhook runs a matrix of namespaces × pod labels and annotations × host
// networking × installations (revision, policy, selectors, namespaces enabled by default) and
// fails if the trace's rule ever disagrees with what the real webhook path did.
func TestTraceMatchesWebhook(t *testing.T) {
	installs := map[string]engine.Settings{
		"default":      {},
		"revision":     {Install: engine.InstallOptions{Set: []string{"revision=canary"}}},
		"revision-tag": {Install: engine.InstallOptions{Set: []string{"revision=canary", "values.revisionTags[0]=prod"}}},
		"policy-off":   {Install: engine.InstallOptions{Set: []string{"values.global.proxy.autoInject=disabled"}}},
		"by-default":   {Install: engine.InstallOptions{Set: []string{"values.sidecarInjectorWebhook.enableNamespacesByDefault=true"}}},
		"selectors": {Install: engine.InstallOptions{Overlay: `apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
spec:
  values:
    sidecarInjectorWebhook:
      neverInjectSelector:
      - matchExpressions: [{key: team, operator: In, values: [batch]}]
      alwaysInjectSelector:
      - matchLabels: {always: "yes"}
`}},
	}
	namespaces := []engine.Namespace{
		{Name: "plain"},
		{Name: "on", Labels: map[string]string{"istio-injection": "enabled"}},
		{Name: "off", Labels: map[string]string{"istio-injection": "disabled"}},
		{Name: "rev-default", Labels: map[string]string{"istio.io/rev": "default"}},
		{Name: "rev-canary", Labels: map[string]string{"istio.io/rev": "canary"}},
		{Name: "tag-prod", Labels: map[string]string{"istio.io/rev": "prod"}},
		{Name: "kube-system", Labels: map[string]string{"istio-injection": "enabled"}},
	}
	podLabels := []string{"", `sidecar.istio.io/inject: "true"`, `sidecar.istio.io/inject: "false"`, `sidecar.istio.io/inject: "no"`, `istio.io/rev: canary`, `team: batch`, `always: "yes"`}
	podAnnotations := []string{"", `sidecar.istio.io/inject: "true"`, `sidecar.istio.io/inject: "false"`, `sidecar.istio.io/inject: "no"`}
	var docs []string
	for _, l := range podLabels {
		for _, a := range podAnnotations {
			for _, host := range []bool{false, true} {
				d := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels: {app: p"
				if l != "" {
					d += ", " + l
				}
				d += "}\n"
				if a != "" {
					d += "  annotations: {" + a + "}\n"
				}
				d += "spec:\n"
				if host {
					d += "  hostNetwork: true\n"
				}
				d += "  containers: [{name: app, image: nginx}]\n"
				docs = append(docs, d)
			}
		}
	}
	manifest := strings.Join(docs, "---\n")
	counts := map[string]int{}
	for name, s := range installs {
		for _, ns := range namespaces {
			s.Namespace = ns
			rs, err := adm.Admit(t.Context(), []byte(manifest), nil, s)
			if err != nil {
				t.Fatalf("%s/%s: %v", name, ns.Name, err)
			}
			for _, r := range rs {
				for _, st := range r.Trace {
					if !slices.Contains(TraceIDs(), st.ID) {
						t.Fatalf("trace rule %q is not in TraceIDs", st.ID)
					}
				}
				if r.Error != "" {
					t.Fatalf("%s/%s doc %d: %s", name, ns.Name, r.Doc, r.Error)
				}
				predicted, decided := false, ""
				for _, st := range r.Trace {
					if v, ok := st.Params["inject"]; ok {
						predicted, decided = v == "true", st.ID
					}
				}
				if r.Injected != predicted {
					t.Errorf("%s, namespace %s, doc %d (%s): the webhook path injected=%v, the trace's rule %q says %v\n%s", name, ns.Name, r.Doc, docLine(docs[r.Doc-1]), r.Injected, decided, predicted, traceText(r))
				}
				last := r.Trace[len(r.Trace)-1].ID
				if last == "admitted" || last == "rejected-pod-security" {
					last = r.Trace[len(r.Trace)-2].ID
				}
				counts[last]++
				if decided != "" {
					counts[decided]++
				}
			}
		}
	}
	// The matrix reaches every rule; otherwise it proves less than it claims.
	for _, id := range []string{"injected", "not-injected-no-webhook", "not-injected-policy", "policy-host-network", "policy-ignored-namespace",
		"policy-label", "policy-annotation", "policy-never-selector", "policy-always-selector", "policy-default"} {
		if counts[id] == 0 {
			t.Errorf("no case of the matrix ends in %q", id)
		}
	}
	t.Logf("outcomes: %v", counts)
}

func docLine(d string) string { return strings.Join(strings.Fields(d), " ") }

func traceText(r Result) string {
	var b strings.Builder
	for _, s := range r.Trace {
		b.WriteString("  " + s.ID)
		for k, v := range s.Params {
			b.WriteString(" " + k + "=" + v)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestWebhookConfigurations: the installations render their MutatingWebhookConfigurations (a
// revision tag its own), and none has matchConditions, which the selection here does not
// evaluate: if a chart ever renders one, this fails, so it is noticed rather than ignored.
func TestWebhookConfigurations(t *testing.T) {
	e, err := engine.New(t.Context(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	cases := []struct {
		set  []string
		want []string
	}{
		{nil, []string{"istio-sidecar-injector"}},
		{[]string{"revision=canary"}, []string{"istio-sidecar-injector-canary"}},
		{[]string{"revision=canary", "values.revisionTags[0]=prod"}, []string{"istio-sidecar-injector-canary", "istio-revision-tag-prod"}},
		{[]string{"values.sidecarInjectorWebhook.enableNamespacesByDefault=true"}, []string{"istio-sidecar-injector"}},
	}
	for _, c := range cases {
		in, err := e.Install(t.Context(), engine.InstallOptions{Set: c.set})
		if err != nil {
			t.Fatal(err)
		}
		cs, err := in.WebhookConfigurations()
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, mwc := range cs {
			names = append(names, mwc.Name)
			for _, h := range mwc.Webhooks {
				if len(h.MatchConditions) > 0 {
					t.Errorf("%v: webhook %s has matchConditions, which the simulated selection does not evaluate", c.set, h.Name)
				}
			}
		}
		if strings.Join(names, ",") != strings.Join(c.want, ",") {
			t.Errorf("%v: configurations %v, want %v", c.set, names, c.want)
		}
	}
}

// TestHintAnnotationNotLabel: a Pod that asks for injection with the annotation in an unlabelled
// namespace is not injected, and the trace says the selectors read labels; with the label it is
// injected and there is no such hint.
func TestHintAnnotationNotLabel(t *testing.T) {
	ns := engine.Namespace{Name: "shop"}
	annotated := strings.Replace(deployment, "      labels: {app: web}\n", "      labels: {app: web}\n      annotations: {sidecar.istio.io/inject: \"true\"}\n", 1)
	r := admitOne(t, annotated, engine.Settings{}, ns)
	if r.Injected || r.Trace[len(r.Trace)-2].ID != "hint-annotation-not-label" {
		t.Fatalf("annotated: injected %v\n%s", r.Injected, traceText(r))
	}
	// The one-click fix (LabelInsteadOfAnnotation) makes it injected.
	moved, err := LabelInsteadOfAnnotation([]byte(annotated))
	if err != nil {
		t.Fatal(err)
	}
	if r := admitOne(t, string(moved), engine.Settings{}, ns); !r.Injected {
		t.Fatalf("after the label fix: not injected\n%s", traceText(r))
	}
	labelled := strings.Replace(deployment, "labels: {app: web}\n    spec:", "labels: {app: web, sidecar.istio.io/inject: \"true\"}\n    spec:", 1)
	r = admitOne(t, labelled, engine.Settings{}, ns)
	if !r.Injected || slices.ContainsFunc(r.Trace, func(s Step) bool { return s.ID == "hint-annotation-not-label" }) {
		t.Fatalf("labelled: injected %v\n%s", r.Injected, traceText(r))
	}
	if r = admitOne(t, deployment, engine.Settings{}, ns); slices.ContainsFunc(r.Trace, func(s Step) bool { return s.ID == "hint-annotation-not-label" }) {
		t.Fatalf("neither: a hint\n%s", traceText(r))
	}
}

// TestAPIServerDefaults: the API server defaults the Pod before the webhooks see it and after
// their patch, so Pod Security judges Istio's source-less volumes as the emptyDirs they become,
// and the webhook sees the ports' default protocol. Without the defaults the same Pod shows a
// "restricted volume type" that no cluster would report.
func TestAPIServerDefaults(t *testing.T) {
	s := engine.Settings{Install: engine.InstallOptions{Set: []string{"components.cni.enabled=true"}},
		Namespace: engine.Namespace{Name: "shop", Labels: map[string]string{"istio-injection": "enabled", "pod-security.kubernetes.io/enforce": "restricted"}}}
	withPort := strings.Replace(deployment, "image: nginx\n", "image: nginx\n        ports: [{containerPort: 8080}]\n", 1)
	violations := func(a *Admitter) (string, *corev1.Pod) {
		rs, err := a.Admit(t.Context(), []byte(withPort), nil, s)
		if err != nil {
			t.Fatal(err)
		}
		if rs[0].Admitted || !rs[0].Injected {
			t.Fatalf("restricted: injected %v admitted %v", rs[0].Injected, rs[0].Admitted)
		}
		return strings.Join(rs[0].Violations, "\n"), rs[0].Final
	}
	got, final := violations(adm)
	if strings.Contains(got, "restricted volume types") || !strings.Contains(got, "seccompProfile") {
		t.Errorf("with the API server's defaults: %s", got)
	}
	for _, v := range final.Spec.Volumes {
		if v.Name == "workload-socket" && v.EmptyDir == nil {
			t.Error("workload-socket is not an emptyDir after defaulting")
		}
	}
	if env := proxyEnv(final, "ISTIO_META_POD_PORTS"); !strings.Contains(env, `"protocol":"TCP"`) {
		t.Errorf("the webhook did not see the defaulted port: ISTIO_META_POD_PORTS %s", env)
	}
	raw := New(adm.eng)
	raw.undefaulted = true
	defer raw.Close()
	if got, _ := violations(raw); !strings.Contains(got, "restricted volume types") {
		t.Errorf("without defaults the volumes should be judged as no known type: %s", got)
	}
}

func proxyEnv(p *corev1.Pod, name string) string {
	for _, cs := range [][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for _, c := range cs {
			if c.Name != "istio-proxy" {
				continue
			}
			for _, e := range c.Env {
				if e.Name == name {
					return e.Value
				}
			}
		}
	}
	return ""
}

// TestRestrictedIstioContainers: under restricted, the charts' empty seccompProfile leaves Istio's
// containers in Pod Security's seccomp violation; with global.proxy.seccompProfile set to
// RuntimeDefault only the application's own container is left in it.
func TestRestrictedIstioContainers(t *testing.T) {
	restricted := engine.Namespace{Name: "shop", Labels: map[string]string{"istio-injection": "enabled", "pod-security.kubernetes.io/enforce": "restricted"}}
	seccompPart := func(set ...string) string {
		r := admitOne(t, deployment, engine.Settings{Install: engine.InstallOptions{Set: set}}, restricted)
		if r.Admitted || !r.Injected {
			t.Fatalf("%v: injected %v admitted %v", set, r.Injected, r.Admitted)
		}
		_, part, _ := strings.Cut(strings.Join(r.Violations, "\n"), "seccompProfile (")
		part, _, _ = strings.Cut(part, ")")
		return part
	}
	if got := seccompPart("components.cni.enabled=true"); !strings.Contains(got, `"istio-proxy"`) || !strings.Contains(got, `"istio-validation"`) {
		t.Errorf("the charts' default: %q", got)
	}
	if got := seccompPart("components.cni.enabled=true", "values.global.proxy.seccompProfile.type=RuntimeDefault"); strings.Contains(got, "istio") || !strings.Contains(got, `"web"`) {
		t.Errorf("with RuntimeDefault for Istio's containers: %q", got)
	}
}

// TestAsKubectlReadsTheFile: what `kubectl create -f` does with a file before any admission step —
// the cases `admit` got wrong: a kind of another group is not read as Kubernetes' own (a Volcano
// Job made "INJECTED, ADMITTED" of a pod with no containers), a List's items are workloads, a
// Namespace document labels its namespace, and a namespace given must match the documents'.
func TestAsKubectlReadsTheFile(t *testing.T) {
	admit := func(t *testing.T, manifest string, ns engine.Namespace) []Result {
		t.Helper()
		rs, err := adm.Admit(t.Context(), []byte(manifest), nil, engine.Settings{Namespace: ns})
		if err != nil {
			t.Fatal(err)
		}
		return rs
	}
	t.Run("a Volcano Job", func(t *testing.T) {
		volcano := "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: vc\nspec:\n  tasks:\n  - name: w\n    template:\n      spec:\n        containers:\n        - {name: c, image: busybox}\n"
		rs := admit(t, volcano, engine.Namespace{})
		if len(rs) != 1 || rs[0].Pod != nil || rs[0].Error != "batch.volcano.sh/v1alpha1 Job: sidecarlab does not know how its controller makes Pods" {
			t.Fatalf("%+v", rs)
		}
		old := strings.Replace(deployment, "apps/v1", "extensions/v1beta1", 1)
		if rs := admit(t, old, engine.Namespace{}); rs[0].Pod != nil || rs[0].Error != `no matches for kind "Deployment" in version "extensions/v1beta1"` {
			t.Fatalf("an unserved version: %+v", rs)
		}
		job := "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - {name: c, image: busybox}\n"
		if rs := admit(t, job, engine.Namespace{}); rs[0].Error != "" || rs[0].Pod == nil {
			t.Fatalf("a batch/v1 Job: %+v", rs)
		}
	})
	t.Run("a List", func(t *testing.T) {
		list := "apiVersion: v1\nkind: List\nitems:\n- " + strings.ReplaceAll(strings.TrimSuffix(deployment, "\n"), "\n", "\n  ") + "\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}\n"
		rs := admit(t, list, engine.Namespace{Labels: map[string]string{"istio-injection": "enabled"}})
		if len(rs) != 2 || rs[0].Kind != "Deployment" || rs[0].Name != "web" || rs[0].Error != "" || !rs[0].Injected || rs[1].Kind != "ConfigMap" || rs[1].Pod != nil {
			t.Fatalf("%+v", rs)
		}
	})
	nsDoc := "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n  labels:\n    istio-injection: enabled\n    pod-security.kubernetes.io/enforce: baseline\n---\n"
	pod := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: shop\nspec:\n  containers:\n  - {name: c, image: busybox}\n"
	t.Run("a Namespace document", func(t *testing.T) {
		rs := admit(t, nsDoc+pod, engine.Namespace{})
		if len(rs) != 2 || !rs[1].Injected || rs[1].Admitted || len(rs[1].Violations) == 0 {
			t.Fatalf("the Pod in the file's namespace: %+v", rs[1])
		}
		// Without the document, the same Pod in a namespace with no labels.
		if rs := admit(t, pod, engine.Namespace{}); rs[0].Injected || !rs[0].Admitted {
			t.Fatalf("without the Namespace document: %+v", rs[0])
		}
		// The document's labels win over the settings' for its namespace.
		if rs := admit(t, nsDoc+pod, engine.Namespace{Labels: map[string]string{"istio-injection": "disabled"}}); !rs[1].Injected {
			t.Fatalf("the settings' label over the document's: %+v", rs[1])
		}
	})
	t.Run("a namespace that does not match", func(t *testing.T) {
		adm.NamespaceGiven = true
		defer func() { adm.NamespaceGiven = false }()
		rs := admit(t, pod, engine.Namespace{Name: "other"})
		want := `the namespace from the provided object "shop" does not match the namespace "other". You must pass '--namespace=shop' to perform this operation.`
		if rs[0].Error != want || rs[0].Pod != nil {
			t.Fatalf("%+v", rs[0])
		}
		if rs := admit(t, pod, engine.Namespace{Name: "shop"}); rs[0].Error != "" || rs[0].Pod.Namespace != "shop" {
			t.Fatalf("the same namespace: %+v", rs[0])
		}
		if rs := admit(t, deployment, engine.Namespace{Name: "other"}); rs[0].Error != "" || rs[0].Pod.Namespace != "other" {
			t.Fatalf("a document with no namespace: %+v", rs[0])
		}
		// The page's namespace settings are not kubectl's --namespace: the document's own is used.
		adm.NamespaceGiven = false
		if rs := admit(t, pod, engine.Namespace{Name: "other"}); rs[0].Error != "" || rs[0].Pod.Namespace != "shop" {
			t.Fatalf("not given as --namespace: %+v", rs[0])
		}
	})
}

// TestAmbient: in an installation with ambient (Istio's ambient profile), a Pod of a namespace
// labelled istio.io/dataplane-mode=ambient is admitted as written (no webhook selects it) and
// joins ambient by the chart's namespace selector; labelled sidecar.istio.io/inject=true it is
// injected and so stays out; a none label keeps it out. Without ambient installed the label
// joins nothing, and a Pod with no label in a mesh without ambient gets no ambient answer.
func TestAmbient(t *testing.T) {
	amb := engine.Settings{Install: engine.InstallOptions{Set: []string{"profile=ambient"}}}
	ambientNS := engine.Namespace{Name: "shop", Labels: map[string]string{"istio.io/dataplane-mode": "ambient"}}
	r := admitOne(t, deployment, amb, ambientNS)
	if r.Injected || !r.Admitted || r.Ambient == nil || !r.Ambient.Joins || r.Ambient.Rule != ambient.RuleSelector || r.Ambient.Selector != 2 {
		t.Fatalf("ambient namespace: injected %v admitted %v ambient %+v, want admitted as written, joining by selector 2", r.Injected, r.Admitted, r.Ambient)
	}
	if !equality.Semantic.DeepEqual(r.Pod, r.Final) {
		t.Fatal("Istio changed the Pod of an ambient namespace at admission")
	}
	// The trace does not advise a label that would bring a sidecar; out of ambient it does.
	ambientTrace := func(r Result) bool {
		for _, s := range r.Trace {
			if s.ID == "not-injected-no-webhook" {
				return s.Params["ambient"] == "true"
			}
		}
		t.Fatalf("no not-injected-no-webhook step in %+v", r.Trace)
		return false
	}
	if !ambientTrace(r) {
		t.Fatalf("a Pod that joins ambient: the trace advises injection labels: %+v", r.Trace)
	}
	labelled := strings.Replace(deployment, "      labels: {app: web}", "      labels: {app: web, sidecar.istio.io/inject: \"true\"}", 1)
	if labelled == deployment {
		t.Fatal("the test's Deployment has no pod template labels to add to")
	}
	r = admitOne(t, labelled, amb, ambientNS)
	if !r.Injected || r.Ambient == nil || r.Ambient.Joins || r.Ambient.Rule != ambient.RuleSidecar {
		t.Fatalf("the sidecar.istio.io/inject=true label in an ambient namespace: injected %v ambient %+v, want injected and out of ambient", r.Injected, r.Ambient)
	}
	none := strings.Replace(deployment, "      labels: {app: web}", "      labels: {app: web, istio.io/dataplane-mode: none}", 1)
	if r = admitOne(t, none, amb, ambientNS); r.Ambient == nil || r.Ambient.Joins || r.Ambient.Rule != ambient.RuleNoSelector {
		t.Fatalf("dataplane-mode=none in an ambient namespace: %+v", r.Ambient)
	}
	if r = admitOne(t, deployment, engine.Settings{}, ambientNS); r.Ambient == nil || r.Ambient.Joins || r.Ambient.Rule != ambient.RuleNotInstalled {
		t.Fatalf("an ambient namespace without ambient installed: %+v", r.Ambient)
	}
	if ambientTrace(r) {
		t.Fatalf("a Pod that joins nothing: the trace lost its advice: %+v", r.Trace)
	}
	if r = admitOne(t, deployment, engine.Settings{}, engine.Namespace{Name: "shop"}); r.Ambient != nil {
		t.Fatalf("no ambient anywhere, yet an ambient answer: %+v", r.Ambient)
	}
}
