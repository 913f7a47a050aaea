package engine

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/sidecarlab/sidecarlab/engine/input"
)

// proxyPlace says where istio-proxy is in a single-document output: "containers",
// "initContainers" (then it must be a native sidecar, restartPolicy Always) or "".
func proxyPlace(t testing.TB, out string) string {
	t.Helper()
	var obj struct {
		Spec struct {
			Template struct {
				Spec corev1.PodSpec `json:"spec"`
			} `json:"template"`
			corev1.PodSpec `json:",inline"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal([]byte(strings.TrimSuffix(out, "---\n")), &obj); err != nil {
		t.Fatal(err)
	}
	spec := obj.Spec.Template.Spec
	if len(spec.Containers) == 0 {
		spec = obj.Spec.PodSpec
	}
	for _, c := range spec.InitContainers {
		if c.Name == "istio-proxy" {
			if c.RestartPolicy == nil || *c.RestartPolicy != corev1.ContainerRestartPolicyAlways {
				t.Fatalf("istio-proxy in initContainers without restartPolicy Always")
			}
			return "initContainers"
		}
	}
	for _, c := range spec.Containers {
		if c.Name == "istio-proxy" {
			return "containers"
		}
	}
	return ""
}

func TestModes(t *testing.T) {
	e := testEngine(t)
	deploy := readFile(t, "testdata/corpus/deployment.yaml")
	optOut := []input.Step{{Key: "sidecar.istio.io/nativeSidecar", Value: "false"}}
	optIn := []input.Step{{Key: "sidecar.istio.io/nativeSidecar", Value: "true"}}
	cases := []struct {
		name  string
		s     Settings
		steps []input.Step
		want  string
	}{
		{"kube-inject is classic", Settings{}, nil, "containers"},
		{"kube-inject honours the pod's opt-in", Settings{Mode: ModeKubeInject}, optIn, "initContainers"},
		{"webhook on 1.34 goes native", Settings{Mode: ModeWebhook, KubernetesVersion: "1.34"}, nil, "initContainers"},
		{"webhook on 1.33 goes native", Settings{Mode: ModeWebhook, KubernetesVersion: "v1.33.1"}, nil, "initContainers"},
		{"webhook on 1.32 stays classic", Settings{Mode: ModeWebhook, KubernetesVersion: "1.32"}, nil, "containers"},
		{"webhook on 1.30 stays classic", Settings{Mode: ModeWebhook, KubernetesVersion: "1.30"}, nil, "containers"},
		{"webhook defaults to 1.34", Settings{Mode: ModeWebhook}, nil, "initContainers"},
		{"native on", Settings{Mode: ModeNative}, nil, "initContainers"},
		{"native on, pod opts out", Settings{Mode: ModeNative}, optOut, "containers"},
		{"native off", Settings{Mode: ModeClassic}, nil, "containers"},
		{"native off, pod opts in", Settings{Mode: ModeClassic}, optIn, "initContainers"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := mustInject(t, e, deploy, c.steps, c.s)
			if got := proxyPlace(t, r.Output()); got != c.want {
				t.Fatalf("istio-proxy in %q, want %q", got, c.want)
			}
		})
	}
}

func TestBadSettings(t *testing.T) {
	e := testEngine(t)
	deploy := readFile(t, "testdata/corpus/deployment.yaml")
	cases := []struct {
		name  string
		s     Settings
		field string
	}{
		{"unknown mode", Settings{Mode: "sometimes"}, "mode"},
		{"kubernetes version not a version", Settings{Mode: ModeWebhook, KubernetesVersion: "latest"}, "kubernetes version"},
		{"kubernetes version out of range", Settings{Mode: ModeWebhook, KubernetesVersion: "1.99"}, "kubernetes version"},
		{"--set without a value", Settings{Install: InstallOptions{Set: []string{"values.global.proxy.holdApplicationUntilProxyStarts"}}}, "install option"},
		{"--set of an unknown path", Settings{Install: InstallOptions{Set: []string{"values.global.proxy.notAField=1"}}}, "install option"},
		{"overlay that is not YAML", Settings{Install: InstallOptions{Overlay: "spec: [unclosed"}}, "install overlay"},
		{"overlay with an unknown field", Settings{Install: InstallOptions{Overlay: "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nspec:\n  values:\n    global:\n      proxy:\n        notAField: 1\n"}}, "install overlay"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := e.Inject(t.Context(), deploy, nil, c.s)
			ie := asInputError(t, err)
			if !strings.HasPrefix(ie.Field, c.field) {
				t.Fatalf("error field %q, want it to start with %q (%v)", ie.Field, c.field, ie)
			}
		})
	}
	// And options that are fine render and change the output.
	r := mustInject(t, e, deploy, nil, Settings{Install: InstallOptions{Set: []string{"values.global.proxy.holdApplicationUntilProxyStarts=true"}}})
	if !regexp.MustCompile(`- pilot-agent\s+- wait`).MatchString(r.Output()) {
		t.Fatal("holdApplicationUntilProxyStarts=true did not add the postStart wait")
	}
}

func asInputError(t testing.TB, err error) *input.Error {
	t.Helper()
	ie, ok := err.(*input.Error)
	if !ok {
		t.Fatalf("got %T %v, want *input.Error", err, err)
	}
	if ie.Text() == "" {
		t.Fatal("input.Error without a message")
	}
	return ie
}

// TestConcurrentModes injects in every mode at once, many times over, and checks each answer is
// its own mode's: nothing process-wide changes per request. Run it with -race.
func TestConcurrentModes(t *testing.T) {
	e := testEngine(t)
	deploy := readFile(t, "testdata/corpus/deployment.yaml")
	settings := []Settings{
		{Mode: ModeKubeInject},
		{Mode: ModeWebhook, KubernetesVersion: "1.34"},
		{Mode: ModeWebhook, KubernetesVersion: "1.29"},
		{Mode: ModeNative},
		{Mode: ModeClassic},
		{Install: InstallOptions{Set: []string{"values.global.proxy.holdApplicationUntilProxyStarts=true"}}},
	}
	want := make([]string, len(settings))
	for i, s := range settings {
		want[i] = mustInject(t, e, deploy, nil, s).Output()
	}
	if want[0] == want[1] || want[0] == want[5] {
		t.Fatal("modes do not differ; the test would prove nothing")
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range 10 {
				i := (g + n) % len(settings)
				r, err := e.Inject(t.Context(), deploy, nil, settings[i])
				if err != nil {
					errs <- err
					return
				}
				if r.Output() != want[i] {
					errs <- fmt.Errorf("goroutine %d, settings %d: output differs from the same settings run alone", g, i)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestMatchingSelector: the first selector of the list that matches is the one; an empty
// selector and an invalid one match nothing (as Istio's webhook reads them), and a list with
// neither a match gives none.
func TestMatchingSelector(t *testing.T) {
	set := map[string]string{"app": "web", "tier": "front"}
	empty := metav1.LabelSelector{}
	invalid := metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Near"}}}
	other := metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}
	tier := metav1.LabelSelector{MatchLabels: map[string]string{"tier": "front"}}
	app := metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	if sel, ok := MatchingSelector([]metav1.LabelSelector{empty, invalid, other, tier, app}, set); !ok || sel.String() != "tier=front" {
		t.Errorf("got %v, %v; want tier=front", sel, ok)
	}
	if sel, ok := MatchingSelector([]metav1.LabelSelector{empty, invalid, other}, set); ok {
		t.Errorf("an empty, an invalid and a different selector matched: %v", sel)
	}
}
