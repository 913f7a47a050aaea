// Package upgrade previews an upgrade of a mesh of the user's own to the embedded Istio: the plan
// (NewPlan: which of the mesh's values keys are carried, left behind and why) and the preview
// (NewPreview: the same manifest injected by both sides, compared document by document).
package upgrade

import (
	"context"
	"encoding/json"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"google.golang.org/protobuf/reflect/protoreflect"
	meshconfig "istio.io/api/mesh/v1alpha1"
	"istio.io/istio/operator/pkg/apis"
	"sigs.k8s.io/yaml"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/diff"
)

// An upgrade preview has two sides: the old one injects with a mesh's own configuration (its
// templates, values and mesh config: engine.InstallOptions.Mesh), the new one with the embedded Istio
// rendered with that mesh's settings carried over (Plan.New). The mesh's `values` is the old
// chart's values already merged with its defaults, so feeding it back whole would pin the old
// defaults, the old proxy image among them: only the keys that differ from the embedded chart's
// defaults are carried, each one listed, and the reader may leave any out.

// Engine is what an upgrade needs of the engine (engine.Engine has it).
type Engine interface {
	Install(ctx context.Context, o engine.InstallOptions) (*engine.Install, error)
	Inject(ctx context.Context, manifest []byte, steps []input.Step, s engine.Settings) (*engine.Injection, error)
	Explain(ctx context.Context, manifest []byte, steps []input.Step, s engine.Settings) ([]engine.Provenance, error)
}

// ValueKey is one key of a mesh's injector values that differs from the embedded chart's
// defaults.
type ValueKey struct {
	// Path is the key's place in the values, e.g. global.proxy.resources.requests.cpu (a
	// segment with a dot in it is quoted).
	Path string `json:"path"`
	// Yours is the mesh's value; Default the embedded chart's (absent when it has none).
	Yours   any `json:"yours"`
	Default any `json:"default,omitempty"`
	// Unknown says the embedded Istio's values have no such key: it cannot be carried.
	Unknown bool `json:"unknown,omitempty"`
	// Carried says the new side sets it.
	Carried bool `json:"carried"`
	// Removed says the embedded Istio's charts refuse the key as removed (their NOTES.txt fails
	// the render with "<key> is removed"): it is left behind, whatever the reader chose.
	Removed bool `json:"removed,omitempty"`
	// NoEffect says the new side, given the key, does not pass it on to anything injection reads
	// (a section the istiod chart leaves out of the injector's values, such as istio_cni.chained
	// or pilot.autoscaleMin): it is left behind, whatever the reader chose.
	NoEffect bool `json:"noEffect,omitempty"`
	// MovedTo is where the new side sets the key, when Istio now reads it from another place
	// (istio_cni.enabled: components.cni.enabled).
	MovedTo string `json:"movedTo,omitempty"`
}

// Plan is how a mesh's settings are carried to the embedded Istio.
type Plan struct {
	// Keys are the values' keys that differ from the embedded chart's defaults.
	Keys []ValueKey `json:"keys"`
	// MeshUnknown are the mesh config's fields the embedded Istio does not know: left out.
	MeshUnknown []string `json:"meshUnknown,omitempty"`
	// New is the new side's install options: an IstioOperator overlay with the carried values,
	// the mesh config and the revision.
	New engine.InstallOptions `json:"new"`
	// OwnTemplates says the old side's templates are not the embedded Istio's (another release's,
	// or the user's): they run with the embedded Istio's injector code, since the older code is
	// not available here; OldIstio is the Istio that installed the mesh, as its labels say.
	OwnTemplates bool   `json:"ownTemplates,omitempty"`
	OldIstio     string `json:"oldIstio,omitempty"`
}

// NotCarriedByDefault are the keys an upgrade preview leaves to the new release unless the
// reader carries them: the proxy image's registry and version, which the release sets.
var NotCarriedByDefault = []string{"global.hub", "global.tag"}

// NewPlan compares the mesh of old (its values and mesh config) with the embedded Istio's
// defaults and makes the new side's install options: every differing key that carry says to
// carry (nil: all but NotCarriedByDefault), and the mesh config without its unknown fields.
func NewPlan(ctx context.Context, e Engine, old engine.InstallOptions, carry func(path string) bool) (*Plan, error) {
	if old.Mesh.IsZero() {
		return nil, &input.Error{Field: "your mesh", ID: "upgrade-no-mesh"}
	}
	if carry == nil {
		carry = func(path string) bool { return !slices.Contains(NotCarriedByDefault, path) }
	}
	def, err := e.Install(ctx, engine.InstallOptions{})
	if err != nil {
		return nil, err
	}
	var yours, defaults map[string]any
	if old.Mesh.Values != "" {
		// YAML, as Istio reads the values (NewValuesConfig): a real mesh's values are JSON with
		// a bare word here and there (kubeflow's 1.23: "type": RuntimeDefault), which Istio takes.
		if err := yaml.Unmarshal([]byte(old.Mesh.Values), &yours); err != nil {
			return nil, &input.Error{Field: "your mesh", ID: "injector-values", Params: map[string]string{"error": err.Error()}}
		}
	}
	if err := json.Unmarshal([]byte(def.Values), &defaults); err != nil {
		return nil, err
	}
	up := &Plan{OldIstio: old.Mesh.Istio, OwnTemplates: old.Mesh.InjectorConfig != "" && !engine.CompactMesh(old.Mesh).IstioTemplates}
	schema := (&apis.Values{}).ProtoReflect().Descriptor()
	var paths [][]string // of up.Keys
	for _, k := range differingKeys(yours, defaults, schema, nil) {
		if k.path[0] == "revision" {
			continue // the new side's revision is the old one's, as the install's
		}
		vk := ValueKey{Path: pathText(k.path), Yours: k.yours, Default: k.def, Unknown: !knownPath(schema, k.path)}
		if m, ok := movedKeys[vk.Path]; ok {
			if d, ok := getPath(defaults, strings.Split(m.reads, ".")); ok && reflect.DeepEqual(d, k.yours) {
				continue // where Istio reads it now, the default is already yours
			}
			vk.MovedTo = m.to
		}
		vk.Carried = !vk.Unknown && carry(vk.Path)
		up.Keys = append(up.Keys, vk)
		paths = append(paths, k.path)
	}
	spec := map[string]any{}
	rev := engine.RevisionOf(old.Revision)
	if rev == "" {
		if r, ok := yours["revision"].(string); ok {
			rev = engine.RevisionOf(r)
		}
	}
	if rev != "" {
		spec["revision"] = rev
	}
	if strings.TrimSpace(old.Mesh.MeshConfig) != "" {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(old.Mesh.MeshConfig), &m); err != nil {
			return nil, &input.Error{Field: "your mesh", ID: "mesh-config", Params: map[string]string{"error": err.Error()}}
		}
		meshSchema := (&meshconfig.MeshConfig{}).ProtoReflect().Descriptor()
		for _, p := range unknownPaths(meshSchema, m, nil) {
			up.MeshUnknown = append(up.MeshUnknown, pathText(p))
			deletePath(m, p)
		}
		if len(m) > 0 {
			spec["meshConfig"] = m
		}
	}
	up.New.Revision = rev
	// Each key carried is checked on the render: the embedded Istio's charts refuse some keys of
	// older releases as removed, and pass others on to nothing injection reads. Either is left
	// behind and said so, and the render tried again, until it renders with every carried key
	// in effect or fails for another reason (then the preview says that error).
	for range len(up.Keys) + 1 {
		carried, components := map[string]any{}, map[string]any{}
		for i, k := range up.Keys {
			switch {
			case !k.Carried:
			case k.MovedTo != "":
				setPath(components, strings.Split(strings.TrimPrefix(k.MovedTo, "components."), "."), k.Yours)
			default:
				setPath(carried, paths[i], k.Yours)
			}
		}
		for key, m := range map[string]map[string]any{"values": carried, "components": components} {
			if len(m) > 0 {
				spec[key] = m
			} else {
				delete(spec, key)
			}
		}
		up.New.Overlay = ""
		if len(spec) > 0 {
			b, err := yaml.Marshal(map[string]any{"apiVersion": "install.istio.io/v1alpha1", "kind": "IstioOperator", "spec": spec})
			if err != nil {
				return nil, err
			}
			up.New.Overlay = string(b)
		}
		in, err := e.Install(ctx, up.New)
		if err != nil {
			i := slices.IndexFunc(up.Keys, func(k ValueKey) bool { return k.Carried && removedByChart(err.Error(), k.Path) })
			if i < 0 {
				break
			}
			up.Keys[i].Carried, up.Keys[i].Removed = false, true
			continue
		}
		lost, err := lostKeys(in, up.Keys, paths)
		if err != nil {
			return nil, err
		}
		for _, i := range lost {
			up.Keys[i].Carried, up.Keys[i].NoEffect = false, true
		}
		if len(lost) == 0 {
			break
		}
	}
	return up, nil
}

// movedKeys are values keys of older releases that Istio now reads from another place: where the
// new side sets them (an IstioOperator path), and the injector's values key the render makes of
// it. istio_cni.enabled: the render sets values.pilot.cni.enabled from components.cni.enabled
// (operator/pkg/render/manifest.go), which the sidecar template reads, and the istiod chart
// passes no istio_cni on to the injector.
var movedKeys = map[string]struct{ to, reads string }{
	"istio_cni.enabled": {to: "components.cni.enabled", reads: "pilot.cni.enabled"},
}

// lostKeys are the indexes of the carried keys whose value the rendered installation in does not
// have where injection reads it: the injector's values (the istiod chart passes on only some of
// them: global, sidecarInjectorWebhook, revision, pilot's cni and env, gateways' security
// settings), or the mesh config for a key under meshConfig.
func lostKeys(in *engine.Install, keys []ValueKey, paths [][]string) ([]int, error) {
	var values, mesh map[string]any
	if err := yaml.Unmarshal([]byte(in.Values), &values); err != nil {
		return nil, err
	}
	if err := yaml.Unmarshal([]byte(in.MeshConfigYAML), &mesh); err != nil {
		return nil, err
	}
	var out []int
	for i, k := range keys {
		if !k.Carried {
			continue
		}
		where, path := values, paths[i]
		if m, ok := movedKeys[k.Path]; ok {
			path = strings.Split(m.reads, ".")
		} else if path[0] == "meshConfig" && len(path) > 1 {
			where, path = mesh, path[1:]
		}
		if got, ok := getPath(where, path); !ok || !covers(got, k.Yours) {
			out = append(out, i)
		}
	}
	return out, nil
}

// covers says got holds want: equal, or, for a map, every key of want with a value got holds
// (the render may add keys of its own beside the mesh's to a map such as podAnnotations).
func covers(got, want any) bool {
	wm, ok := want.(map[string]any)
	if !ok {
		return reflect.DeepEqual(got, want)
	}
	gm, ok := got.(map[string]any)
	if !ok {
		return false
	}
	for k, v := range wm {
		if !covers(gm[k], v) {
			return false
		}
	}
	return true
}

// removedKey finds what Istio's charts name when they refuse a removed key: the istiod chart's
// NOTES.txt fails with "<key> is removed".
var removedKey = regexp.MustCompile(`: ([A-Za-z0-9_.]+) is removed`)

// removedByChart says the render error msg is the charts refusing path, or a key below it.
func removedByChart(msg, path string) bool {
	m := removedKey.FindStringSubmatch(msg)
	return m != nil && (m[1] == path || strings.HasPrefix(m[1], path+"."))
}

// valueLeaf is a key of the mesh's values whose value differs from the defaults'.
type valueLeaf struct {
	path       []string
	yours, def any
}

// differingKeys are the keys of yours whose values differ from defaults', deepest first where
// both are maps with keys of their own, or where desc (the values' schema at path; nil below a
// free-form field) says the key is a message (global.tracer, which today's defaults lack: its
// keys one by one). A map the defaults leave empty and the schema has as free-form, such as
// podAnnotations, is one key: its keys are the user's.
func differingKeys(yours, defaults map[string]any, desc protoreflect.MessageDescriptor, path []string) []valueLeaf {
	var out []valueLeaf
	for _, k := range slices.Sorted(maps.Keys(yours)) {
		p := append(slices.Clip(path), k)
		y := yours[k]
		d, ok := defaults[k]
		ym, yMap := y.(map[string]any)
		dm, dMap := d.(map[string]any)
		var sub protoreflect.MessageDescriptor
		if desc != nil {
			if f := fieldOf(desc, k); f != nil && f.Message() != nil && !freeForm(f) {
				sub = f.Message()
			}
		}
		switch {
		case yMap && (dMap && len(dm) > 0 || sub != nil):
			out = append(out, differingKeys(ym, dm, sub, p)...)
		case !ok:
			if yMap && len(ym) == 0 {
				continue // nothing set
			}
			out = append(out, valueLeaf{path: p, yours: y})
		case !reflect.DeepEqual(y, d):
			out = append(out, valueLeaf{path: p, yours: y, def: d})
		}
	}
	return out
}

// fieldOf is desc's field named seg, by its JSON or its proto name (nil for none).
func fieldOf(desc protoreflect.MessageDescriptor, seg string) protoreflect.FieldDescriptor {
	if f := desc.Fields().ByJSONName(seg); f != nil {
		return f
	}
	return desc.Fields().ByName(protoreflect.Name(seg))
}

// freeForm reports whether any key is valid below f: a map, a list (its items are checked by the
// render), or a Struct, Value or Any.
func freeForm(f protoreflect.FieldDescriptor) bool {
	if f.IsMap() || f.IsList() {
		return true
	}
	switch f.Message().FullName() {
	case "google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.Any":
		return true
	}
	return false
}

// knownPath reports whether the message desc has a field at path: below a free-form field any
// key is known.
func knownPath(desc protoreflect.MessageDescriptor, path []string) bool {
	for i, seg := range path {
		f := fieldOf(desc, seg)
		switch {
		case f == nil:
			return false
		case i == len(path)-1 || f.IsMap():
			return true
		case f.Message() == nil:
			return false // a scalar has no keys
		case freeForm(f):
			return true
		}
		desc = f.Message()
	}
	return true
}

// unknownPaths are the keys of m, a message desc as YAML, that desc does not have.
func unknownPaths(desc protoreflect.MessageDescriptor, m map[string]any, path []string) [][]string {
	var out [][]string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		p := append(slices.Clip(path), k)
		f := fieldOf(desc, k)
		if f == nil {
			out = append(out, p)
			continue
		}
		if sub, ok := m[k].(map[string]any); ok && f.Message() != nil && !freeForm(f) {
			out = append(out, unknownPaths(f.Message(), sub, p)...)
		}
	}
	return out
}

// setPath sets m's value at path, making the maps on the way.
func setPath(m map[string]any, path []string, v any) {
	for _, seg := range path[:len(path)-1] {
		next, ok := m[seg].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[seg] = next
		}
		m = next
	}
	m[path[len(path)-1]] = v
}

// getPath is m's value at path.
func getPath(m map[string]any, path []string) (any, bool) {
	var cur any = m
	for _, seg := range path {
		next, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = next[seg]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// deletePath deletes m's key at path.
func deletePath(m map[string]any, path []string) {
	for _, seg := range path[:len(path)-1] {
		next, ok := m[seg].(map[string]any)
		if !ok {
			return
		}
		m = next
	}
	delete(m, path[len(path)-1])
}

// pathText is a path as the preview shows it: segments joined by dots, one with a dot quoted.
func pathText(path []string) string {
	var b strings.Builder
	for i, seg := range path {
		if i > 0 {
			b.WriteByte('.')
		}
		if strings.ContainsAny(seg, ".\"") {
			seg, _ := json.Marshal(seg)
			b.Write(seg)
			continue
		}
		b.WriteString(seg)
	}
	return b.String()
}

// Preview is a manifest (its steps applied) injected by both sides of an upgrade.
type Preview struct {
	Plan *Plan `json:"plan"`
	// Documents are what the upgrade changes in each document.
	Documents []Document `json:"documents"`
	// Old and New are the two sides' injections.
	Old, New *engine.Injection `json:"-"`
}

// Document is one document of an upgrade preview: what the new side changes in the old
// side's output, or the error of a side that could not inject it.
type Document struct {
	Doc       int           `json:"doc"`
	Kind      string        `json:"kind,omitempty"`
	Name      string        `json:"name,omitempty"`
	Namespace string        `json:"namespace,omitempty"`
	Changed   bool          `json:"changed"`
	Changes   []diff.Change `json:"changes"`
	// OldError and NewError are a side's error on the document (the old side's when its templates
	// call what the embedded injector code does not have).
	OldError string `json:"oldError,omitempty"`
	NewError string `json:"newError,omitempty"`
}

// NewPreview injects the manifest with s (whose install options carry the old mesh) and with
// the plan's new side (NewPlan, carry as there), and compares them document by document.
func NewPreview(ctx context.Context, e Engine, manifest []byte, steps []input.Step, s engine.Settings, carry func(path string) bool) (*Preview, error) {
	plan, err := NewPlan(ctx, e, s.Install, carry)
	if err != nil {
		return nil, err
	}
	old, err := e.Inject(ctx, manifest, steps, s)
	if err != nil {
		return nil, err
	}
	ns := s
	ns.Install = plan.New
	next, err := e.Inject(ctx, manifest, steps, ns)
	if err != nil {
		return nil, err
	}
	p := &Preview{Plan: plan, Old: old, New: next}
	changes, err := engine.DiffDocuments(ctx, old.Documents, next.Documents, "")
	if err != nil {
		return nil, err
	}
	for i, d := range old.Documents {
		ud := Document{Doc: d.Index, Kind: d.Kind, Name: d.Name, Namespace: d.Namespace, Changes: []diff.Change{}}
		if d.Error != nil {
			ud.OldError = d.Error.Error()
		}
		if n := next.Documents[i]; n.Error != nil {
			ud.NewError = n.Error.Error()
		}
		for _, c := range changes {
			if c.Doc == d.Index {
				ud.Changes = append(ud.Changes, c)
			}
		}
		ud.Changed = len(ud.Changes) > 0 || ud.OldError != ud.NewError
		p.Documents = append(p.Documents, ud)
	}
	return p, nil
}
