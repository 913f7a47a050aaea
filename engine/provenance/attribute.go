package provenance

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/sidecarlab/sidecarlab/engine/diff"
	"github.com/sidecarlab/sidecarlab/engine/yamldoc"
)

// Source says what put a field of an injected document there.
type Source string

// The sources of a field.
const (
	// FromTemplate: a template Istio ran wrote it, with this value.
	FromTemplate Source = "template"
	// FromInput: the document as given (its annotation steps applied) has it, with this value.
	FromInput Source = "input"
	// FromCode: Istio's Go code set it after the templates (Attribution.Code names where).
	FromCode Source = "code"
	// Unknown: none of them; a bug of this package if it ever shows.
	Unknown Source = "unknown"
)

// Leaf is one leaf of a decoded JSON value (a scalar, or an empty map or list) by the field
// diff's path.
type Leaf struct {
	Path  string
	Value any
}

// Leaves are v's leaves in key order, paths after prefix.
func Leaves(prefix string, v any) []Leaf {
	var out []Leaf
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if len(v) > 0 {
				keys := make([]string, 0, len(v))
				for k := range v {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				for _, k := range keys {
					walk(yamldoc.JoinKey(path, k), v[k])
				}
				return
			}
		case []any:
			if len(v) > 0 {
				named, byName := diff.Names(v) // the field diff's pairing of a list, by name
				for i, e := range v {
					p := path + "[" + strconv.Itoa(i) + "]"
					if byName {
						p = path + "[" + named[i] + "]"
					}
					walk(p, e)
				}
				return
			}
		}
		out = append(out, Leaf{Path: path, Value: v})
	}
	walk(prefix, v)
	return out
}

// Attribution is where one leaf of an injected document came from.
type Attribution struct {
	// Path is the leaf's path in the document, as the field diff writes it.
	Path string
	// Value is the leaf's value.
	Value  any
	Source Source
	// Run is the index of the template run that wrote the leaf (the last to write it: Istio
	// overlays each template on the ones before), and Field where in it, for FromTemplate.
	Run   int
	Field Field
	// Code is the function that wrote the leaf, for FromCode.
	Code Code
}

// Place is where a document has its pod: the paths of the pod's metadata and spec in it ("" and
// "" for a Pod itself: metadata and spec).
type Place struct{ Metadata, Spec string }

// PodPlace is a Pod's place: its own metadata and spec.
var PodPlace = Place{Metadata: "metadata", Spec: "spec"}

// Doc is the document's path of a pod's path.
func (p Place) Doc(podPath string) string {
	for _, part := range [][2]string{{"metadata", p.Metadata}, {"spec", p.Spec}} {
		if rest, ok := strings.CutPrefix(podPath, part[0]); ok && (rest == "" || rest[0] == '.' || rest[0] == '[') {
			return part[1] + rest
		}
	}
	return podPath
}

// Pod is the pod's path of a document's path, if the path is in the pod.
func (p Place) Pod(docPath string) (string, bool) {
	for _, part := range [][2]string{{p.Metadata, "metadata"}, {p.Spec, "spec"}} {
		if rest, ok := strings.CutPrefix(docPath, part[0]); ok && (rest == "" || rest[0] == '.' || rest[0] == '[') {
			return part[1] + rest, true
		}
	}
	return "", false
}

// Named is one template run's rendering, with the name of the template.
type Named struct {
	Template string
	*Rendering
}

// Attribute says where each leaf of output (the injected document, decoded from JSON) came
// from: the templates Istio ran, in order, or the document as given (input, decoded the same
// way); a leaf of neither is left to code (FromCode, to be named by the caller) — Unknown here.
// A template's output is a Pod, which Istio reads as a corev1.Pod (so a value is compared as the
// Pod has it: "2000m" CPU is "2") and writes into the document where its pod is: place is the
// document's path of a Pod's path (a Deployment's spec.template.spec for the Pod's spec).
//
// defaulted, when not nil, is the input as the API server defaulted it before the webhook saw it
// (webhook mode): a leaf only it has is the API server's default (FromCode, APIDefaults).
func Attribute(output, input, defaulted any, place Place, runs []Named) []Attribution {
	written := map[string]int{}
	fields := map[string]Field{}
	values := map[string][]byte{}
	for i, r := range runs {
		v, ok := asPod(r.Text)
		if !ok {
			continue
		}
		byPath := map[string]Field{}
		for _, f := range r.Fields() {
			byPath[f.Path] = f
		}
		for _, l := range Leaves("", v) {
			f, ok := byPath[l.Path]
			if !ok {
				continue
			}
			p := place.Doc(l.Path)
			written[p], fields[p], values[p] = i, f, canonical(l.Value)
		}
	}
	given, byDefault := map[string][]byte{}, map[string][]byte{}
	for _, l := range Leaves("", input) {
		given[l.Path] = canonical(l.Value)
	}
	if defaulted != nil {
		for _, l := range Leaves("", defaulted) {
			byDefault[l.Path] = canonical(l.Value)
		}
	}
	outLeaves := Leaves("", output)
	// Istio's Prometheus merge, when it runs, writes the pod's prometheus.io annotations over
	// the ones given, whatever they were (applyPrometheusMerge): it ran when the port is not
	// the one given (it leaves a pod whose port is already its own as it is).
	merged := false
	port := yamldoc.JoinKey(place.Metadata+".annotations", "prometheus.io/port")
	for _, l := range outLeaves {
		if g, ok := given[port]; l.Path == port && (!ok || string(g) != string(canonical(l.Value))) {
			merged = true
		}
	}
	var out []Attribution
	for _, l := range outLeaves {
		a := Attribution{Path: l.Path, Value: l.Value, Source: Unknown}
		v := canonical(l.Value)
		p, inPod := place.Pod(l.Path)
		c, byCode := CodeOf(p)
		if w, ok := values[l.Path]; ok && string(w) == string(v) {
			a.Source, a.Run, a.Field = FromTemplate, written[l.Path], fields[l.Path]
		} else if merged && inPod && byCode && c.Func == "applyPrometheusMerge" {
			a.Source, a.Code = FromCode, c // written over what was given, even where the same
		} else if g, ok := given[l.Path]; ok && string(g) == string(v) {
			a.Source = FromInput
		} else if g, ok := given[movedFrom(l.Path, place)]; ok && string(g) == string(v) {
			// A container of the input Istio moved (a native sidecar's proxy, written by the
			// user under containers, is an init container after): the input's, moved by code.
			a.Source, a.Code = FromInput, Code{Func: "moveContainer", File: "pkg/kube/inject/webhook.go", Line: 276, Module: "istio.io/istio"}
		} else if d, ok := byDefault[l.Path]; ok && string(d) == string(v) {
			a.Source, a.Code = FromCode, APIDefaults
		} else if d, ok := byDefault[movedFrom(l.Path, place)]; ok && string(d) == string(v) {
			a.Source, a.Code = FromCode, APIDefaults // a default of a container Istio moved
		} else if inPod && byCode {
			a.Source, a.Code = FromCode, c
		}
		out = append(out, a)
	}
	return out
}

// movedFrom is where a leaf of a pod's init container was among its containers (and the other
// way): the same name, the same path under it; "" for a leaf of neither.
func movedFrom(path string, place Place) string {
	init, plain := place.Spec+".initContainers[", place.Spec+".containers["
	switch {
	case strings.HasPrefix(path, init):
		return plain + strings.TrimPrefix(path, init)
	case strings.HasPrefix(path, plain):
		return init + strings.TrimPrefix(path, plain)
	}
	return ""
}

// asPod is a template's output as Istio reads it, into a corev1.Pod, decoded from its JSON.
func asPod(text string) (any, bool) {
	var pod corev1.Pod
	if err := yaml.Unmarshal([]byte(text), &pod); err != nil {
		return nil, false
	}
	b, err := json.Marshal(&pod)
	if err != nil {
		return nil, false
	}
	var v any
	err = json.Unmarshal(b, &v)
	return v, err == nil
}

// canonical is a value as JSON, for comparing values decoded from YAML and from JSON.
func canonical(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
