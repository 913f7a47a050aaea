package engine

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"istio.io/istio/pkg/kube/inject"
	"sigs.k8s.io/yaml"

	"github.com/sidecarlab/sidecarlab/engine/diff"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

// meshCase is a mesh's own configuration as a cluster holds it: `istioctl manifest generate`
// with args renders it, edit (if any) changes its injector config, revision is its revision.
type meshCase struct {
	name     string
	args     []string
	revision string
	edit     func(t *testing.T, injectorConfig string) string
}

// withTeamLabel adds a label to the sidecar template: a custom template, as a team may run.
func withTeamLabel(t *testing.T, config string) string {
	t.Helper()
	const anchor = "security.istio.io/tlsMode: {{"
	i := strings.Index(config, anchor)
	if i < 0 {
		t.Fatalf("no %q in the injector config", anchor)
	}
	lineStart := strings.LastIndexByte(config[:i], '\n') + 1
	indent := config[lineStart:i]
	return config[:lineStart] + indent + `team.example.com/injected-by: "custom-{{ .Revision | default "none" }}"` + "\n" + config[lineStart:]
}

// ownMeshCases are the meshes of TestOwnMeshMatchesIstioctl: the default installation, a revision
// with custom values and mesh defaultConfig, and a custom sidecar template.
var ownMeshCases = []meshCase{
	{name: "default"},
	{name: "canary", revision: "canary", args: []string{
		"--set", "revision=canary",
		"--set", "values.global.proxy.resources.requests.cpu=50m",
		"--set", "values.global.logging.level=default:debug",
		"--set", "meshConfig.defaultConfig.holdApplicationUntilProxyStarts=true",
		"--set", "meshConfig.defaultConfig.proxyMetadata.TEAM=payments",
	}},
	{name: "custom-template", revision: "custom", args: []string{"--set", "revision=custom"}, edit: withTeamLabel},
}

// meshConfigMaps renders the case with istioctl and returns its ConfigMaps as
// `kubectl get configmap -o yaml` prints them (a List), and the three data texts.
func meshConfigMaps(t *testing.T, bin string, c meshCase) (list string, mesh OwnMesh) {
	t.Helper()
	out, err := manifestGenerate(bin, c.args...)
	if err != nil {
		t.Fatal(err)
	}
	docs, err := splitDocuments(out)
	if err != nil {
		t.Fatal(err)
	}
	suffix := ""
	if c.revision != "" {
		suffix = "-" + c.revision
	}
	var items []map[string]any
	for _, d := range docs {
		var cm map[string]any
		if yaml.Unmarshal(d.raw, &cm) != nil || cm["kind"] != "ConfigMap" {
			continue
		}
		md, _ := cm["metadata"].(map[string]any)
		data, _ := cm["data"].(map[string]any)
		switch md["name"] {
		case "istio-sidecar-injector" + suffix:
			mesh.InjectorConfig, _ = data["config"].(string)
			if c.edit != nil {
				mesh.InjectorConfig = c.edit(t, mesh.InjectorConfig)
				data["config"] = mesh.InjectorConfig
			}
			mesh.Values, _ = data["values"].(string)
		case "istio" + suffix:
			mesh.MeshConfig, _ = data["mesh"].(string)
		default:
			continue
		}
		// What the API server adds, as kubectl prints it.
		md["resourceVersion"], md["uid"], md["creationTimestamp"] = "4242", "0b7e4d9c-5a1e-4c3f-9d0e-2f6b8a7c1e55", "2026-11-30T09:00:00Z"
		items = append(items, cm)
	}
	if mesh.InjectorConfig == "" || mesh.Values == "" || mesh.MeshConfig == "" {
		t.Fatalf("istioctl manifest generate %v: no istio-sidecar-injector%s and istio%s ConfigMaps", c.args, suffix, suffix)
	}
	b, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items, "metadata": map[string]any{"resourceVersion": ""}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b), mesh
}

// meshFiles writes the mesh's three texts as the files istioctl kube-inject reads offline
// (--injectConfigFile, --valuesFile, --meshConfigFile), as a team runs it with its cluster's
// configuration, and returns their folder.
func meshFiles(t *testing.T, mesh OwnMesh) string {
	t.Helper()
	dir := t.TempDir()
	if err := writeCtlFiles(dir, mesh.InjectorConfig, mesh.Values, mesh.MeshConfig); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestOwnMeshMatchesIstioctl: given a mesh's own ConfigMaps (read with ParseMeshConfigMaps from
// kubectl's List, revision and all), the engine injects byte for byte as `istioctl kube-inject
// --injectConfigFile --valuesFile --meshConfigFile --revision` does with the same texts, over
// our corpus: for the default installation, a revision with custom values and mesh config, and
// a custom template. istioctl runs once per mesh over the inputs the engine accepts (ctlBatch).
func TestOwnMeshMatchesIstioctl(t *testing.T) {
	if testing.Short() {
		t.Skip("builds istioctl; run without -short")
	}
	t.Parallel()
	bin := testkit.Istioctl(t)
	e := testEngine(t)
	inputs, _ := filepath.Glob("testdata/corpus/*.yaml")
	if len(inputs) < 20 {
		t.Fatalf("corpus too small: %d", len(inputs))
	}
	for _, c := range ownMeshCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // each mesh is its own
			list, want := meshConfigMaps(t, bin, c)
			read, err := ParseMeshConfigMaps([]byte(list))
			if err != nil {
				t.Fatal(err)
			}
			mesh, rev := read.Mesh, read.Revision
			if mesh != want || rev != c.revision {
				t.Fatalf("ParseMeshConfigMaps read revision %q (want %q) and texts equal to the ConfigMaps': %v", rev, c.revision, mesh == want)
			}
			o := InstallOptions{Mesh: mesh, Revision: rev}
			// A link keeps the mesh compacted: the templates left out when they are Istio's.
			compact := InstallOptions{Mesh: CompactMesh(mesh), Revision: rev}
			if compact.Mesh.IstioTemplates != (c.edit == nil) || (c.edit == nil && len(compact.Mesh.InjectorConfig)*5 > len(mesh.InjectorConfig)) {
				t.Fatalf("compacted: %v, %d of %d bytes of injector config kept", compact.Mesh.IstioTemplates, len(compact.Mesh.InjectorConfig), len(mesh.InjectorConfig))
			}
			dir, ctlRev := meshFiles(t, mesh), rev
			if ctlRev == "" {
				ctlRev = "default"
			}
			results := make([]*Injection, len(inputs))
			for i, in := range inputs {
				if results[i], err = e.Inject(t.Context(), readFile(t, in), nil, Settings{Install: o}); err != nil {
					t.Fatal(err)
				}
			}
			batch := newCtlBatch(t, func(file string) (string, string, error) { return kubeInjectRev(bin, dir, ctlRev, file) }, inputs, results)
			var mu sync.Mutex
			injectedByTemplate := 0
			for i, in := range inputs {
				r := results[i]
				t.Run(filepath.Base(in), func(t *testing.T) {
					t.Parallel()
					want, stderr, _, ctlErr := batch.judge(i)
					if ctlErr != nil {
						if len(r.Errors()) == 0 {
							t.Fatalf("istioctl failed (%v: %s) but the engine did not", ctlErr, stderr)
						}
						return
					}
					if errs := r.Errors(); len(errs) > 0 {
						t.Fatalf("engine: %v; istioctl succeeded", errs[0])
					}
					if got := r.Output(); got != want {
						t.Fatalf("output differs from istioctl:\n%s", diff.Unified(want, got))
					}
					rc, err := e.Inject(t.Context(), readFile(t, in), nil, Settings{Install: compact})
					if err != nil {
						t.Fatal(err)
					}
					if got := rc.Output(); got != want {
						t.Fatalf("compacted, the output differs from istioctl:\n%s", diff.Unified(want, got))
					}
					if strings.Contains(want, `team.example.com/injected-by: custom-`+c.revision) {
						mu.Lock()
						injectedByTemplate++
						mu.Unlock()
					}
				})
			}
			t.Cleanup(func() {
				// The custom template ran (its label, with the revision) on some input; the
				// others never have its label.
				if (c.edit != nil) != (injectedByTemplate > 0) {
					t.Errorf("%d outputs carry the custom template's label", injectedByTemplate)
				}
			})
		})
	}
}

// configMap is a ConfigMap document as kubectl prints one, with data keys in order.
func configMap(name string, labels map[string]string, data ...string) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n  namespace: istio-system\n")
	if len(labels) > 0 {
		b.WriteString("  labels:\n")
		for _, k := range sortedKeys(labels) {
			fmt.Fprintf(&b, "    %s: %q\n", k, labels[k])
		}
	}
	b.WriteString("data:\n")
	for i := 0; i+1 < len(data); i += 2 {
		fmt.Fprintf(&b, "  %s: %q\n", data[i], data[i+1])
	}
	return b.String()
}

func TestParseMeshConfigMaps(t *testing.T) {
	injector := func(name string, labels map[string]string) string {
		return configMap(name, labels, "config", "templates:\n  sidecar: x\n", "values", `{"revision":"r"}`)
	}
	mesh := func(name string) string { return configMap(name, nil, "mesh", "defaultConfig: {}\n") }
	caCert := configMap("istio-ca-root-cert", nil, "root-cert.pem", "-----BEGIN CERTIFICATE-----")
	list := func(docs ...string) string {
		var b strings.Builder
		b.WriteString("apiVersion: v1\nkind: List\nitems:\n")
		for _, d := range docs {
			var m map[string]any
			if err := yaml.Unmarshal([]byte(d), &m); err != nil {
				t.Fatal(err)
			}
			j, _ := yaml.Marshal([]any{m})
			b.Write(j)
		}
		return b.String()
	}
	for _, c := range []struct {
		name, in  string
		rev       string
		label     string
		wantErrID string
		wantLine  int
	}{
		{name: "documents", in: injector("istio-sidecar-injector", nil) + "---\n" + mesh("istio")},
		{name: "a List, with another ConfigMap", in: list(caCert, mesh("istio"), injector("istio-sidecar-injector", nil))},
		{name: "a revision, by name", in: injector("istio-sidecar-injector-canary", nil) + "---\n" + mesh("istio-canary"), rev: "canary"},
		// The names say, as they do to istioctl --revision and to istiod; a label naming another
		// revision is only said. banzaicloud's operator labels "<revision>.<namespace>".
		{name: "the names say, not the label", in: injector("istio-sidecar-injector-sn-1-24", map[string]string{"istio.io/rev": "sn-1-24.istio-system"}) + "---\n" +
			configMap("istio-sn-1-24", map[string]string{"istio.io/rev": "sn-1-24.istio-system"}, "mesh", "{}"), rev: "sn-1-24", label: "sn-1-24.istio-system"},
		{name: "a label that agrees", in: injector("istio-sidecar-injector-canary", map[string]string{"istio.io/rev": "canary"}) + "---\n" +
			configMap("istio-canary", map[string]string{"istio.io/rev": "canary"}, "mesh", "{}"), rev: "canary"},
		{name: "the default revision's label", in: injector("istio-sidecar-injector", map[string]string{"istio.io/rev": "default"}) + "---\n" + mesh("istio")},
		{name: "the default revision's names, labelled another", in: injector("istio-sidecar-injector", map[string]string{"istio.io/rev": "blue"}) + "---\n" + mesh("istio"), label: "blue"},
		{name: "no injector", in: mesh("istio") + "---\n" + caCert, wantErrID: "mesh-no-injector"},
		{name: "two revisions", in: list(injector("istio-sidecar-injector", nil), mesh("istio"), injector("istio-sidecar-injector-canary", nil), mesh("istio-canary")), wantErrID: "mesh-revisions"},
		{name: "no mesh ConfigMap of that revision", in: injector("istio-sidecar-injector-canary", nil) + "---\n" + mesh("istio"), wantErrID: "mesh-no-mesh", wantLine: 1},
		{name: "no values", in: configMap("istio-sidecar-injector", nil, "config", "templates: {}\n") + "---\n" + mesh("istio"), wantErrID: "mesh-no-key", wantLine: 1},
		{name: "not YAML", in: mesh("istio") + "---\nkind: ConfigMap\nmetadata: [\n", wantLine: 10},
	} {
		t.Run(c.name, func(t *testing.T) {
			read, err := ParseMeshConfigMaps([]byte(c.in))
			got, rev := read.Mesh, read.Revision
			if c.wantErrID == "" && c.wantLine == 0 {
				if err != nil {
					t.Fatal(err)
				}
				if read.LabelRevision != c.label {
					t.Errorf("label revision %q, want %q", read.LabelRevision, c.label)
				}
				if rev != c.rev || got.InjectorConfig != "templates:\n  sidecar: x\n" || got.Values != `{"revision":"r"}` || got.MeshConfig == "" {
					t.Fatalf("revision %q, mesh %+v", rev, got)
				}
				return
			}
			ie := asInputError(t, err)
			if ie.ID != c.wantErrID || ie.Line != c.wantLine || ie.Field != "your mesh" {
				t.Fatalf("got %+v (ID %q), want ID %q at line %d", ie, ie.ID, c.wantErrID, c.wantLine)
			}
		})
	}
}

// TestOwnMeshPolicy: a server that refuses custom templates accepts a mesh whose templates are
// the embedded Istio's (values and mesh config its own) and refuses one with a changed
// template, naming it.
func TestOwnMeshPolicy(t *testing.T) {
	e, err := New(t.Context(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	def, err := e.Install(t.Context(), InstallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	own := OwnMesh{InjectorConfig: def.InjectorConfig, Values: strings.Replace(def.Values, `"revision": ""`, `"revision": "blue"`, 1),
		MeshConfig: strings.Replace(def.MeshConfigYAML, "defaultConfig:\n", "defaultConfig:\n  holdApplicationUntilProxyStarts: true\n", 1)}
	if own.Values == def.Values || own.MeshConfig == def.MeshConfigYAML {
		t.Fatal(`the default values have no "revision": "", or the mesh config no defaultConfig`)
	}
	r, err := e.Inject(t.Context(), readFile(t, "testdata/corpus/deployment.yaml"), nil, Settings{Install: InstallOptions{Mesh: own, Revision: "blue"}})
	if err != nil {
		t.Fatal(err)
	}
	out := r.Output()
	if !strings.Contains(out, "istio.io/rev: blue") || !strings.Contains(out, "holdApplicationUntilProxyStarts") {
		t.Fatalf("the mesh's revision and defaultConfig are not in the output:\n%s", out)
	}
	own.InjectorConfig = withTeamLabel(t, def.InjectorConfig)
	_, err = e.Inject(t.Context(), readFile(t, "testdata/corpus/deployment.yaml"), nil, Settings{Install: InstallOptions{Mesh: own}})
	ie := asInputError(t, err)
	if ie.ID != "mesh-templates-changed" || !strings.Contains(ie.Text(), `templates "sidecar" are not`) ||
		!strings.Contains(ie.Text(), "\n+++ sidecar (yours)\n") || !strings.Contains(ie.Text(), "\n+"+`    team.example.com/injected-by: "custom-{{ .Revision | default "none" }}"`) {
		t.Fatalf("got %v", err)
	}
	// A template of the mesh's own, besides Istio's, is named too; the diff is bounded.
	own.InjectorConfig = strings.Replace(def.InjectorConfig, "templates:\n", "templates:\n  mine: |\n"+strings.Repeat("    x: y\n", 2000), 1)
	_, err = e.Inject(t.Context(), readFile(t, "testdata/corpus/deployment.yaml"), nil, Settings{Install: InstallOptions{Mesh: own}})
	if ie := asInputError(t, err); !strings.Contains(ie.Text(), `templates "mine" are not`) || len(ie.Text()) > maxTemplateDiff+1000 || !strings.HasSuffix(ie.Text(), " more lines\n") {
		t.Fatalf("got %d bytes: %.300s…%s", len(ie.Text()), ie.Text(), ie.Text()[max(0, len(ie.Text())-200):])
	}
	// A mesh of Istio 1.9's shape has sidecar and gateway only (both another release's): those
	// two are named, not the embedded Istio's templates it never had. Before: "agentgateway",
	// "agentgateway-waypoint", … "waypoint".
	var config map[string]any
	if err := yaml.Unmarshal([]byte(def.InjectorConfig), &config); err != nil {
		t.Fatal(err)
	}
	templates := config["templates"].(map[string]any)
	config["templates"] = map[string]any{"sidecar": templates["sidecar"].(string) + "# 1.9\n", "gateway": templates["gateway"].(string) + "# 1.9\n"}
	b, err := yaml.Marshal(config)
	if err != nil {
		t.Fatal(err)
	}
	own.InjectorConfig = string(b)
	_, err = e.Inject(t.Context(), readFile(t, "testdata/corpus/deployment.yaml"), nil, Settings{Install: InstallOptions{Mesh: own}})
	if ie := asInputError(t, err); ie.Params["names"] != `"gateway", "sidecar"` || strings.Contains(ie.Text(), "server's rights") {
		t.Fatalf("a 1.9 mesh: names %q: %.300s", ie.Params["names"], ie.Text())
	}
	// The refusal is the server's policy; a mesh config Istio rejects is not.
	if !RefusedByPolicy(err) {
		t.Errorf("not a refusal by the policy: %v", err)
	}
	own.InjectorConfig, own.MeshConfig = def.InjectorConfig, "trustDomain: \"\"\n"
	_, err = e.Inject(t.Context(), readFile(t, "testdata/corpus/deployment.yaml"), nil, Settings{Install: InstallOptions{Mesh: own}})
	if err == nil || RefusedByPolicy(err) {
		t.Errorf("an empty trustDomain: %v, want Istio's error", err)
	}
}

// TestWebhookRevision: in webhook mode the injector is the installation's istiod, so a revision
// other than its values' is refused, and its own (or none) is not.
func TestWebhookRevision(t *testing.T) {
	e := testEngine(t)
	manifest := readFile(t, "testdata/corpus/pod.yaml")
	webhook := func(o InstallOptions) error {
		_, err := e.Inject(t.Context(), manifest, nil, Settings{Mode: ModeWebhook, Install: o})
		return err
	}
	if ie := asInputError(t, webhook(InstallOptions{Revision: "canary"})); ie.ID != "webhook-revision" {
		t.Fatalf("got %v", ie)
	}
	for _, o := range []InstallOptions{{Revision: "default"}, {Set: []string{"revision=canary"}, Revision: "canary"}, {Set: []string{"revision=canary"}}} {
		if err := webhook(o); err != nil {
			t.Errorf("%+v: %v", o, err)
		}
	}
	// kube-inject mode writes the revision it is given.
	r, err := e.Inject(t.Context(), manifest, nil, Settings{Install: InstallOptions{Revision: "canary"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Output(), "istio.io/rev: canary") {
		t.Fatalf("no istio.io/rev: canary in\n%s", r.Output())
	}
}

// TestInstallHashOfOwnMesh: each part of a mesh and the revision change the hash; the revision's
// two names for the default do not.
func TestInstallHashOfOwnMesh(t *testing.T) {
	base := InstallOptions{Mesh: OwnMesh{InjectorConfig: "a", Values: "b", MeshConfig: "c"}}
	seen := map[string]string{base.Hash(): "base"}
	for name, o := range map[string]InstallOptions{
		"injector": {Mesh: OwnMesh{InjectorConfig: "a2", Values: "b", MeshConfig: "c"}},
		"values":   {Mesh: OwnMesh{InjectorConfig: "a", Values: "b2", MeshConfig: "c"}},
		"mesh":     {Mesh: OwnMesh{InjectorConfig: "a", Values: "b", MeshConfig: "c2"}},
		"moved":    {Mesh: OwnMesh{InjectorConfig: "a", Values: "", MeshConfig: "bc"}},
		"revision": {Mesh: base.Mesh, Revision: "canary"},
		"webhooks": {Mesh: OwnMesh{InjectorConfig: "a", Values: "b", MeshConfig: "c", Webhooks: "d"}},
		"default":  {},
	} {
		if other, ok := seen[o.Hash()]; ok {
			t.Errorf("%s hashes as %s", name, other)
		}
		seen[o.Hash()] = name
	}
	if (InstallOptions{Revision: "default"}).Hash() != (InstallOptions{}).Hash() || !(InstallOptions{Revision: "default"}).IsDefault() {
		t.Error(`revision "default" is not the default installation`)
	}
}

// TestMeshIstioVersion: the Istio that installed a mesh is read from its injector ConfigMap's
// labels, else its values' image tag; an unknown version is not another Istio.
func TestMeshIstioVersion(t *testing.T) {
	mesh := configMap("istio", nil, "mesh", "{}")
	this := Version().Istio
	for _, c := range []struct {
		labels map[string]string
		values string
		want   string
		same   bool
	}{
		{labels: map[string]string{"app.kubernetes.io/version": "1.27.3", "helm.sh/chart": "istiod-1.27.3"}, values: "{}", want: "1.27.3"},
		{labels: map[string]string{"helm.sh/chart": "istiod-" + this + ".2"}, values: "{}", want: this + ".2", same: true},
		{labels: map[string]string{"app.kubernetes.io/version": "1.0.0", "helm.sh/chart": "istiod-1.0.0"}, values: `{"global":{"tag":"1.29.0-distroless"}}`, want: "1.29.0-distroless"},
		{values: `{"global":{"tag":"latest"}}`, same: true},
		{values: `{"global":{"tag":"` + this + `.0"}}`, want: this + ".0", same: true},
	} {
		read, err := ParseMeshConfigMaps([]byte(configMap("istio-sidecar-injector", c.labels, "config", "templates: {}\n", "values", c.values) + "---\n" + mesh))
		if err != nil {
			t.Fatal(err)
		}
		if read.Mesh.Istio != c.want || read.Mesh.SameIstio() != c.same {
			t.Errorf("%v %s: Istio %q (same %v), want %q (same %v)", c.labels, c.values, read.Mesh.Istio, read.Mesh.SameIstio(), c.want, c.same)
		}
	}
}

// TestCompactMeshSize: an installation built from a compacted mesh weighs in the cache what it
// holds, Istio's templates parsed again included, as the uncompacted one does.
func TestCompactMeshSize(t *testing.T) {
	e := testEngine(t)
	def, err := e.Install(t.Context(), InstallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	whole := OwnMesh{InjectorConfig: def.InjectorConfig, Values: def.Values, MeshConfig: def.MeshConfigYAML}
	compact := CompactMesh(whole)
	if !compact.IstioTemplates {
		t.Fatal("the default installation's mesh did not compact")
	}
	a, err := e.Install(t.Context(), InstallOptions{Mesh: whole})
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.Install(t.Context(), InstallOptions{Mesh: compact})
	if err != nil {
		t.Fatal(err)
	}
	if b.size() < a.size()*9/10 {
		t.Fatalf("the compacted mesh's installation is counted as %d bytes, the whole one's %d", b.size(), a.size())
	}
	// Its ConfigMap text has its templates again, as the cluster's has: what the admission
	// webhook and a reproduction's inject-config.yaml read.
	for name, in := range map[string]*Install{"whole": a, "compacted": b} {
		cfg, err := inject.UnmarshalConfig([]byte(in.InjectorConfig))
		if err != nil || !maps.Equal(cfg.RawTemplates, builtinTemplates()) {
			t.Errorf("%s: the installation's injector config has templates %v (%v), want Istio's", name, slices.Collect(maps.Keys(cfg.RawTemplates)), err)
		}
	}
}

// TestOwnMeshWebhooksOfItsRevision: a revision's ConfigMaps alone, without its webhooks, are
// sent Pods by the webhooks the charts render for that revision (they select istio.io/rev=canary
// namespaces), not by the default revision's.
func TestOwnMeshWebhooksOfItsRevision(t *testing.T) {
	e := testEngine(t)
	canary, err := e.Install(t.Context(), InstallOptions{Set: []string{"revision=canary"}})
	if err != nil {
		t.Fatal(err)
	}
	own, err := e.Install(t.Context(), InstallOptions{Mesh: OwnMesh{InjectorConfig: canary.InjectorConfig, Values: canary.Values, MeshConfig: canary.MeshConfigYAML}, Revision: "canary"})
	if err != nil {
		t.Fatal(err)
	}
	if own.webhooksYAML != canary.webhooksYAML {
		t.Fatalf("the mesh's webhooks are not revision canary's:\n%.600s", own.webhooksYAML)
	}
	// Without a revision, the default revision's, as before.
	def, err := e.Install(t.Context(), InstallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := e.Install(t.Context(), InstallOptions{Mesh: OwnMesh{Values: def.Values}})
	if err != nil || plain.webhooksYAML != def.webhooksYAML {
		t.Fatalf("a mesh without a revision: %v", err)
	}
}

// manyRevisions is a List of n revisions' injector ConfigMaps, the i-th of revision name(i) (their
// mesh ConfigMaps left out: several revisions are an error before that is looked at).
func manyRevisions(n int, name func(i int) string) []byte {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: List\nitems:\n")
	for i := range n {
		fmt.Fprintf(&b, "- {apiVersion: v1, kind: ConfigMap, metadata: {name: %q}, data: {config: \"templates: {}\", values: \"{}\"}}\n", "istio-sidecar-injector-"+name(i))
	}
	return []byte(b.String())
}

// TestMeshRevisionsBounded: a paste of several revisions is an error that names them all up to
// ten; past that the first ten and how many more, so that 3,000 revisions (or a few with
// absurdly long names) are answered in a line, not with every name.
func TestMeshRevisionsBounded(t *testing.T) {
	rev := func(i int) string { return fmt.Sprintf("rev-%04d", i) }
	long := func(i int) string { return strings.Repeat(string(rune('a'+i)), 10000) }
	for _, c := range []struct {
		name      string
		in        []byte
		id        string
		says, not []string
	}{
		{"two", manyRevisions(2, rev), "mesh-revisions", []string{"(rev-0000, rev-0001)"}, nil},
		{"ten", manyRevisions(10, rev), "mesh-revisions", []string{"rev-0000", "rev-0009)"}, []string{" more)"}},
		{"eleven", manyRevisions(11, rev), "mesh-revisions-more", []string{"11 revisions (rev-0000", "rev-0009 and 1 more)"}, []string{"rev-0010"}},
		{"3,000", manyRevisions(3000, rev), "mesh-revisions-more", []string{"3000 revisions (rev-0000", "rev-0009 and 2990 more)"}, []string{"rev-0010", "rev-2999"}},
		{"long names", manyRevisions(3, long), "mesh-revisions", []string{strings.Repeat("a", 63) + "…, " + strings.Repeat("b", 63) + "…"}, []string{strings.Repeat("a", 64)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseMeshConfigMaps(c.in)
			ie := asInputError(t, err)
			if ie.ID != c.id || len(ie.Error()) > 2<<10 {
				t.Fatalf("ID %q, want %q; %d bytes: %.300s", ie.ID, c.id, len(ie.Error()), ie.Error())
			}
			for _, s := range c.says {
				if !strings.Contains(ie.Text(), s) {
					t.Errorf("%.300s\ndoes not say %q", ie.Text(), s)
				}
			}
			for _, s := range c.not {
				if strings.Contains(ie.Text(), s) {
					t.Errorf("%.300s\nsays %q", ie.Text(), s)
				}
			}
		})
	}
}

// TestOwnMeshEmbedded: the parts a mesh leaves out, which injection takes from the embedded
// Istio's installation; a compacted mesh (its templates Istio's, left out) gives its injector
// config.
func TestOwnMeshEmbedded(t *testing.T) {
	for _, c := range []struct {
		mesh OwnMesh
		want []string
	}{
		{OwnMesh{}, nil},
		{OwnMesh{InjectorConfig: "c", Values: "v", MeshConfig: "m"}, nil},
		{OwnMesh{IstioTemplates: true, Values: "v", MeshConfig: "m"}, nil},
		{OwnMesh{MeshConfig: "m"}, []string{"injectorConfig", "values"}},
		{OwnMesh{InjectorConfig: "c"}, []string{"values", "meshConfig"}},
		{OwnMesh{Webhooks: "w"}, []string{"injectorConfig", "values", "meshConfig"}},
	} {
		if got := c.mesh.Embedded(); !slices.Equal(got, c.want) {
			t.Errorf("%+v: %q, want %q", c.mesh, got, c.want)
		}
	}
}

// TestOptionTakes: an option of the values reaches injection from the rendered installation,
// not through a mesh that gives its own values; a mesh that gives only its mesh config still
// takes it.
func TestOptionTakes(t *testing.T) {
	e := testEngine(t)
	def, err := e.Install(t.Context(), InstallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	whole := OwnMesh{InjectorConfig: def.InjectorConfig, Values: def.Values, MeshConfig: def.MeshConfigYAML}
	for _, set := range []string{"components.cni.enabled=true", "values.global.proxy.seccompProfile.type=RuntimeDefault"} {
		for _, c := range []struct {
			name string
			o    InstallOptions
			want bool
		}{
			{"default", InstallOptions{}, true},
			{"other options", InstallOptions{Set: []string{"values.global.proxy.holdApplicationUntilProxyStarts=true"}}, true},
			{"already set", InstallOptions{Set: []string{set}}, false},
			{"a whole mesh", InstallOptions{Mesh: whole}, false},
			{"a mesh of its mesh config only", InstallOptions{Mesh: OwnMesh{MeshConfig: def.MeshConfigYAML}}, true},
		} {
			got, err := e.OptionTakes(t.Context(), c.o, set)
			if err != nil {
				t.Fatalf("%s, %s: %v", set, c.name, err)
			}
			if got != c.want {
				t.Errorf("%s, %s: takes %v, want %v", set, c.name, got, c.want)
			}
		}
	}
}

// TestDefaultConfigGives: the fields a proxy.istio.io/config value newly sets to what the mesh's
// defaultConfig already gives, and none where the mesh gives another value, the step set it
// before, or the value does not parse.
func TestDefaultConfigGives(t *testing.T) {
	e := testEngine(t)
	holds, err := e.Install(t.Context(), InstallOptions{Set: []string{"meshConfig.defaultConfig.holdApplicationUntilProxyStarts=true", "meshConfig.defaultConfig.terminationDrainDuration=30s"}})
	if err != nil {
		t.Fatal(err)
	}
	def, err := e.Install(t.Context(), InstallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const before = "concurrency: 2\nterminationDrainDuration: 30s"
	for _, c := range []struct {
		name     string
		in       *Install
		old, new string
		want     []string
	}{
		{"the mesh holds", holds, before, before + "\nholdApplicationUntilProxyStarts: true", []string{"holdApplicationUntilProxyStarts: true"}},
		{"both, from nothing", holds, "", before + "\nholdApplicationUntilProxyStarts: true", []string{"holdApplicationUntilProxyStarts: true", `terminationDrainDuration: "30s"`}},
		{"the default installation does not hold", def, before, before + "\nholdApplicationUntilProxyStarts: true", nil},
		{"another value", holds, "", "holdApplicationUntilProxyStarts: false\nterminationDrainDuration: 5s", nil},
		{"not ProxyConfig", holds, "", "holdApplicationUntilProxyStarts: [", nil},
	} {
		if got := c.in.DefaultConfigGives(c.old, c.new); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
