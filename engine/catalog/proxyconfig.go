package catalog

//go:generate go run ../internal/protodoc/gen -o proxyconfig_docs.go

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"sigs.k8s.io/yaml"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"istio.io/api/annotation"
	meshconfig "istio.io/api/mesh/v1alpha1"
)

// ConfigField is one field of Istio's ProxyConfig (istio.io/api mesh/v1alpha1), as the
// proxy.istio.io/config editor offers it: its name as the annotation's YAML spells it, the kind of
// value it takes, and the first paragraph of its doc comment in proxy.proto.
type ConfigField struct {
	// Name is the field's JSON name (holdApplicationUntilProxyStarts).
	Name string `json:"name"`
	// Kind is one of KindBool, KindInteger, KindNumber, KindDuration, KindEnum, KindString and
	// KindYAML (messages, maps and lists).
	Kind ValueKind `json:"kind"`
	// Type is the proto type as written in proxy.proto (google.protobuf.BoolValue, int32, …).
	Type string   `json:"type"`
	Enum []string `json:"enum,omitempty"`
	Doc  string   `json:"doc,omitempty"`
}

// The value kinds a ProxyConfig field adds to the annotations' kinds.
const (
	KindNumber   ValueKind = "number"
	KindDuration ValueKind = "duration" // a protobuf Duration, written "30s"
)

// ProxyConfigFields are ProxyConfig's fields from its protobuf descriptor, by name. Fields Istio
// marks deprecated or hides from its docs ($hide_from_docs) are left out: the annotation's own
// YAML textarea still takes them.
func ProxyConfigFields() []ConfigField { return proxyConfigFields() }

var proxyConfigFields = sync.OnceValue(func() []ConfigField {
	md := (&meshconfig.ProxyConfig{}).ProtoReflect().Descriptor()
	var out []ConfigField
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		doc := proxyConfigDocs[string(fd.Name())]
		if opts, ok := fd.Options().(*descriptorpb.FieldOptions); (ok && opts.GetDeprecated()) || doc == "$hide_from_docs" {
			continue
		}
		f := ConfigField{Name: fd.JSONName(), Doc: doc}
		f.Kind, f.Type, f.Enum = fieldKind(fd)
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b ConfigField) int { return strings.Compare(a.Name, b.Name) })
	return out
})

// fieldKind maps a field's protobuf kind to the input it gets. Well-known wrappers
// (BoolValue, Int32Value…) take their wrapped kind: in YAML they are written as plain values.
func fieldKind(fd protoreflect.FieldDescriptor) (ValueKind, string, []string) {
	if fd.IsMap() {
		return KindYAML, fmt.Sprintf("map<%s, %s>", typeName(fd.MapKey()), typeName(fd.MapValue())), nil
	}
	if fd.IsList() {
		return KindYAML, "repeated " + typeName(fd), nil
	}
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return KindBool, typeName(fd), nil
	case protoreflect.Int32Kind, protoreflect.Int64Kind, protoreflect.Uint32Kind, protoreflect.Uint64Kind,
		protoreflect.Sint32Kind, protoreflect.Sint64Kind, protoreflect.Fixed32Kind, protoreflect.Fixed64Kind,
		protoreflect.Sfixed32Kind, protoreflect.Sfixed64Kind:
		return KindInteger, typeName(fd), nil
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return KindNumber, typeName(fd), nil
	case protoreflect.StringKind, protoreflect.BytesKind:
		return KindString, typeName(fd), nil
	case protoreflect.EnumKind:
		vals := fd.Enum().Values()
		names := make([]string, 0, vals.Len())
		for i := range vals.Len() {
			names = append(names, string(vals.Get(i).Name()))
		}
		return KindEnum, typeName(fd), names
	}
	name := string(fd.Message().FullName())
	switch name {
	case "google.protobuf.Duration":
		return KindDuration, name, nil
	case "google.protobuf.BoolValue":
		return KindBool, name, nil
	case "google.protobuf.Int32Value", "google.protobuf.Int64Value", "google.protobuf.UInt32Value", "google.protobuf.UInt64Value":
		return KindInteger, name, nil
	case "google.protobuf.FloatValue", "google.protobuf.DoubleValue":
		return KindNumber, name, nil
	case "google.protobuf.StringValue":
		return KindString, name, nil
	}
	return KindYAML, name, nil
}

func typeName(fd protoreflect.FieldDescriptor) string {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return string(fd.Message().FullName())
	case protoreflect.EnumKind:
		return string(fd.Enum().FullName())
	}
	return fd.Kind().String()
}

// LookupProxyConfigField finds a field the editor offers by its JSON name.
func LookupProxyConfigField(name string) (ConfigField, bool) {
	fs := ProxyConfigFields()
	i := slices.IndexFunc(fs, func(f ConfigField) bool { return f.Name == name })
	if i < 0 {
		return ConfigField{}, false
	}
	return fs[i], true
}

// SetProxyConfigField returns the proxy.istio.io/config value current with one field set to
// value (typed by the field's kind), as YAML: what a step must carry for the field to join the
// fields already set, since a step replaces the annotation's whole value. The YAML is written
// anew (keys sorted, comments not kept). A field spelt in proto form (concurrency is the same in
// both; hold_application_until_proxy_starts) is replaced by its JSON form.
func SetProxyConfigField(current, field, value string) (string, error) {
	// fail is sidecarlab's sentence id with its params (pairs); the catalogs word it.
	fail := func(id string, kv ...string) error {
		return &input.Error{Field: "annotation " + strconv.Quote(annotation.ProxyConfig.Name) + " field " + strconv.Quote(field),
			ID: id, Params: input.Params(kv...)}
	}
	f, ok := LookupProxyConfigField(field)
	if !ok {
		return "", fail("proxyconfig-no-field", "fieldQ", strconv.Quote(field))
	}
	m := map[string]any{}
	if strings.TrimSpace(current) != "" {
		if err := yaml.Unmarshal([]byte(current), &m); err != nil {
			return "", fail("proxyconfig-not-map", "annotation", annotation.ProxyConfig.Name, "error", fmt.Sprint(err))
		}
		if m == nil {
			m = map[string]any{}
		}
	}
	value = strings.TrimSpace(value)
	var v any
	switch f.Kind {
	case KindBool:
		if value != "true" && value != "false" {
			return "", fail("proxyconfig-not-bool", "valueQ", strconv.Quote(value))
		}
		v = value == "true"
	case KindInteger:
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			return "", fail("proxyconfig-not-integer", "valueQ", strconv.Quote(value))
		}
		v = n
	case KindNumber:
		n, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return "", fail("proxyconfig-not-number", "valueQ", strconv.Quote(value))
		}
		v = n
	case KindDuration:
		if _, err := time.ParseDuration(value); err != nil {
			return "", fail("proxyconfig-not-duration", "valueQ", strconv.Quote(value))
		}
		v = value
	case KindEnum:
		if !slices.Contains(f.Enum, value) {
			return "", fail("proxyconfig-not-enum", "valueQ", strconv.Quote(value), "values", strings.Join(f.Enum, ", "))
		}
		v = value
	case KindYAML:
		if err := yaml.Unmarshal([]byte(value), &v); err != nil {
			return "", fail("proxyconfig-not-yaml", "error", fmt.Sprint(err))
		}
	default:
		v = value
	}
	md := (&meshconfig.ProxyConfig{}).ProtoReflect().Descriptor()
	if fd := findField(md, field); fd != nil {
		delete(m, string(fd.Name()))
	}
	m[f.Name] = v
	b, err := yaml.Marshal(m)
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(string(b), "\n"), nil
}

// DroppedProxyConfigFields lists the top-level fields set in the proxy.istio.io/config value old
// that the value new no longer sets (a field counts as set under its JSON or its proto name),
// sorted by name. A value that is not a YAML map sets nothing.
func DroppedProxyConfigFields(old, new string) []string {
	md := (&meshconfig.ProxyConfig{}).ProtoReflect().Descriptor()
	keys := func(s string) map[string]bool {
		var m map[string]any
		if yaml.Unmarshal([]byte(s), &m) != nil {
			return nil
		}
		out := map[string]bool{}
		for k := range m {
			if fd := findField(md, k); fd != nil {
				k = fd.JSONName()
			}
			out[k] = true
		}
		return out
	}
	now := keys(new)
	var out []string
	for k := range keys(old) {
		if !now[k] {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// UnknownField is a field of a proxy.istio.io/config value that ProxyConfig lacks: its path, and
// the nearest field ProxyConfig has when one is near (Closest).
type UnknownField struct{ Path, Suggest string }

// UnknownProxyConfigFields lists fields of a proxy.istio.io/config value that ProxyConfig lacks,
// walking nested messages (maps and well-known types are leaves).
func UnknownProxyConfigFields(value string) []UnknownField {
	var m map[string]any
	if yaml.Unmarshal([]byte(value), &m) != nil {
		return nil
	}
	var out []UnknownField
	var walk func(prefix string, m map[string]any, md protoreflect.MessageDescriptor)
	walk = func(prefix string, m map[string]any, md protoreflect.MessageDescriptor) {
		names := fieldNames(md)
		for _, k := range slices.Sorted(maps.Keys(m)) {
			fd := findField(md, k)
			if fd == nil {
				out = append(out, UnknownField{Path: prefix + k, Suggest: Closest(k, names)})
				continue
			}
			if sub, ok := m[k].(map[string]any); ok && fd.Kind() == protoreflect.MessageKind && !fd.IsMap() &&
				!strings.HasPrefix(string(fd.Message().FullName()), "google.protobuf.") {
				walk(prefix+k+".", sub, fd.Message())
			}
		}
	}
	walk("", m, (&meshconfig.ProxyConfig{}).ProtoReflect().Descriptor())
	return out
}

func findField(md protoreflect.MessageDescriptor, name string) protoreflect.FieldDescriptor {
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.JSONName() == name || string(fd.Name()) == name {
			return fd
		}
	}
	return nil
}

func fieldNames(md protoreflect.MessageDescriptor) []string {
	fields := md.Fields()
	out := make([]string, 0, fields.Len())
	for i := range fields.Len() {
		out = append(out, fields.Get(i).JSONName())
	}
	return out
}

// RenameTopField rewrites a proxy config with one top-level field renamed, as YAML.
func RenameTopField(value, from, to string) (string, bool) {
	if strings.Contains(from, ".") {
		return "", false
	}
	var m map[string]any
	if yaml.Unmarshal([]byte(value), &m) != nil {
		return "", false
	}
	m[to] = m[from]
	delete(m, from)
	b, err := yaml.Marshal(m)
	if err != nil {
		return "", false
	}
	return strings.TrimSuffix(string(b), "\n"), true
}
