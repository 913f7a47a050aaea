package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"
	meshconfig "istio.io/api/mesh/v1alpha1"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/engine/yamldoc"

	"istio.io/istio/operator/pkg/component"
	"istio.io/istio/operator/pkg/render"
	"istio.io/istio/pkg/config/mesh"
	"istio.io/istio/pkg/kube/inject"
	"sigs.k8s.io/yaml"
)

// InstallOptions describe an Istio installation the way `istioctl manifest generate` takes it:
// --set paths of the IstioOperator spec and, optionally, one IstioOperator YAML overlay. The zero
// value is the `default` profile with no overrides.
type InstallOptions struct {
	// Set holds IstioOperator paths, "values.global.proxy.holdApplicationUntilProxyStarts=true".
	Set []string `json:"set,omitempty"`
	// Overlay is an IstioOperator YAML document applied before the Set paths.
	Overlay string `json:"overlay,omitempty"`
	// Mesh is a mesh's own configuration (its ConfigMaps' texts), in place of the parts the
	// options above render.
	Mesh OwnMesh `json:"mesh,omitzero"`
	// Revision is the revision the installation injects as, istioctl kube-inject's --revision:
	// Istio's templates write it (istio.io/rev) and name things after it. "" and "default" are
	// the default revision. The webhook (webhook mode) is istiod, which injects as the revision
	// its values name; Revision must then be that one or empty.
	Revision string `json:"revision,omitempty"`
}

// IsDefault reports whether these options select the default installation.
func (o InstallOptions) IsDefault() bool {
	return len(o.normalizedSet()) == 0 && strings.TrimSpace(o.Overlay) == "" && o.Mesh.IsZero() && RevisionOf(o.Revision) == ""
}

func (o InstallOptions) normalizedSet() []string {
	var out []string
	for _, s := range o.Set {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Hash identifies the rendered installation: equal options give equal hashes. The order of --set
// paths is kept, since a later path overrides an earlier one.
func (o InstallOptions) Hash() string {
	h := sha256.New()
	for _, s := range o.normalizedSet() {
		fmt.Fprintf(h, "set\x00%s\x00", s)
	}
	if ov := strings.TrimSpace(o.Overlay); ov != "" {
		fmt.Fprintf(h, "overlay\x00%s\x00", ov)
	}
	for _, part := range []struct{ name, text string }{{"injector", o.Mesh.InjectorConfig}, {"values", o.Mesh.Values}, {"mesh", o.Mesh.MeshConfig}, {"webhooks", o.Mesh.Webhooks}} {
		if part.text != "" {
			fmt.Fprintf(h, "%s\x00%d\x00%s", part.name, len(part.text), part.text)
		}
	}
	if o.Mesh.IstioTemplates {
		fmt.Fprintf(h, "istio-templates\x00")
	}
	if rev := RevisionOf(o.Revision); rev != "" {
		fmt.Fprintf(h, "revision\x00%s\x00", rev)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Install is one rendered Istio installation: the `istio-sidecar-injector` ConfigMap (templates
// and values) and the `istio` ConfigMap (mesh config), parsed the way istiod and istioctl parse
// them. It is immutable once built and shared by concurrent injections.
type Install struct {
	Options InstallOptions
	Hash    string

	// InjectorConfig, Values and MeshConfigYAML are the ConfigMap data, byte for byte: what
	// `istioctl kube-inject --injectConfigFile --valuesFile --meshConfigFile` would read.
	InjectorConfig string
	Values         string
	MeshConfigYAML string
	// webhooksYAML are the MutatingWebhookConfigurations the same render made (or the mesh's
	// own), as ConfigMaps has them: what a worker and a mesh's own parts are given.
	webhooksYAML string
	// webhooks are webhooksYAML read once; webhooksErr is why they could not be (reported only
	// to the one who asks for them: injection does not read them).
	webhooks    []*admissionregistrationv1.MutatingWebhookConfiguration
	webhooksErr error
	// cni is the CNI node agent's ConfigMap data; nil without one.
	cni map[string]string
	// ztunnel is the ztunnel container's resources as the ztunnel chart rendered its DaemonSet;
	// nil without ztunnel.
	ztunnel *corev1.ResourceRequirements

	templates inject.Templates
	// rawTemplates are the injection templates' text, by name, as Istio decoded them; custom is
	// true when one of them is not the default installation's (the options brought it).
	rawTemplates map[string]string
	custom       bool
	values       inject.ValuesConfig
	mesh         *meshconfig.MeshConfig
	// selection is the injector config's injection policy and selectors, which the webhook
	// decides by (webhook mode); kube-inject ignores them.
	selection injectionPolicy
	// traced are the templates traced for Explain, made once each (at most one per template the
	// installation has, so bounded with it).
	traced *tracedTemplates
}

// size estimates the memory an installation holds: its ConfigMap texts and, parsed from them, the
// templates, values and mesh config (counted as three times the text).
func (in *Install) size() int64 {
	text := len(in.InjectorConfig) + len(in.Values) + len(in.MeshConfigYAML)
	for k, v := range in.cni {
		text += len(k) + len(v)
	}
	return 4*int64(text) + int64(len(in.webhooksYAML))
}

// ConfigMaps are the data of the two ConfigMaps injection reads, byte for byte: the
// istio-sidecar-injector's config and values, and the istio ConfigMap's mesh config; and the
// MutatingWebhookConfigurations the same render makes, which decide which pods the API server
// sends to the injector.
type ConfigMaps struct {
	InjectorConfig string `json:"injectorConfig"`
	Values         string `json:"values"`
	MeshConfigYAML string `json:"mesh"`
	// Webhooks are the rendered MutatingWebhookConfigurations as the charts wrote them, one
	// YAML document each, separated by "---" lines, in the render's order.
	Webhooks string `json:"webhooks,omitempty"`
	// CNI is the data of the CNI node agent's ConfigMap (istio-cni-config), which decides which
	// pods join ambient (package ambient reads it); nil when the render has no CNI agent.
	CNI map[string]string `json:"cni,omitempty"`
	// Ztunnel is the resources of the ztunnel DaemonSet's container (istio-proxy) as the ztunnel
	// chart rendered it: what every node gives ztunnel in ambient. Nil when the render has no
	// ztunnel.
	Ztunnel *corev1.ResourceRequirements `json:"ztunnel,omitempty"`
}

// renderInstall renders the options in this process and builds the installation; the policy is
// checked on the options before the render and on the injection templates after it. builtin are
// the default installation's templates (nil while rendering the default one itself).
func renderInstall(o InstallOptions, policy InstallPolicy, builtin map[string]string) (*Install, error) {
	if !o.IsDefault() {
		if err := policy.check(o); err != nil {
			return nil, err
		}
	}
	cm, err := renderConfigMaps(o)
	if err != nil {
		return nil, err
	}
	return buildInstall(o, cm, policy, builtin)
}

// renderConfigMaps runs Istio's own installer (operator/pkg/render.GenerateManifest over the
// charts compiled into the Istio module) and picks out the two ConfigMaps injection reads. It
// runs the charts' templates over the options: an isolated worker runs it for a server.
func renderConfigMaps(o InstallOptions) (ConfigMaps, error) {
	var cm ConfigMaps
	set := o.normalizedSet()
	for _, s := range set {
		if !strings.Contains(s, "=") {
			return cm, &input.Error{Field: "install option " + quote(s), ID: "install-option-format"}
		}
	}
	var files []string
	if ov := strings.TrimSpace(o.Overlay); ov != "" {
		// Check it is YAML first so the error names the overlay and line, not a temp file.
		var probe map[string]any
		if err := yaml.Unmarshal([]byte(ov), &probe); err != nil {
			line := yamldoc.ErrorLine(err.Error(), []byte(ov))
			if line > 0 {
				// At its line in the overlay as given, blank lines before it and all.
				line += strings.Count(o.Overlay[:strings.Index(o.Overlay, ov)], "\n")
			}
			return cm, &input.Error{Field: "install overlay", Line: line, Msg: err.Error()}
		}
		// GenerateManifest reads overlays from files only.
		f, err := os.CreateTemp("", "sidecarlab-iop-*.yaml")
		if err != nil {
			return cm, err
		}
		defer os.Remove(f.Name())
		if _, err := f.WriteString(ov); err != nil {
			f.Close()
			return cm, err
		}
		if err := f.Close(); err != nil {
			return cm, err
		}
		files = append(files, f.Name())
	}
	sets, _, err := render.GenerateManifest(files, set, false, nil, nil)
	if err != nil {
		msg := err.Error()
		for _, f := range files {
			msg = strings.ReplaceAll(msg, f, "overlay")
		}
		return cm, &input.Error{Field: installField(o, msg), Msg: msg}
	}
	// The ConfigMaps are named after the revision: istio-sidecar-injector and istio, or
	// istio-sidecar-injector-<rev> and istio-<rev>.
	var foundInjector, foundMesh bool
	var webhooks []string
	var meshName string
	meshes := map[string]string{}
	for _, s := range sets {
		for _, m := range s.Manifests {
			if m.GetKind() == "MutatingWebhookConfiguration" {
				webhooks = append(webhooks, strings.TrimSuffix(m.Content, "\n")+"\n")
				continue
			}
			if m.GetKind() == "DaemonSet" && s.Component == component.ZtunnelComponentName && cm.Ztunnel == nil {
				if cm.Ztunnel, err = ztunnelResources(m.Object); err != nil {
					return cm, err
				}
				continue
			}
			if m.GetKind() != "ConfigMap" {
				continue
			}
			data, _ := m.Object["data"].(map[string]any)
			if m.GetName() == "istio-cni-config" && cm.CNI == nil {
				cm.CNI = stringData(data)
			}
			if rev, ok := strings.CutPrefix(m.GetName(), "istio-sidecar-injector"); ok && (rev == "" || strings.HasPrefix(rev, "-")) && !foundInjector {
				cm.InjectorConfig, _ = data["config"].(string)
				cm.Values, _ = data["values"].(string)
				foundInjector = true
				meshName = "istio" + rev
			}
			if mc, ok := data["mesh"].(string); ok {
				meshes[m.GetName()] = mc
			}
		}
	}
	if foundInjector {
		cm.MeshConfigYAML, foundMesh = meshes[meshName]
	}
	if !foundInjector || !foundMesh {
		return cm, &input.Error{Field: installField(o, ""), ID: "no-istiod"}
	}
	cm.Webhooks = strings.Join(webhooks, "---\n")
	return cm, nil
}

// buildInstall parses rendered ConfigMaps the way istiod and istioctl parse them. It parses the
// injection templates but runs none of them. Unless the policy allows custom templates, templates
// other than builtin are refused (for options that are not the default).
func buildInstall(o InstallOptions, cm ConfigMaps, policy InstallPolicy, builtin map[string]string) (*Install, error) {
	in := &Install{Options: o, Hash: o.Hash(), InjectorConfig: cm.InjectorConfig, Values: cm.Values, MeshConfigYAML: cm.MeshConfigYAML, webhooksYAML: cm.Webhooks, cni: cm.CNI, ztunnel: cm.Ztunnel, traced: &tracedTemplates{}}
	in.webhooks, in.webhooksErr = webhookConfigurations(cm.Webhooks)
	if o.Mesh.IstioTemplates {
		// A compacted mesh (CompactMesh): its config again with its templates, the embedded
		// Istio's, as the cluster holds it — for the injector, the admission webhook and a
		// reproduction's inject-config.yaml alike.
		var err error
		if in.InjectorConfig, err = restoredConfig(in.InjectorConfig); err != nil {
			return nil, &input.Error{Field: o.partField(o.Mesh.InjectorConfig), ID: "injector-config", Params: input.Params("error", err.Error())}
		}
	}
	// In istioctl kube-inject's order, so that the first error is the one it reports: the mesh
	// config, the injector config, the templates, the values (setupKubeInjectParameters, then
	// its injection). A 1.3–1.5 mesh fails on its mesh config's empty trustDomain before its
	// templates' render function.
	var err error
	if in.mesh, err = mesh.ApplyMeshConfig(in.MeshConfigYAML, mesh.DefaultMeshConfig()); err != nil {
		return nil, &input.Error{Field: o.partField(o.Mesh.MeshConfig), ID: "mesh-config", Params: input.Params("error", err.Error())}
	}
	// Read as istioctl kube-inject reads --injectConfigFile: a rendered config is always the
	// ConfigMap's, a mesh's own may be one bare template.
	cfg, err := injectorTemplates(in.InjectorConfig)
	if err != nil {
		return nil, &input.Error{Field: o.partField(o.Mesh.InjectorConfig), ID: "injector-config", Params: input.Params("error", err.Error())}
	}
	if !o.IsDefault() {
		if err := policy.checkTemplates(o, cfg.RawTemplates, builtin); err != nil {
			return nil, err
		}
		in.custom = customTemplate(cfg.RawTemplates, builtin) != ""
	}
	in.rawTemplates = cfg.RawTemplates
	in.selection = injectionPolicy{policy: cfg.Policy, never: cfg.NeverInjectSelector, always: cfg.AlwaysInjectSelector}
	if in.templates, err = inject.ParseTemplates(cfg.RawTemplates); err != nil {
		return nil, &input.Error{Field: o.partField(o.Mesh.InjectorConfig), ID: "injection-templates", Params: input.Params("error", err.Error())}
	}
	if in.values, err = inject.NewValuesConfig(in.Values); err != nil {
		return nil, &input.Error{Field: o.partField(o.Mesh.Values), ID: "injector-values", Params: input.Params("error", err.Error())}
	}
	return in, nil
}

// partField names what an error in one part of the ConfigMaps is about: the mesh's own
// configuration when the mesh gave that part, else the options that rendered it.
func (o InstallOptions) partField(own string) string {
	if own != "" {
		return "your mesh"
	}
	return installField(o, "")
}

// WebhookConfigurations are the installation's MutatingWebhookConfigurations, in the render's
// order (the mesh's own when it gives them): what the API server chooses the webhooks it calls
// for a Pod by (package admission). They are shared by every caller: read them, never change
// them (DeepCopy first).
func (in *Install) WebhookConfigurations() ([]*admissionregistrationv1.MutatingWebhookConfiguration, error) {
	return in.webhooks, in.webhooksErr
}

// webhookConfigurations reads MutatingWebhookConfigurations written as ConfigMaps.Webhooks has
// them: YAML documents separated by "---" lines.
func webhookConfigurations(text string) ([]*admissionregistrationv1.MutatingWebhookConfiguration, error) {
	var out []*admissionregistrationv1.MutatingWebhookConfiguration
	for _, doc := range strings.Split(text, "\n---\n") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		c := &admissionregistrationv1.MutatingWebhookConfiguration{}
		if err := yaml.UnmarshalStrict([]byte(doc), c); err != nil {
			return nil, &input.Fault{ID: "webhook-config", Err: err}
		}
		out = append(out, c)
	}
	return out, nil
}

// configMaps are the installation's ConfigMaps, as a worker is given them.
func (in *Install) configMaps() ConfigMaps {
	return ConfigMaps{InjectorConfig: in.InjectorConfig, Values: in.Values, MeshConfigYAML: in.MeshConfigYAML, Webhooks: in.webhooksYAML, CNI: in.cni, Ztunnel: in.ztunnel}
}

var unknownFieldRE = regexp.MustCompile(`unknown field "([^"]+)"`)

// installField names what an install error is about: the one --set path, the --set path that
// mentions the unknown field Istio complains about, the overlay, or all options.
func installField(o InstallOptions, msg string) string {
	set := o.normalizedSet()
	if m := unknownFieldRE.FindStringSubmatch(msg); m != nil && len(set) > 1 {
		for _, s := range set {
			path, _, _ := strings.Cut(s, "=")
			if slices.Contains(strings.Split(path, "."), m[1]) {
				return "install option " + quote(s)
			}
		}
	}
	switch {
	case len(set) == 1 && strings.TrimSpace(o.Overlay) == "":
		return "install option " + quote(set[0])
	case len(set) == 0:
		return "install overlay"
	default:
		return "install options"
	}
}

func quote(s string) string { return fmt.Sprintf("%q", s) }

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// CNI is the data of the installation's CNI node agent's ConfigMap (istio-cni-config), nil when
// it has none. Callers must not change it.
func (in *Install) CNI() map[string]string { return in.cni }

// stringData is a ConfigMap's data as strings (a rendered manifest's values are strings).
func stringData(data map[string]any) map[string]string {
	out := make(map[string]string, len(data))
	for k, v := range data {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

// ztunnelResources are the resources of the ztunnel chart's container (named istio-proxy in
// its DaemonSet) in a rendered DaemonSet.
func ztunnelResources(obj map[string]any) (*corev1.ResourceRequirements, error) {
	var ds appsv1.DaemonSet
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, &ds); err != nil {
		return nil, &input.Fault{ID: "ztunnel-daemonset", Err: err}
	}
	for _, c := range ds.Spec.Template.Spec.Containers {
		if c.Name == "istio-proxy" {
			return c.Resources.DeepCopy(), nil
		}
	}
	return nil, &input.Fault{ID: "ztunnel-no-proxy", Params: input.Params("name", ds.Name)}
}

// Ztunnel is the resources of ztunnel's container as the installation's ztunnel chart
// rendered them (one ztunnel runs on every node); false when the installation has no ztunnel.
func (in *Install) Ztunnel() (corev1.ResourceRequirements, bool) {
	if in.ztunnel == nil {
		return corev1.ResourceRequirements{}, false
	}
	return *in.ztunnel.DeepCopy(), true
}

// DefaultConfigGives lists the top-level fields the proxy.istio.io/config value new sets (and
// the value old, the annotation before, did not set to the same) whose value the installation's
// mesh config already gives in its defaultConfig: Istio merges the annotation over defaultConfig,
// so setting them changes nothing in the proxy's config, and the step that sets them changes less
// than it would on a mesh without them. Each as "name: value" (the value as JSON), sorted. A
// value Istio cannot read gives none.
func (in *Install) DefaultConfigGives(old, new string) []string {
	def := in.mesh.GetDefaultConfig()
	pc, err := mesh.MergeProxyConfig(new, &meshconfig.ProxyConfig{})
	if def == nil || err != nil {
		return nil
	}
	before, err := mesh.MergeProxyConfig(old, &meshconfig.ProxyConfig{})
	if err != nil {
		before = &meshconfig.ProxyConfig{}
	}
	d, b := def.ProtoReflect(), before.ProtoReflect()
	var out []string
	pc.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if !d.Has(fd) || !d.Get(fd).Equal(v) || (b.Has(fd) && b.Get(fd).Equal(v)) {
			return true
		}
		one := &meshconfig.ProxyConfig{}
		one.ProtoReflect().Set(fd, v)
		text, err := protojson.Marshal(one)
		var m map[string]any
		if err != nil || json.Unmarshal(text, &m) != nil || len(m) != 1 {
			return true
		}
		for k, val := range m {
			if b, err := json.Marshal(val); err == nil { // protojson's spacing is unstable on purpose
				out = append(out, k+": "+string(b))
			}
		}
		return true
	})
	slices.Sort(out)
	return out
}
