package engine

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

var (
	strictOnce sync.Once
	strict     *Engine
	strictErr  error
)

// strictEngine is an engine with the zero InstallPolicy, as serve builds it.
func strictEngine(t testing.TB) *Engine {
	t.Helper()
	strictOnce.Do(func() {
		strict, strictErr = New(context.Background(), Options{InstallPolicy: InstallPolicy{TemplatesHint: "Ask the operator."}})
	})
	if strictErr != nil {
		t.Fatal(strictErr)
	}
	return strict
}

// iop wraps spec (indented by two spaces) into an IstioOperator overlay.
func iop(spec string) string {
	return "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nspec:\n" + spec
}

// tplInitContainer is the spec of an overlay giving istiod an init container whose image is
// text. The values schema has no pilot.initContainers; unvalidatedValues reach the chart as they
// are, where istio-discovery's deployment.yaml runs them through Helm's tpl.
func tplInitContainer(text string) string {
	return "  unvalidatedValues:\n    pilot:\n      initContainers:\n      - name: x\n        image: '" + text + "'\n"
}

const envTemplate = `{{ env "SIDECARLAB_TEST_CANARY" "unset" }}`

// TestInstallPolicy: every kind of option the strict policy refuses, by every route (a --set, the
// overlay at any depth, unvalidatedValues), is refused with a message that says why; the trusted
// policy (the CLI's) accepts each of them.
func TestInstallPolicy(t *testing.T) {
	t.Parallel()
	deploy := readFile(t, "testdata/corpus/deployment.yaml")
	charts := filepath.Join(testkit.IstioDir(t), "manifests")
	template := "      sidecarInjectorWebhook:\n        templates:\n          mine: |\n            metadata:\n              annotations:\n                x: " + envTemplate + "\n"
	cases := []struct {
		name  string
		o     InstallOptions
		field string
		// path is true for the server-path rule, false for the template rule.
		path bool
	}{
		{"installPackagePath by --set", InstallOptions{Set: []string{"installPackagePath=" + charts}}, `install option "installPackagePath=`, true},
		{"installPackagePath in the overlay", InstallOptions{Overlay: iop("  installPackagePath: " + charts + "\n")}, "install overlay", true},
		{"a template by --set", InstallOptions{Set: []string{"values.sidecarInjectorWebhook.templates.mine=metadata: {}"}}, `install option "values.sidecarInjectorWebhook.templates.mine`, false},
		{"a template in the overlay", InstallOptions{Overlay: iop("  values:\n" + template)}, "install overlay", false},
		{"a template in unvalidatedValues", InstallOptions{Overlay: iop("  unvalidatedValues:\n" + template)}, "install overlay", false},
		{"the sidecar template replaced", InstallOptions{Overlay: iop("  values:\n    sidecarInjectorWebhook:\n      templates:\n        sidecar: |\n          metadata: {}\n")}, "install overlay", false},
		{"pilot.initContainers (Helm's tpl)", InstallOptions{Overlay: iop(tplInitContainer("busybox"))}, "install overlay", false},
		{"{{ in a --set value", InstallOptions{Set: []string{"meshConfig.defaultConfig.proxyMetadata.X=" + envTemplate}}, `install option "meshConfig.defaultConfig.proxyMetadata.X=`, false},
		{"{{ in an overlay key", InstallOptions{Overlay: iop("  meshConfig:\n    defaultConfig:\n      proxyMetadata:\n        '{{ env \"X\" }}': y\n")}, "install overlay", false},
		{"{{ deep in a list", InstallOptions{Overlay: iop("  values:\n    global:\n      imagePullSecrets:\n      - '" + envTemplate + "'\n")}, "install overlay", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := strictEngine(t).Inject(t.Context(), deploy, nil, Settings{Install: c.o})
			ie := asInputError(t, err)
			if !strings.HasPrefix(ie.Field, c.field) {
				t.Errorf("field %q, want it to start with %q", ie.Field, c.field)
			}
			want := "carries template text"
			if c.path {
				want = "names a directory on the server"
			}
			if !strings.Contains(ie.Text(), want) {
				t.Errorf("message %q does not say %q", ie.Text(), want)
			}
			if !c.path && !strings.HasSuffix(ie.Text(), "Ask the operator.") {
				t.Errorf("message %q does not end with the policy's hint", ie.Text())
			}
			// The CLI's policy lets Istio decide: it renders each of these.
			if _, err := testEngine(t).Install(t.Context(), c.o); err != nil && strings.Contains(err.Error(), want) {
				t.Errorf("the trusted policy refused it: %v", err)
			}
		})
	}
}

// TestInstallPolicyAcceptsPlainOptions: options without a path or template text pass the strict
// policy, before and after the render (their templates are the built-in ones).
func TestInstallPolicyAcceptsPlainOptions(t *testing.T) {
	t.Parallel()
	deploy := readFile(t, "testdata/corpus/deployment.yaml")
	for _, o := range []InstallOptions{
		{Set: []string{"values.global.proxy.holdApplicationUntilProxyStarts=true"}},
		{Set: []string{"compatibilityVersion=1.26"}},
		{Set: []string{"profile=demo"}},
		{Set: []string{"components.cni.enabled=true"}},
		{Overlay: iop("  meshConfig:\n    defaultConfig:\n      proxyMetadata:\n        X: '{ not a template }'\n  values:\n    sidecarInjectorWebhook:\n      defaultTemplates: [sidecar]\n")},
	} {
		if _, err := strictEngine(t).Inject(t.Context(), deploy, nil, Settings{Install: o}); err != nil {
			t.Errorf("%+v: %v", o, err)
		}
	}
}

// TestTrustedInstallsRunTemplates: the CLI's policy runs a template of the user's, so the strict
// policy's refusal above is a refusal of something that works.
func TestTrustedInstallsRunTemplates(t *testing.T) {
	t.Setenv("SIDECARLAB_TEST_CANARY", "canary-42")
	deploy := readFile(t, "testdata/corpus/deployment.yaml")
	o := InstallOptions{Set: []string{"values.sidecarInjectorWebhook.templates.mine=metadata:\n  annotations:\n    x: " + envTemplate}}
	r := mustInject(t, testEngine(t), deploy, []input.Step{{Key: "inject.istio.io/templates", Value: "sidecar,mine"}}, Settings{Install: o})
	if !strings.Contains(r.Output(), "x: canary-42") {
		t.Fatalf("the template did not run:\n%s", r.Output())
	}
}

// TestTplRunsInTheRender: the tpl route is real — under the trusted policy, template text in
// unvalidatedValues.pilot.initContainers runs during the render (in the process that renders).
func TestTplRunsInTheRender(t *testing.T) {
	_, err := testEngine(t).Install(t.Context(), InstallOptions{Overlay: iop(tplInitContainer(`{{ fail "tpl ran in the render" }}`))})
	if err == nil || !strings.Contains(err.Error(), "tpl ran in the render") {
		t.Fatalf("err %v, want the template's own failure", err)
	}
	if _, err := testEngine(t).Install(t.Context(), InstallOptions{Overlay: iop(tplInitContainer("busybox"))}); err != nil {
		t.Fatalf("without template text: %v", err)
	}
}

// TestCheckTemplates: the check on the rendered templates trips on a template added or changed by
// any route, and not on the built-in ones or when templates are allowed.
func TestCheckTemplates(t *testing.T) {
	builtin := map[string]string{"sidecar": "a", "gateway": "b"}
	cases := []struct {
		name  string
		got   map[string]string
		p     InstallPolicy
		wantE bool
	}{
		{"the built-in templates", map[string]string{"sidecar": "a", "gateway": "b"}, InstallPolicy{}, false},
		{"fewer of them", map[string]string{"sidecar": "a"}, InstallPolicy{}, false},
		{"one added", map[string]string{"sidecar": "a", "gateway": "b", "mine": "{{ env \"X\" }}"}, InstallPolicy{}, true},
		{"one changed", map[string]string{"sidecar": "a{{ env \"X\" }}", "gateway": "b"}, InstallPolicy{}, true},
		{"one added, templates allowed", map[string]string{"sidecar": "a", "mine": "c"}, InstallPolicy{AllowCustomTemplates: true}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.p.checkTemplates(InstallOptions{Set: []string{"x=y"}}, c.got, builtin)
			if (err != nil) != c.wantE {
				t.Fatalf("err %v, want error %v", err, c.wantE)
			}
		})
	}
}
