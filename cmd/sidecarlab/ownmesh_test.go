package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

// canaryMesh renders a revisioned install with custom values (a proxy CPU request of cpu) and
// mesh defaultConfig (hold) with the pinned istioctl, and more --set options: its whole
// `manifest generate` output, and the three data texts of its istio-sidecar-injector-canary and
// istio-canary ConfigMaps.
func canaryMesh(t *testing.T, bin, cpu string, set ...string) (manifest, injectorConfig, values, mesh string) {
	t.Helper()
	args := []string{"manifest", "generate", "--set", "revision=canary",
		"--set", "values.global.proxy.resources.requests.cpu=" + cpu,
		"--set", "meshConfig.defaultConfig.holdApplicationUntilProxyStarts=true"}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	out, err := exec.Command(bin, args...).Output()
	if err != nil {
		t.Fatalf("istioctl manifest generate: %v", err)
	}
	for _, doc := range strings.Split(string(out), "\n---\n") {
		var cm struct {
			Kind     string
			Metadata struct{ Name string }
			Data     map[string]string
		}
		if yaml.Unmarshal([]byte(doc), &cm) != nil || cm.Kind != "ConfigMap" {
			continue
		}
		switch cm.Metadata.Name {
		case "istio-sidecar-injector-canary":
			injectorConfig, values = cm.Data["config"], cm.Data["values"]
		case "istio-canary":
			mesh = cm.Data["mesh"]
		}
	}
	if injectorConfig == "" || values == "" || mesh == "" {
		t.Fatal("istioctl manifest generate printed no istio-sidecar-injector-canary or istio-canary ConfigMap")
	}
	return string(out), injectorConfig, values, mesh
}

// TestInjectWithOwnMesh: a team's istioctl kube-inject command line, with its cluster's three
// files and --revision, works with sidecarlab inject as it is, byte for byte; and --mesh-from
// the ConfigMaps (here the whole rendered install, ConfigMaps among the rest) reads the same
// configuration and its revision. istioctl's bare-template form of --injectConfigFile (one sidecar
// template, a custom one here) reads as istioctl reads it.
func TestInjectWithOwnMesh(t *testing.T) {
	t.Parallel()
	bin, _ := istioctlWithDefaults(t)
	manifest, injectorConfig, values, mesh := canaryMesh(t, bin, "50m")
	var cfg struct{ Templates map[string]string }
	if err := yaml.Unmarshal([]byte(injectorConfig), &cfg); err != nil || cfg.Templates["sidecar"] == "" {
		t.Fatalf("no sidecar template in the injector config (%v)", err)
	}
	const teamLabel = "    team.example.com/injected-by: custom\n"
	custom := strings.Replace(cfg.Templates["sidecar"], "metadata:\n  labels:\n", "metadata:\n  labels:\n"+teamLabel, 1)
	if custom == cfg.Templates["sidecar"] {
		t.Fatal("the sidecar template has no metadata.labels to add to")
	}
	dir := writeFiles(t, map[string]string{"install.yaml": manifest, "inject-config.yaml": injectorConfig, "sidecar.tmpl": custom,
		"values.json": values, "mesh.yaml": mesh})
	files := func(injector string) []string {
		return []string{"--injectConfigFile", filepath.Join(dir, injector), "--valuesFile", filepath.Join(dir, "values.json"),
			"--meshConfigFile", filepath.Join(dir, "mesh.yaml"), "--revision", "canary"}
	}
	inputs := []string{"deployment.yaml", "job.yaml", "pod.yaml"}
	path := func(in string) string { return filepath.Join("..", "..", "engine", "testdata", "corpus", in) }
	cases := []struct {
		name, injector string
		ours           []string
	}{
		{"istioctl's files", "inject-config.yaml", files("inject-config.yaml")},
		{"--mesh-from", "inject-config.yaml", []string{"--mesh-from", filepath.Join(dir, "install.yaml")}},
		{"a bare custom template", "sidecar.tmpl", files("sidecar.tmpl")},
	}
	// istioctl kube-inject of each input with each injector config, run at once: the first two
	// cases give istioctl the same files, so it runs once for both.
	type ctlRun struct {
		want, stderr bytes.Buffer
		err          error
	}
	ctl := map[[2]string]*ctlRun{}
	var wg sync.WaitGroup
	for _, in := range inputs {
		for _, c := range cases {
			key := [2]string{in, c.injector}
			if ctl[key] != nil {
				continue
			}
			r := &ctlRun{}
			ctl[key] = r
			wg.Go(func() {
				cmd := exec.Command(bin, append([]string{"kube-inject", "-f", path(in)}, files(c.injector)...)...)
				cmd.Stdout, cmd.Stderr = &r.want, &r.stderr
				r.err = cmd.Run()
			})
		}
	}
	wg.Wait()
	for _, in := range inputs {
		for _, c := range cases {
			t.Run(in+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				r := ctl[[2]string{in, c.injector}]
				want := &r.want
				if r.err != nil {
					t.Fatalf("istioctl kube-inject: %v: %s", r.err, r.stderr.String())
				}
				got, stderr, err := runCLI(t, "", append([]string{"inject", "-f", path(in)}, c.ours...)...)
				if err != nil {
					t.Fatalf("%v: %s", err, stderr)
				}
				if got != want.String() {
					t.Fatalf("sidecarlab inject %s differs from istioctl kube-inject %s:\n--- istioctl\n%s\n--- sidecarlab\n%s",
						strings.Join(c.ours, " "), strings.Join(files(c.injector), " "), want.String(), got)
				}
				// The configuration was the canary's (and the template the custom one).
				for _, s := range []string{"istio.io/rev: canary", "cpu: 50m", "holdApplicationUntilProxyStarts"} {
					if !strings.Contains(got, s) {
						t.Errorf("no %q in the output", s)
					}
				}
				if hasLabel := strings.Contains(got, strings.TrimSpace(teamLabel)); hasLabel != (c.injector == "sidecar.tmpl") {
					t.Errorf("the custom template's label in the output: %v", hasLabel)
				}
			})
		}
	}
}

// TestMeshFromErrors: --mesh-from with one of istioctl's files is a usage error; a file that is
// not a mesh's ConfigMaps says so, placed in that file.
func TestMeshFromErrors(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"mesh.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: istio\ndata:\n  mesh: '{}'\n",
		"pod.yaml":  "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: i\n",
	})
	pod := filepath.Join(dir, "pod.yaml")
	_, _, err := runCLI(t, "", "inject", "-f", pod, "--mesh-from", filepath.Join(dir, "mesh.yaml"), "--valuesFile", filepath.Join(dir, "mesh.yaml"))
	if err == nil || !strings.Contains(err.Error(), "--mesh-from and --valuesFile") {
		t.Fatalf("got %v", err)
	}
	_, _, err = runCLI(t, "", "inject", "-f", pod, "--mesh-from", filepath.Join(dir, "mesh.yaml"))
	if err == nil || !strings.HasPrefix(err.Error(), filepath.Join(dir, "mesh.yaml")+": your mesh: no istio-sidecar-injector ConfigMap") {
		t.Fatalf("got %v", err)
	}
}

// TestMeshFromOtherIstio: a mesh whose ConfigMaps another Istio installed is injected (its own
// templates) and stderr says which Istio's code runs them; the embedded Istio's says nothing.
func TestMeshFromOtherIstio(t *testing.T) {
	mesh := func(version string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: istio-sidecar-injector\n  labels: {app.kubernetes.io/version: \"" + version + "\"}\n" +
			"data:\n  config: |\n    templates:\n      sidecar: |\n        metadata:\n          labels: {old: \"yes\"}\n  values: '{}'\n" +
			"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: istio}\ndata: {mesh: '{}'}\n"
	}
	for _, c := range []struct {
		version string
		note    bool
	}{{"1.27.3", true}, {engine.Version().Istio + ".1", false}} {
		dir := writeFiles(t, map[string]string{"mesh.yaml": mesh(c.version)})
		out, stderr, err := runCLI(t, testkit.Deployment, "inject", "-f", "-", "--mesh-from", filepath.Join(dir, "mesh.yaml"))
		if err != nil || !strings.Contains(out, "old: \"yes\"") {
			t.Fatalf("%s: %v: %s\n%s", c.version, err, stderr, out)
		}
		if want := "templates are Istio " + c.version + "'s, injected by Istio " + engine.Version().Istio + "'s injector code"; strings.Contains(stderr, want) != c.note {
			t.Errorf("%s: stderr %q", c.version, stderr)
		}
	}
}

// TestMeshFromRevisionByName: a revision's ConfigMaps are that revision's by their names, as
// istioctl --revision and a revision's istiod find them, whatever their istio.io/rev label says.
// ConfigMaps an operator labelled "<revision>.<namespace>" (banzaicloud's does) inject as revision
// sn-1-24 — not as an install option "revision=sn-1-24.istio-system" the user never gave, which
// Istio refused — and stderr says the label names another; a label that agrees says nothing.
func TestMeshFromRevisionByName(t *testing.T) {
	t.Parallel()
	in := defaultInstall(t)
	values := strings.Replace(in.Values, `"revision": ""`, `"revision": "sn-1-24"`, 1)
	if values == in.Values {
		t.Fatal(`the default values have no "revision": ""`)
	}
	configMap := func(name, label string, data map[string]string) string {
		b, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name, "namespace": "istio-system", "labels": map[string]string{"istio.io/rev": label}}, "data": data})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, c := range []struct {
		label string
		note  bool
	}{{"sn-1-24.istio-system", true}, {"sn-1-24", false}} {
		mesh := configMap("istio-sidecar-injector-sn-1-24", c.label, map[string]string{"config": in.InjectorConfig, "values": values}) + "---\n" +
			configMap("istio-sn-1-24", c.label, map[string]string{"mesh": in.MeshConfigYAML})
		dir := writeFiles(t, map[string]string{"mesh.yaml": mesh})
		out, stderr, err := runCLI(t, testkit.Deployment, "inject", "-f", "-", "--mesh-from", filepath.Join(dir, "mesh.yaml"))
		if err != nil || !strings.Contains(out, "istio.io/rev: sn-1-24\n") {
			t.Fatalf("labelled %s: %v: %s\n%s", c.label, err, stderr, out)
		}
		note := "named for revision sn-1-24 but labelled istio.io/rev=sn-1-24.istio-system"
		if strings.Contains(stderr, note) != c.note {
			t.Errorf("labelled %s: stderr %q", c.label, stderr)
		}
	}
}

// TestIstioctlFilesInPart: part of istioctl kube-inject's three files is refused — istioctl
// reads the rest from the cluster, and sidecarlab used to fill it with the embedded Istio's
// defaults without a word — naming what is given and what is missing; all three inject, and so
// does a part beside --set, which renders the rest on purpose.
func TestIstioctlFilesInPart(t *testing.T) {
	t.Parallel()
	_, all := istioctlWithDefaults(t) // --revision default, then the three files
	file := func(flag string) []string { i := slices.Index(all, flag); return slices.Clone(all[i : i+2]) }
	inject := []string{"inject", "-f", "-"}
	for _, c := range []struct {
		name  string
		args  []string
		error string
	}{
		{"the templates alone", file("--injectConfigFile"), "--injectConfigFile without --valuesFile, --meshConfigFile: istioctl kube-inject reads what is not given from the cluster"},
		{"templates and mesh config", append(file("--injectConfigFile"), file("--meshConfigFile")...), "--injectConfigFile, --meshConfigFile without --valuesFile:"},
		{"the values alone", file("--valuesFile"), "--valuesFile without --injectConfigFile, --meshConfigFile:"},
		{"all three", all[2:], ""},
		{"the templates beside --set", append(file("--injectConfigFile"), "--set", "values.global.proxy.holdApplicationUntilProxyStarts=true"), ""},
		{"none", nil, ""},
	} {
		out, stderr, err := runCLI(t, testkit.Deployment, append(inject, c.args...)...)
		if c.error == "" {
			if err != nil || !strings.Contains(out, "istio-proxy") {
				t.Errorf("%s: %v: %s", c.name, err, stderr)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.error) {
			t.Errorf("%s: got %v, want an error containing %q", c.name, err, c.error)
		}
	}
}
