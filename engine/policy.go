package engine

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"istio.io/istio/operator/pkg/values"

	"github.com/sidecarlab/sidecarlab/engine/diff"
	"github.com/sidecarlab/sidecarlab/engine/input"
)

// InstallPolicy says which install options an engine accepts. Install options are code and
// file names as much as they are settings: a render runs Istio's charts, and an injection runs
// the installation's injection templates, with the rights of the process. The zero value is the
// policy for a server shared by people who do not trust each other (sidecarlab serve) and refuses
// both kinds below; the CLI, which runs with its user's own rights, allows both.
//
// A zero Options therefore gives a strict engine: forgetting the policy makes the CLI refuse a
// template it could have run (a visible error), never makes a server run one (a silent hole).
type InstallPolicy struct {
	// AllowServerPaths lets an option name a path on this machine. The only one Istio's render
	// reads is spec.installPackagePath: the charts and profiles are then read from that
	// directory instead of the ones compiled in.
	AllowServerPaths bool
	// AllowCustomTemplates lets options carry template text: injection templates of their own
	// (values.sidecarInjectorWebhook.templates) and values the charts run through Helm's tpl
	// (initContainers). Both run with Istio's and Helm's function maps, which read the
	// environment, resolve names and loop or allocate without a bound.
	AllowCustomTemplates bool
	// TemplatesHint ends the message that refuses a template: how this deployment allows them.
	TemplatesHint string
}

// TrustedInstalls is the policy for a user running sidecarlab on their own machine, with their
// own rights: every option Istio accepts is accepted, as istioctl accepts it.
func TrustedInstalls() InstallPolicy {
	return InstallPolicy{AllowServerPaths: true, AllowCustomTemplates: true}
}

// check refuses options the policy does not allow, before anything is rendered. It reads the
// options the way Istio's render merges them (the overlay, then each --set path, with Istio's own
// values.Map) and looks at every key and every string, at any depth:
//
//   - a key named installPackagePath is a directory on the server. It is the only path the
//     render reads: operator/pkg/render and operator/pkg/helm open files only through
//     manifests.BuiltinOrDir(installPackagePath) (the profile name is opened inside that file
//     system, where fs.ValidPath forbids ".." and absolute names, and the charts' .Files.Get
//     reads the chart's own files from memory); the overlay files are ours.
//   - a key sidecarInjectorWebhook.templates adds or replaces an injection template, and a key
//     initContainers is the one value Istio's charts pass through Helm's tpl (istio-discovery's
//     deployment.yaml), so both are refused whatever they hold.
//   - any key or string holding "{{" is template text, wherever it goes. This is what makes the
//     rule complete for the render: Go templates (Helm's tpl as much as Istio's injector) only
//     call a function inside an action, and an action opens with "{{" (neither Helm nor Istio
//     changes the delimiters); text without it renders as itself, calling nothing. So whatever
//     key a future chart passes through tpl, a value without "{{" cannot run there.
//
// Template text can also reach the injector's config without "{{" in the input: some chart
// lines splice a value into the ConfigMap's YAML unquoted (policy: {{ .Values…autoInject }}), and
// a YAML escape ("\x7b") decodes to a brace. checkTemplates catches that on the output.
func (p InstallPolicy) check(o InstallOptions) error {
	if p.AllowServerPaths && p.AllowCustomTemplates {
		return nil
	}
	// Each --set path on its own, so the error names it.
	for _, s := range o.normalizedSet() {
		path, val, _ := strings.Cut(s, "=")
		segs := strings.Split(path, ".")
		field := "install option " + quote(s)
		for i, seg := range segs {
			parent := ""
			if i > 0 {
				parent = segs[i-1]
			}
			if err := p.checkKey(field, path, parent, seg); err != nil {
				return err
			}
		}
		if strings.Contains(val, "{{") {
			return p.templateError(field, path)
		}
	}
	var overlay values.Map
	if ov := strings.TrimSpace(o.Overlay); ov != "" {
		m, err := values.MapFromYaml([]byte(ov))
		if err != nil {
			// renderInstall reports it with its line; nothing was run.
			return nil
		}
		if err := p.walk("install overlay", "", m); err != nil {
			return err
		}
		overlay = m
	}
	// Then what Istio's render would see: the overlay with every --set applied, as MergeInputs
	// builds it. A --set path that only makes sense on the overlay is looked at here.
	merged := values.Map{"spec": map[string]any{}}
	if overlay != nil {
		if overlay["spec"] == nil {
			delete(overlay, "spec")
		}
		merged.MergeFrom(overlay)
	}
	if err := merged.SetSpecPaths(o.normalizedSet()...); err != nil {
		// Istio's render fails on the same --set before reading or running anything.
		return nil
	}
	return p.walk("install options", "", merged)
}

// walk checks every key and string under v; path is where v sits, for the message.
func (p InstallPolicy) walk(field, path string, v any) error {
	switch v := v.(type) {
	case map[string]any:
		parent := path[strings.LastIndex(path, ".")+1:]
		for _, k := range slices.Sorted(maps.Keys(v)) {
			kp := k
			if path != "" {
				kp = path + "." + k
			}
			if err := p.checkKey(field, kp, parent, k); err != nil {
				return err
			}
			if err := p.walk(field, kp, v[k]); err != nil {
				return err
			}
		}
	case values.Map:
		return p.walk(field, path, map[string]any(v))
	case []any:
		for i, e := range v {
			if err := p.walk(field, fmt.Sprintf("%s[%d]", path, i), e); err != nil {
				return err
			}
		}
	case string:
		if strings.Contains(v, "{{") {
			return p.templateError(field, path)
		}
	}
	return nil
}

// checkKey checks one key of the options: key sits under parent, at path.
func (p InstallPolicy) checkKey(field, path, parent, key string) error {
	switch {
	case key == "installPackagePath" && !p.AllowServerPaths:
		return &input.Error{Field: field, ID: "install-package-path"}
	case key == "templates" && parent == "sidecarInjectorWebhook", key == "initContainers", strings.Contains(key, "{{"):
		return p.templateError(field, path)
	}
	return nil
}

func (p InstallPolicy) templateError(field, path string) error {
	if p.AllowCustomTemplates {
		return nil
	}
	hint := ""
	if p.TemplatesHint != "" {
		hint = " " + p.TemplatesHint
	}
	return &input.Error{Field: field, ID: "template-text", Params: input.Params("path", path, "hint", hint)}
}

// checkTemplates refuses an installation whose injection templates are not exactly the ones the
// default installation has (same names, same text), unless custom templates are allowed. The
// templates are files of the chart that no value changes, so any difference was put there by the
// options, by whatever route. It runs on the templates as Istio decoded them, before any of them
// runs.
func (p InstallPolicy) checkTemplates(o InstallOptions, got, builtin map[string]string) error {
	if p.AllowCustomTemplates {
		return nil
	}
	name := customTemplate(got, builtin)
	if name == "" {
		return nil
	}
	if o.Mesh.InjectorConfig != "" {
		return p.meshTemplates(got, builtin)
	}
	hint := ""
	if p.TemplatesHint != "" {
		hint = " " + p.TemplatesHint
	}
	return &input.Error{Field: installField(o, ""), ID: "template-changed", Params: input.Params("nameQ", quote(name), "hint", hint)}
}

// policyRefusals are the input.Error IDs of InstallPolicy's refusals: what this server will not
// run, not what Istio rejects.
var policyRefusals = []string{"install-package-path", "template-changed", "template-text", "mesh-templates-changed", "mesh-templates-cut"}

// RefusedByPolicy says err is this server's InstallPolicy refusing the options (a path on the
// server, or templates it does not run), not Istio rejecting them.
func RefusedByPolicy(err error) bool {
	var ie *input.Error
	return errors.As(err, &ie) && slices.Contains(policyRefusals, ie.ID)
}

// customTemplate names the first template (by name) of got that is not one of builtin, byte for
// byte, or "" when there is none.
func customTemplate(got, builtin map[string]string) string {
	for _, name := range sortedKeys(got) {
		if want, ok := builtin[name]; !ok || want != got[name] {
			return name
		}
	}
	return ""
}

// maxTemplateDiff bounds the diff a refusal of a mesh's templates shows: the templates are tens
// of kilobytes, and a refusal echoes what it was sent.
const maxTemplateDiff = 4 << 10

// meshTemplates refuses a mesh's own injector config whose templates are not the embedded
// Istio's: it names every template of the mesh that differs from the embedded one of its name (or
// that the embedded Istio has not) and shows the line diff against the embedded ones, up to
// maxTemplateDiff bytes. The embedded Istio's templates the mesh lacks are not named: a 1.9 mesh
// with only sidecar and gateway has not written waypoint. Before: every template of either.
func (p InstallPolicy) meshTemplates(got, builtin map[string]string) error {
	var names []string
	var sb strings.Builder
	for _, name := range sortedKeys(got) {
		if want, ok := builtin[name]; ok && got[name] == want {
			continue
		}
		names = append(names, quote(name))
		fmt.Fprintf(&sb, "--- %s (Istio %s)\n+++ %s (yours)\n%s", name, Version().Istio, name, diff.Unified(builtin[name], got[name]))
	}
	d, more := sb.String(), ""
	if len(d) > maxTemplateDiff {
		cut := strings.LastIndexByte(d[:maxTemplateDiff], '\n') + 1
		d, more = d[:cut], strconv.Itoa(strings.Count(d[cut:], "\n"))
	}
	list := strings.Join(names, ", ")
	hint := ""
	if p.TemplatesHint != "" {
		hint = " " + p.TemplatesHint
	}
	params := input.Params("names", list, "istio", Version().Istio, "hint", hint, "diff", d)
	if more != "" {
		// The diff cut at maxTemplateDiff, and how many lines are left out.
		params["more"] = more
		return &input.Error{Field: "your mesh", ID: "mesh-templates-cut", Params: params}
	}
	return &input.Error{Field: "your mesh", ID: "mesh-templates-changed", Params: params}
}

// mergedKeys is the set of both maps' keys.
func mergedKeys(a, b map[string]string) map[string]bool {
	out := make(map[string]bool, len(a)+len(b))
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}
