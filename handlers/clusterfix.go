package handlers

import (
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"

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
	// sidecar.istio.io/inject: "true" becomes a label (engine.LabelInsteadOfAnnotation).
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

// settingsFixes are the fixes that change the settings, decided by what the admission found:
// labelling the namespace when a webhook would take the Pod but for the namespace's labels, and
// Istio CNI when Pod Security rejects istio-init's capabilities. Their ids only: the view words
// them in the reader's language (fixTexts).
func settingsFixes(rs []admission.Result, set engine.Settings) []web.SettingsFix {
	var label, cni, seccomp, podLabel bool
	for _, r := range rs {
		if r.Error != "" {
			continue
		}
		called := slices.ContainsFunc(r.Webhooks, func(w admission.WebhookMatch) bool { return w.Called })
		// A Pod that joins ambient is in the mesh without a sidecar: labelling its namespace for
		// injection would take it out of ambient, so it is not offered.
		joins := r.Ambient != nil && r.Ambient.Joins
		if !called && !joins && slices.ContainsFunc(r.Webhooks, func(w admission.WebhookMatch) bool { return w.ObjectMatch && !w.NamespaceMatch }) {
			label = true
		}
		if !r.Admitted && slices.ContainsFunc(r.Violations, func(v string) bool {
			return strings.Contains(v, `container "istio-init"`) && strings.Contains(v, `"NET_ADMIN"`)
		}) {
			cni = true
		}
		if !r.Admitted && slices.ContainsFunc(r.Violations, istioSeccompViolation) {
			seccomp = true
		}
		if slices.ContainsFunc(r.Trace, func(s admission.Step) bool { return s.ID == "hint-annotation-not-label" }) {
			podLabel = true
		}
	}
	var out []web.SettingsFix
	if podLabel {
		out = append(out, web.SettingsFix{ID: fixLabel})
	}
	if label && set.Namespace.Labels[labelInjection] != "enabled" {
		out = append(out, web.SettingsFix{ID: fixLabelInjection})
	}
	if cni && !slices.Contains(set.Install.Set, cniOption) {
		out = append(out, web.SettingsFix{ID: fixCNI})
	}
	if seccomp && !slices.Contains(set.Install.Set, seccompOption) {
		out = append(out, web.SettingsFix{ID: fixSeccomp})
	}
	return out
}

// fixTexts words the fixes' buttons.
func fixTexts(w wording.Words, fixes []web.SettingsFix) {
	for i := range fixes {
		fixes[i].Text = w.SettingsFix(fixes[i].ID, settingsFixOptions[fixes[i].ID])
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

// applyClusterFix changes the state as the fix with the id says: its settings, or (fixLabel)
// its manifest.
func applyClusterFix(id string, st *api.State) error {
	if id == fixLabel {
		m, err := engine.LabelInsteadOfAnnotation([]byte(st.Manifest))
		if errors.Is(err, engine.ErrNothingToMove) {
			return httpError{status: http.StatusUnprocessableEntity, id: "errors.fix.nothing-to-move"}
		}
		if err != nil {
			return httpError{status: http.StatusUnprocessableEntity, id: "errors.fix.failed", args: []any{"Reason", err.Error()}}
		}
		st.Manifest = string(m)
		return nil
	}
	return applySettingsFix(id, &st.Settings)
}

// applySettingsFix changes the settings as the fix with the id says.
func applySettingsFix(id string, set *engine.Settings) error {
	switch id {
	case fixLabelInjection:
		labels := maps.Clone(set.Namespace.Labels)
		if labels == nil {
			labels = map[string]string{}
		}
		labels[labelInjection] = "enabled"
		set.Namespace.Labels = labels
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
