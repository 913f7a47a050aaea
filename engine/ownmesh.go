package engine

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"istio.io/api/label"
	"istio.io/istio/pkg/kube/inject"
	"sigs.k8s.io/yaml"

	"github.com/sidecarlab/sidecarlab/engine/input"
)

// OwnMesh is a mesh's own injection configuration: the three texts Istio's injector reads, as a
// cluster holds them. InjectorConfig is the istio-sidecar-injector ConfigMap's `config` (the
// injection templates), Values its `values`, MeshConfig the istio ConfigMap's `mesh`: what
// `istioctl kube-inject` reads from --injectConfigFile, --valuesFile and --meshConfigFile, in the
// same formats. A part left empty is the rendered installation's (the default one's when there
// are no other install options).
type OwnMesh struct {
	InjectorConfig string `json:"injectorConfig,omitempty"`
	Values         string `json:"values,omitempty"`
	MeshConfig     string `json:"meshConfig,omitempty"`
	// Webhooks are the mesh's MutatingWebhookConfigurations (YAML documents separated by "---"
	// lines), which decide which Pods the API server sends to the injector.
	Webhooks string `json:"webhooks,omitempty"`
	// IstioTemplates says InjectorConfig was given without its templates because they were
	// exactly the embedded Istio's (CompactMesh): they are those again.
	IstioTemplates bool `json:"istioTemplates,omitempty"`
	// Istio is the Istio version that installed the mesh, as its ConfigMaps say (see
	// ParseMeshConfigMaps; "" when they do not). It is only said, never used to inject.
	Istio string `json:"istio,omitempty"`
}

// MeshParts are the parts of a mesh that injection reads, by the names Embedded gives them.
var MeshParts = []string{"injectorConfig", "values", "meshConfig"}

// Embedded are the parts of the mesh injection reads that it does not give (of MeshParts, in
// that order), which come from the rendered installation, the embedded Istio's, instead: an API
// request's settings.install.mesh may leave any out. nil for a whole mesh, and for none.
func (m OwnMesh) Embedded() []string {
	if m.IsZero() {
		return nil
	}
	var out []string
	for i, given := range []bool{m.InjectorConfig != "" || m.IstioTemplates, m.Values != "", m.MeshConfig != ""} {
		if !given {
			out = append(out, MeshParts[i])
		}
	}
	return out
}

// EmbeddedTemplates reports whether the mesh injects with the embedded Istio's templates: its
// injector config left them out as exactly Istio's (IstioTemplates), or it gives no injector
// config at all.
func (m OwnMesh) EmbeddedTemplates() bool { return m.IstioTemplates || m.InjectorConfig == "" }

// IsZero reports whether no part is given.
func (m OwnMesh) IsZero() bool {
	return m.InjectorConfig == "" && m.Values == "" && m.MeshConfig == "" && m.Webhooks == "" && !m.IstioTemplates
}

// builtinTemplates are the embedded Istio's injection templates, as its default installation's
// injector config has them (nil if this build has no build-time render).
var builtinTemplates = sync.OnceValue(func() map[string]string {
	cm, ok := embeddedDefault()
	if !ok {
		return nil
	}
	cfg, err := inject.UnmarshalConfig([]byte(cm.InjectorConfig))
	if err != nil {
		return nil
	}
	return cfg.RawTemplates
})

// CompactMesh is the mesh with its injector config's templates left out when they are exactly
// the embedded Istio's, same names and same text (IstioTemplates then says so): what a link
// keeps of a pasted mesh, its values, mesh config and the rest of its injector config (~6 KB
// instead of ~110 KB). Injection is the same: the templates are put back when it is built. A
// mesh with templates of its own, or another Istio's, is returned as it is.
func CompactMesh(m OwnMesh) OwnMesh {
	builtin := builtinTemplates()
	if m.InjectorConfig == "" || m.IstioTemplates || builtin == nil {
		return m
	}
	cfg, err := injectorTemplates(m.InjectorConfig)
	if err != nil || !maps.Equal(cfg.RawTemplates, builtin) {
		return m
	}
	var whole map[string]any
	if yaml.Unmarshal([]byte(m.InjectorConfig), &whole) != nil {
		return m
	}
	delete(whole, "templates")
	rest, err := yaml.Marshal(whole)
	if err != nil {
		return m
	}
	m.InjectorConfig, m.IstioTemplates = string(rest), true
	return m
}

// over is the ConfigMaps with the parts the mesh gives in place of the rendered ones.
func (m OwnMesh) over(cm ConfigMaps) ConfigMaps {
	if m.InjectorConfig != "" {
		cm.InjectorConfig = m.InjectorConfig
	}
	if m.Values != "" {
		cm.Values = m.Values
	}
	if m.MeshConfig != "" {
		cm.MeshConfigYAML = m.MeshConfig
	}
	if m.Webhooks != "" {
		cm.Webhooks = m.Webhooks
	}
	return cm
}

// injectorTemplates are the injection templates of an injector config as istioctl kube-inject
// reads --injectConfigFile (readInjectConfigFile in istioctl/pkg/kubeinject): the ConfigMap's
// `config` (its templates), or, when the text is not such a config, one bare template, the
// sidecar template. The bare form has no policy or selectors; the config's others are Istio's.
func injectorTemplates(text string) (*inject.Config, error) {
	var probe inject.Config
	if err := yaml.Unmarshal([]byte(text), &probe); err != nil || len(probe.RawTemplates) == 0 {
		return &inject.Config{RawTemplates: inject.RawTemplates{inject.SidecarTemplateName: text}}, nil
	}
	cfg, err := inject.UnmarshalConfig([]byte(text))
	if err != nil {
		return nil, err
	}
	return &cfg, nil
}

// restoredConfig is a compacted mesh's injector config (CompactMesh) with the embedded Istio's
// templates put back.
func restoredConfig(text string) (string, error) {
	var whole map[string]any
	if err := yaml.Unmarshal([]byte(text), &whole); err != nil {
		return "", err
	}
	if whole == nil {
		whole = map[string]any{}
	}
	whole["templates"] = builtinTemplates()
	b, err := yaml.Marshal(whole)
	return string(b), err
}

// ownInstall is the installation of options that carry a mesh's own configuration: the one the
// other options render (the default installation when there are none), with the mesh's parts in
// place of the rendered ones. The render is cached under its own options; only the parse is
// repeated.
func (e *Engine) ownInstall(ctx context.Context, o InstallOptions, builtin map[string]string) (*Install, error) {
	base := o
	base.Mesh, base.Revision = OwnMesh{}, ""
	if rev := RevisionOf(o.Revision); rev != "" && o.Mesh.Webhooks == "" && o.Mesh.InjectorConfig != "" && o.Mesh.Values != "" {
		// A revision's ConfigMaps without its webhooks: the webhooks the charts render for that
		// revision, which select its namespaces (istio.io/rev=REV), not the default revision's.
		// Only the webhooks (and a mesh config the mesh does not give) come from this render;
		// istioctl's --revision alone, or with part of the files, is left as istioctl has it.
		base.Set = append(slices.Clone(base.Set), "revision="+rev)
	}
	rendered, err := e.Install(ctx, base)
	if err != nil {
		return nil, err
	}
	return e.finishInstall(o, o.Mesh.over(rendered.configMaps()), builtin)
}

// ConfigMap names and keys as Istio's charts write them and istioctl reads them; a revision's
// are named with "-<revision>" after them.
const (
	injectorConfigMap = "istio-sidecar-injector"
	meshConfigMap     = "istio"
)

// MeshConfigMaps is a mesh's configuration as ParseMeshConfigMaps reads it from its ConfigMaps.
type MeshConfigMaps struct {
	Mesh OwnMesh
	// Revision is the revision the ConfigMaps are of ("" for the default one), as their names
	// say.
	Revision string
	// LabelRevision is the istio.io/rev label of the ConfigMaps when it names another revision
	// than their names ("" when it agrees or is missing): said, never used. Operators write
	// other things there (banzaicloud's, "<revision>.<namespace>").
	LabelRevision string
}

// ParseMeshConfigMaps reads a mesh's configuration from what
//
//	kubectl get configmap -n istio-system istio-sidecar-injector istio -o yaml
//
// prints (a List, or the ConfigMaps as documents; a revision's, istio-sidecar-injector-<rev> and
// istio-<rev>, too). The revision is read from the ConfigMaps' names, as istioctl kube-inject
// --revision and a revision's istiod find them; their istio.io/rev label, when it names another,
// is only said (LabelRevision). ConfigMaps that are neither are skipped; more than one
// revision's is an error naming them.
func ParseMeshConfigMaps(text []byte) (MeshConfigMaps, error) {
	const field = "your mesh"
	docs, err := splitDocuments(text)
	if err != nil {
		var ie *input.Error
		if errors.As(err, &ie) {
			ie.Field = field
		}
		return MeshConfigMaps{}, err
	}
	type found struct {
		mesh     OwnMesh
		istio    string
		injector bool
		meshCM   bool
		doc      int
		line     int
		label    string // an istio.io/rev label naming another revision
	}
	byRev := map[string]*found{}
	var order []string
	take := func(doc int, line int, cm configMapDoc) {
		rev, ok := cm.revision()
		if !ok {
			return
		}
		f := byRev[rev]
		if f == nil {
			f = &found{doc: doc, line: line}
			byRev[rev] = f
			order = append(order, rev)
		}
		if l, ok := cm.Metadata.Labels[label.IoIstioRev.Name]; ok && RevisionOf(l) != rev && f.label == "" {
			f.label = l
		}
		if cm.isInjector() {
			f.mesh.InjectorConfig, f.mesh.Values, f.injector = cm.Data["config"], cm.Data["values"], true
			f.istio = cm.istioVersion()
		} else {
			f.mesh.MeshConfig, f.meshCM = cm.Data["mesh"], true
		}
	}
	for i, d := range docs {
		var obj configMapDoc
		if err := yaml.Unmarshal(d.raw, &obj); err != nil {
			ie := yamlError(err, i+1, d.line, d.raw)
			ie.Field = field
			return MeshConfigMaps{}, ie
		}
		if strings.HasSuffix(obj.Kind, "List") {
			for _, raw := range obj.Items {
				var item configMapDoc
				if err := json.Unmarshal(raw, &item); err != nil {
					return MeshConfigMaps{}, &input.Error{Doc: i + 1, Line: d.line, Field: field, Msg: err.Error()}
				}
				if item.Kind == "ConfigMap" {
					take(i+1, d.line, item)
				}
			}
			continue
		}
		if obj.Kind == "ConfigMap" {
			take(i+1, d.line, obj)
		}
	}
	var revs, names []string
	for _, rev := range order {
		if byRev[rev].injector {
			revs = append(revs, rev)
			if len(names) < maxNamedRevisions {
				names = append(names, shortRevisionName(RevisionName(rev)))
			}
		}
	}
	switch {
	case len(revs) == 0:
		return MeshConfigMaps{}, &input.Error{Field: field, ID: "mesh-no-injector"}
	case len(revs) > maxNamedRevisions:
		more := len(revs) - len(names)
		return MeshConfigMaps{}, &input.Error{Field: field, ID: "mesh-revisions-more",
			Params: input.Params("count", strconv.Itoa(len(revs)), "revisions", strings.Join(names, ", "), "more", strconv.Itoa(more)),
		}
	case len(revs) > 1:
		return MeshConfigMaps{}, &input.Error{Field: field, ID: "mesh-revisions", Params: input.Params("revisions", strings.Join(names, ", "))}
	}
	rev := revs[0]
	f := byRev[rev]
	if !f.meshCM {
		name := meshConfigMap
		if rev != "" {
			name += "-" + rev
		}
		return MeshConfigMaps{}, &input.Error{Doc: f.doc, Line: f.line, Field: field, ID: "mesh-no-mesh", Params: input.Params("nameQ", quote(name))}
	}
	missing := func(key, cm string) error {
		return &input.Error{Doc: f.doc, Line: f.line, Field: field, ID: "mesh-no-key", Params: input.Params("keyQ", quote(key), "configMap", cm)}
	}
	switch {
	case f.mesh.InjectorConfig == "":
		return MeshConfigMaps{}, missing("config", injectorConfigMap)
	case f.mesh.Values == "":
		return MeshConfigMaps{}, missing("values", injectorConfigMap)
	case f.mesh.MeshConfig == "":
		return MeshConfigMaps{}, missing("mesh", meshConfigMap)
	}
	if f.istio == "" {
		f.istio = valuesTag(f.mesh.Values)
	}
	// The Istio that installed them: as their labels say (app.kubernetes.io/version, else
	// helm.sh/chart's "istiod-<version>"), else the values' image tag.
	f.mesh.Istio = f.istio
	return MeshConfigMaps{Mesh: f.mesh, Revision: rev, LabelRevision: shortRevisionName(f.label)}, nil
}

// istioVersion is the Istio version a chart's labels name: app.kubernetes.io/version (the chart's
// appVersion), else helm.sh/chart ("istiod-1.27.3"). The charts in Istio's source, which a
// development build and istioctl of one render, say 1.0.0 (the release tooling writes the real
// version): that is no version.
func (c configMapDoc) istioVersion() string {
	const placeholder = "1.0.0"
	if v := c.Metadata.Labels["app.kubernetes.io/version"]; v != "" && v != placeholder {
		return v
	}
	if v, ok := strings.CutPrefix(c.Metadata.Labels["helm.sh/chart"], "istiod-"); ok && v != placeholder {
		return v
	}
	return ""
}

// valuesTag is the proxy image tag of injector values (global.tag), when it names a version.
func valuesTag(values string) string {
	var v struct {
		Global struct {
			Tag any `json:"tag"`
		} `json:"global"`
	}
	if json.Unmarshal([]byte(values), &v) != nil {
		return ""
	}
	tag, _ := v.Global.Tag.(string)
	if tag == "" || tag == "latest" {
		return ""
	}
	return tag
}

// SameIstio reports whether the mesh was installed by the embedded Istio's release line (as far
// as its ConfigMaps say: an unknown version is not another one).
func (m OwnMesh) SameIstio() bool {
	if m.Istio == "" {
		return true
	}
	v := strings.TrimPrefix(m.Istio, "v")
	return v == Version().Istio || strings.HasPrefix(v, Version().Istio+".") || strings.HasPrefix(v, Version().Istio+"-")
}

// configMapDoc is what ParseMeshConfigMaps reads of a document: a ConfigMap, or a List of them.
type configMapDoc struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Data  map[string]string `json:"data"`
	Items []json.RawMessage `json:"items"`
}

func (c configMapDoc) isInjector() bool {
	return c.Metadata.Name == injectorConfigMap || strings.HasPrefix(c.Metadata.Name, injectorConfigMap+"-")
}

// revision is the revision a ConfigMap belongs to ("" for the default one), and whether it is one
// injection reads: istio-sidecar-injector[-rev] with a config, istio[-rev] with a mesh. The name
// says, as it does to istioctl (--revision REV reads istio-sidecar-injector-REV and istio-REV)
// and to a revision's istiod. The charts also label both with istio.io/rev ("default" for the
// default revision), but that label is not what finds them, and operators write other things
// into it.
func (c configMapDoc) revision() (string, bool) {
	var prefix string
	switch {
	case c.isInjector():
		if _, ok := c.Data["config"]; !ok {
			return "", false
		}
		prefix = injectorConfigMap
	case c.Metadata.Name == meshConfigMap || strings.HasPrefix(c.Metadata.Name, meshConfigMap+"-"):
		if _, ok := c.Data["mesh"]; !ok {
			return "", false
		}
		prefix = meshConfigMap
	default:
		return "", false
	}
	return strings.TrimPrefix(strings.TrimPrefix(c.Metadata.Name, prefix), "-"), true
}

// maxNamedRevisions bounds how many revisions the error for a paste of several revisions names:
// the first ten, then how many more, so that a paste of thousands is not answered with every
// name (20 KB for 3,000).
const maxNamedRevisions = 10

// maxRevisionName bounds one revision's name in that error: a revision is a label value (at most
// 63 characters), but a pasted label or ConfigMap name may be any length.
const maxRevisionName = 63

// shortRevisionName is name cut to maxRevisionName bytes (on a character's boundary) and "…".
func shortRevisionName(name string) string {
	if len(name) <= maxRevisionName {
		return name
	}
	return strings.ToValidUTF8(name[:maxRevisionName], "") + "…"
}

// RevisionOf is the revision Istio's templates are given for a revision name: "" for "default",
// as istioctl kube-inject does with --revision default.
func RevisionOf(rev string) string {
	if rev == "default" {
		return ""
	}
	return rev
}

// RevisionName is how a revision is named to people and labels: "default" for "".
func RevisionName(rev string) string {
	if rev == "" {
		return "default"
	}
	return rev
}

// webhookRevision refuses, in webhook mode, a revision other than the one the installation's
// values name: the webhook is that revision's istiod, which injects as its own revision.
func (in *Install) webhookRevision(s Settings) error {
	want := RevisionOf(in.values.Struct().GetRevision())
	got := RevisionOf(s.Install.Revision)
	if s.mode() != ModeWebhook || got == "" || got == want {
		return nil
	}
	return &input.Error{Field: "revision", ID: "webhook-revision", Params: input.Params("revisionQ", quote(got), "valuesQ", quote(RevisionName(want)))}
}

// OptionTakes reports whether adding the install option set ("values.global.proxy.…=…", as a
// --set path) to o changes what injection and admission read from the installation: its injector
// config, values, mesh config or webhooks. Under a mesh that gives its own values, an option of
// the values changes nothing: the mesh is not reinstalled by a --set (the rendered parts it
// replaces are the only ones the option reaches).
func (e *Engine) OptionTakes(ctx context.Context, o InstallOptions, set string) (bool, error) {
	before, err := e.Install(ctx, o)
	if err != nil {
		return false, err
	}
	with := o
	with.Set = append(slices.Clip(o.Set), set)
	after, err := e.Install(ctx, with)
	if err != nil {
		return false, err
	}
	return before.InjectorConfig != after.InjectorConfig || before.Values != after.Values ||
		before.MeshConfigYAML != after.MeshConfigYAML || before.webhooksYAML != after.webhooksYAML, nil
}
