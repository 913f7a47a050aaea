package handlers

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"k8s.io/apimachinery/pkg/util/validation"
	psaapi "k8s.io/pod-security-admission/api"

	"github.com/sidecarlab/sidecarlab/admission"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/web"
	"github.com/sidecarlab/sidecarlab/wording"
)

// The namespace labels the settings' quick toggles stand for.
const (
	labelInjection = "istio-injection"
	labelRev       = "istio.io/rev"
	labelEnforce   = psaapi.EnforceLevelLabel
)

// maxNamespaceLabels bounds a namespace's labels (a real namespace has a handful).
const maxNamespaceLabels = 64

// nsError is a namespace the API server would refuse. It is an *input.Error in English
// (its Unwrap: what the API, a link's decoding and the logs say) that also keeps its message's
// id and parameters in the catalogs, so that the settings' form says it in the reader's language
// (postedNamespaceForm).
type nsError struct {
	en        *input.Error
	field, id string
	args      []any
}

func (e *nsError) Error() string { return e.en.Error() }

func (e *nsError) Unwrap() error { return e.en }

// newNSError is the error of the namespace group's field (lab.ns.field.FIELD) at line (0: none)
// with the message id and its parameters.
func newNSError(field string, line int, id string, args ...any) *nsError {
	en := i18n.For(i18n.Default)
	return &nsError{en: &input.Error{Field: en.T("lab.ns.field." + field), Line: line, Msg: en.T(id, args...)},
		field: field, id: id, args: args}
}

// in is the error in l's language.
func (e *nsError) in(l *i18n.Localizer) string {
	field, msg := l.T("lab.ns.field."+e.field), l.T(e.id, e.args...)
	if e.en.Line > 0 {
		// A line of the labels' box is a place in the input: worded as every such place is.
		return wording.In(l).At(0, e.en.Line, 0, field, msg)
	}
	return l.T("lab.ns.error", "Field", field, "Msg", msg)
}

// readNamespace reads the settings' namespace group from a posted form: the name, the labels
// typed as KEY=VALUE lines, then the toggles' labels. A label typed twice, or typed and set by
// a toggle to another value, is an error rather than a silent choice.
func readNamespace(f url.Values) (engine.Namespace, error) {
	ns := engine.Namespace{Name: strings.TrimSpace(f.Get("nsName"))}
	add := func(k, v, field string, line int) error {
		if ns.Labels == nil {
			ns.Labels = map[string]string{}
		}
		if old, ok := ns.Labels[k]; ok && old != v {
			return newNSError(field, line, "lab.ns.twice", "Key", shortName(k), "Old", fmt.Sprintf("%q", shortName(old)), "New", fmt.Sprintf("%q", shortName(v)))
		}
		ns.Labels[k] = v
		return nil
	}
	for i, l := range strings.Split(strings.ReplaceAll(f.Get("nsLabels"), "\r\n", "\n"), "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			return ns, newNSError("labels", i+1, "lab.ns.key-value")
		}
		if err := add(strings.TrimSpace(k), strings.TrimSpace(v), "labels", i+1); err != nil {
			return ns, err
		}
	}
	if f.Get("nsInjection") != "" {
		if err := add(labelInjection, "enabled", "labels", 0); err != nil {
			return ns, err
		}
	}
	if rev := strings.TrimSpace(f.Get("nsRev")); rev != "" {
		if err := add(labelRev, rev, "revision", 0); err != nil {
			return ns, err
		}
	}
	if lvl := f.Get("nsEnforce"); lvl != "" {
		if !slices.Contains(enforceLevels, lvl) {
			return ns, newNSError("enforce", 0, "lab.ns.levels")
		}
		if err := add(labelEnforce, lvl, "enforce", 0); err != nil {
			return ns, err
		}
	}
	return ns, checkNamespace(ns)
}

// checkNamespace holds a namespace, from a form or a link, to what the API server accepts: a
// DNS-1123 label as its name, qualified names and label values as its labels (apimachinery's
// validation), a Pod Security level where Pod Security reads one, and a bounded count.
func checkNamespace(ns engine.Namespace) error {
	if ns.Name != "" {
		if errs := validation.IsDNS1123Label(ns.Name); len(errs) > 0 {
			return newNSError("name", 0, "lab.ns.name", "Name", shortName(ns.Name), "Reason", errs[0])
		}
	}
	if len(ns.Labels) > maxNamespaceLabels {
		return newNSError("labels", 0, "lab.ns.too-many", "Count", len(ns.Labels), "Max", maxNamespaceLabels)
	}
	for _, k := range slices.Sorted(maps.Keys(ns.Labels)) {
		v := ns.Labels[k]
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return newNSError("labels", 0, "lab.ns.key", "Key", shortName(k), "Reason", errs[0])
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return newNSError("labels", 0, "lab.ns.value", "Label", shortName(k)+"="+shortName(v), "Reason", errs[0])
		}
		if strings.HasPrefix(k, "pod-security.kubernetes.io/") && !strings.HasSuffix(k, "-version") {
			if _, err := psaapi.ParseLevel(v); err != nil {
				return newNSError("labels", 0, "lab.ns.label-levels", "Label", shortName(k)+"="+shortName(v))
			}
		}
	}
	return nil
}

// namespaceForm is a namespace as the settings show it: the toggles' labels apart, the others
// as KEY=VALUE lines.
func namespaceForm(ns engine.Namespace) web.NamespaceForm {
	nf := web.NamespaceForm{Name: ns.Name}
	var lines []string
	for _, k := range slices.Sorted(maps.Keys(ns.Labels)) {
		v := ns.Labels[k]
		switch {
		case k == labelInjection && v == "enabled":
			nf.Injection = true
		case k == labelRev:
			nf.Rev = v
		case k == labelEnforce && slices.Contains(enforceLevels, v):
			nf.Enforce = v
		default:
			lines = append(lines, k+"="+v)
		}
	}
	nf.Labels = strings.Join(lines, "\n")
	nf.Enforces = enforceOptions(nf.Enforce)
	return nf
}

var enforceLevels = []string{string(psaapi.LevelPrivileged), string(psaapi.LevelBaseline), string(psaapi.LevelRestricted)}

func enforceOptions(sel string) []web.Option {
	out := []web.Option{{Value: "", Label: "not set (privileged)", Selected: sel == ""}}
	for _, l := range enforceLevels {
		out = append(out, web.Option{Value: l, Label: l, Selected: l == sel})
	}
	return out
}

// postedNamespaceForm is the namespace group as it was posted, with what is wrong with it: the
// form shows the person's text again, beside the error, in l's language.
func postedNamespaceForm(l *i18n.Localizer, f url.Values, err error) *web.NamespaceForm {
	nf := &web.NamespaceForm{Name: f.Get("nsName"), Injection: f.Get("nsInjection") != "", Rev: f.Get("nsRev"),
		Enforce: f.Get("nsEnforce"), Labels: strings.ReplaceAll(f.Get("nsLabels"), "\r\n", "\n")}
	nf.Enforces = enforceOptions(nf.Enforce)
	nf.Error = err.Error()
	var ne *nsError
	var ie *input.Error
	switch {
	case errors.As(err, &ne):
		nf.Error = ne.in(l)
	case errors.As(err, &ie):
		nf.Error = wording.In(l).InputErrorText(ie)
	}
	return nf
}

// namespaceOf is the namespace the admission runs in, with the default's name when none is set.
func namespaceOf(set engine.Settings) engine.Namespace {
	ns := set.Namespace
	if ns.Name == "" {
		ns.Name = admission.DefaultNamespace
	}
	return ns
}

// namespaceText is a namespace and its labels in a line.
func namespaceText(l *i18n.Localizer, ns engine.Namespace) string {
	if len(ns.Labels) == 0 {
		return l.T("lab.cluster.no-labels", "Name", ns.Name)
	}
	var ls []string
	for _, k := range slices.Sorted(maps.Keys(ns.Labels)) {
		ls = append(ls, k+"="+ns.Labels[k])
	}
	return l.T("lab.cluster.labels", "Name", ns.Name, "Labels", strings.Join(ls, ", "))
}
