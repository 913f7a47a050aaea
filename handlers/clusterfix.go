package handlers

import (
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"

	"istio.io/api/label"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/sidecarlab/sidecarlab/admission"
	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/web"
	"github.com/sidecarlab/sidecarlab/wording"
)

// The fixes that change the settings, by the id their buttons post.
const (
	fixLabelInjection = "label-injection"
	fixCNI            = "cni"
	fixSeccomp        = "seccomp"
	// fixLabel edits the manifest rather than the settings: the pod templates' annotation
	// sidecar.istio.io/inject: "true" becomes a label (admission.LabelInsteadOfAnnotation).
	fixLabel = "label-not-annotation"
)

// cniOption is the install option that turns Istio CNI on: it replaces istio-init (and its
// NET_ADMIN, NET_RAW) with istio-validation. values.istio_cni.enabled alone does not, in this
// Istio (see DESIGN.md).
const cniOption = "components.cni.enabled=true"

// seccompOption gives Istio's containers (istio-proxy, istio-init or istio-validation) the
// RuntimeDefault seccomp profile, which the charts leave empty and restricted requires.
const seccompOption = "values.global.proxy.seccompProfile.type=RuntimeDefault"

// settingsFixOptions are the install options the fixes set, shown on their buttons (the fixes'
// words are wording.Words.SettingsFix).
var settingsFixOptions = map[string]string{fixCNI: cniOption, fixSeccomp: seccompOption}

// settingsFixKeys are the keys of the injector's values (the istio-sidecar-injector ConfigMap's
// `values`, istiod's Helm values) the options above set, which the sidecar template reads: what
// a mesh that gives its own values must change in its installation instead.
var settingsFixKeys = map[string]string{fixCNI: "pilot.cni.enabled=true", fixSeccomp: "global.proxy.seccompProfile.type=RuntimeDefault"}

// settingsFixes are the fixes that change the settings, decided by what the admission found:
// labelling the namespace when a webhook would take the Pod but for the namespace's labels, and
// Istio CNI when Pod Security rejects istio-init's capabilities. Their ids only: the view words
// them in the reader's language (fixTexts). takes says whether an install option changes the
// installation at all: one that does not (a mesh that gives its own values is not reinstalled
// by a --set) is offered as what to do instead, in the user's installation.
func settingsFixes(rs []admission.Result, set engine.Settings, takes func(option string) bool) []web.SettingsFix {
	var cni, seccomp, podLabel bool
	var label [2]string
	for _, r := range rs {
		if r.Error != "" {
			continue
		}
		called := slices.ContainsFunc(r.Webhooks, func(w admission.WebhookMatch) bool { return w.Called })
		// A Pod that joins ambient is in the mesh without a sidecar: labelling its namespace for
		// injection would take it out of ambient, so it is not offered.
		joins := r.Ambient != nil && r.Ambient.Joins
		if l, ok := injectionLabel(r.Webhooks, set.Namespace.Labels); ok && !called && !joins && label == [2]string{} {
			label = l
		}
		if !r.Admitted && slices.ContainsFunc(r.Violations, func(v string) bool {
			return strings.Contains(v, `container "istio-init"`) && strings.Contains(v, `"NET_ADMIN"`)
		}) {
			cni = true
		}
		if !r.Admitted && slices.ContainsFunc(r.Violations, istioSeccompViolation) {
			seccomp = true
		}
		if slices.ContainsFunc(r.Trace, func(s admission.Step) bool { return s.ID == "hint-annotation-not-label" }) && labelSelects(r) {
			podLabel = true
		}
	}
	var out []web.SettingsFix
	if podLabel {
		out = append(out, web.SettingsFix{ID: fixLabel, Value: fixLabel})
	}
	if label != [2]string{} {
		out = append(out, web.SettingsFix{ID: fixLabelInjection, Value: fixLabelInjection + ":" + label[0] + "=" + label[1], Label: label[0] + "=" + label[1]})
	}
	for _, f := range []struct {
		id     string
		needed bool
	}{{fixCNI, cni}, {fixSeccomp, seccomp}} {
		if !f.needed || slices.Contains(set.Install.Set, settingsFixOptions[f.id]) {
			continue
		}
		fix := web.SettingsFix{ID: f.id, Value: f.id}
		if !takes(settingsFixOptions[f.id]) {
			fix.Value, fix.Instead = "", true
		}
		out = append(out, fix)
	}
	return out
}

// labelSelects reports whether the label sidecar.istio.io/inject=true on r's Pod has a webhook
// take it: one whose namespace selector the namespace meets and whose object selector the Pod so
// labelled does. A revision's webhooks read istio.io/rev on the Pod instead, and do not.
func labelSelects(r admission.Result) bool {
	if r.Pod == nil {
		return false
	}
	pod := labels.Set{}
	maps.Copy(pod, r.Pod.Labels)
	pod[label.SidecarInject.Name] = "true"
	return slices.ContainsFunc(r.Webhooks, func(w admission.WebhookMatch) bool {
		sel, err := labels.Parse(w.ObjectSelector)
		return err == nil && w.NamespaceMatch && sel.Matches(pod)
	})
}

// injectionLabel is the namespace label that has Istio's webhook take the Pod, for the webhooks
// whose object selector takes it but whose namespace selector does not: a label their namespace
// selector asks for (key in (value), key=value) that, added to the namespace's labels ns, meets
// it — istio-injection=enabled where it serves (Istio's default revision), else the first
// (istio.io/rev=<revision>, a revision's). ok is false when no label would.
func injectionLabel(ws []admission.WebhookMatch, ns map[string]string) (label [2]string, ok bool) {
	var found [][2]string
	for _, w := range ws {
		if !w.ObjectMatch || w.NamespaceMatch {
			continue
		}
		sel, err := labels.Parse(w.NamespaceSelector)
		if err != nil {
			continue
		}
		reqs, _ := sel.Requirements()
		for _, r := range reqs {
			if op := r.Operator(); (op != selection.In && op != selection.Equals && op != selection.DoubleEquals) || r.Values().Len() != 1 {
				continue
			}
			l := [2]string{r.Key(), r.Values().UnsortedList()[0]}
			if v, ok := ns[l[0]]; ok && v == l[1] {
				continue // already there: labelling changes nothing
			}
			with := labels.Set{}
			maps.Copy(with, ns)
			with[l[0]] = l[1]
			if sel.Matches(with) {
				found = append(found, l)
			}
		}
	}
	if i := slices.IndexFunc(found, func(l [2]string) bool { return l[0] == labelInjection }); i >= 0 {
		return found[i], true
	}
	if len(found) == 0 {
		return label, false
	}
	return found[0], true
}

// fixTexts words the fixes: a button's text, or for a fix that cannot apply, what to do in the
// installation instead and a preview of the mesh upgraded with it (previewHref with the option).
func fixTexts(w wording.Words, fixes []web.SettingsFix, previewHref func(option string) string) {
	for i := range fixes {
		f := &fixes[i]
		option := settingsFixOptions[f.ID]
		switch {
		case f.Instead:
			f.Text = w.SettingsFixInstead(f.ID, option, settingsFixKeys[f.ID])
			f.Preview = previewHref(option)
		case f.Label != "":
			f.Text = w.SettingsFixLabel(f.ID, f.Label)
		default:
			f.Text = w.SettingsFix(f.ID, option)
		}
	}
}

// istioSeccompViolation is Pod Security's seccompProfile violation naming one of Istio's
// containers (restricted: `seccompProfile (pod or containers "istio-proxy", … must set …)`).
func istioSeccompViolation(v string) bool {
	_, rest, ok := strings.Cut(v, "seccompProfile (pod or container")
	if !ok {
		return false
	}
	rest, _, _ = strings.Cut(rest, " must set")
	return strings.Contains(rest, `"istio-proxy"`) || strings.Contains(rest, `"istio-init"`) || strings.Contains(rest, `"istio-validation"`)
}

// applyClusterFix changes the state as the fix with the button's value says: its settings, or
// (fixLabel) its manifest.
func applyClusterFix(value string, st *api.State) error {
	if value == fixLabel {
		m, err := admission.LabelInsteadOfAnnotation([]byte(st.Manifest))
		if errors.Is(err, admission.ErrNothingToMove) {
			return httpError{status: http.StatusUnprocessableEntity, id: "errors.fix.nothing-to-move"}
		}
		if err != nil {
			return httpError{status: http.StatusUnprocessableEntity, id: "errors.fix.failed", args: []any{"Reason", err.Error()}}
		}
		st.Manifest = string(m)
		return nil
	}
	return applySettingsFix(value, &st.Settings)
}

// applySettingsFix changes the settings as the fix with the id says: a button's value, the id
// and, for the namespace's label, ":key=value" (istio-injection or istio.io/rev; the id alone is
// istio-injection=enabled).
func applySettingsFix(value string, set *engine.Settings) error {
	id, label, _ := strings.Cut(value, ":")
	if id != fixLabelInjection && label != "" {
		return httpError{status: http.StatusBadRequest, id: "errors.fix.unknown"}
	}
	switch id {
	case fixLabelInjection:
		key, value := labelInjection, "enabled"
		if label != "" {
			var ok bool
			if key, value, ok = strings.Cut(label, "="); !ok || (key != labelInjection && key != labelRev) || len(validation.IsValidLabelValue(value)) > 0 {
				return httpError{status: http.StatusBadRequest, id: "errors.fix.unknown"}
			}
		}
		out := maps.Clone(set.Namespace.Labels)
		if out == nil {
			out = map[string]string{}
		}
		out[key] = value
		set.Namespace.Labels = out
	case fixCNI:
		if !slices.Contains(set.Install.Set, cniOption) {
			set.Install.Set = append(slices.Clip(set.Install.Set), cniOption)
		}
	case fixSeccomp:
		if !slices.Contains(set.Install.Set, seccompOption) {
			set.Install.Set = append(slices.Clip(set.Install.Set), seccompOption)
		}
	default:
		return httpError{status: http.StatusBadRequest, id: "errors.fix.unknown"}
	}
	return nil
}
