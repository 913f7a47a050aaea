package engine

import (
	"fmt"
	"maps"
	"regexp"
	"strconv"

	"github.com/sidecarlab/sidecarlab/engine/input"
)

// DefaultKubernetesVersion is the node version webhook mode uses when none is given.
const DefaultKubernetesVersion = "1.34"

var kubeVersionRE = regexp.MustCompile(`^v?1\.(\d{1,2})(\.\d{1,3})?$`)

// parseKubernetesVersion accepts "1.34", "v1.34" or "1.34.2" and returns the minor version.
func parseKubernetesVersion(v string) (int, error) {
	m := kubeVersionRE.FindStringSubmatch(v)
	if m == nil {
		return 0, &input.Error{Field: "kubernetes version", ID: "kubernetes-version", Params: input.Params("versionQ", quote(v))}
	}
	minor, _ := strconv.Atoi(m[1])
	if minor < 16 || minor > 60 {
		return 0, &input.Error{Field: "kubernetes version", ID: "kubernetes-version-range", Params: input.Params("minor", strconv.Itoa(minor))}
	}
	return minor, nil
}

// Settings are the per-request knobs besides the manifest and the annotation steps.
type Settings struct {
	Mode Mode `json:"mode,omitempty"`
	// KubernetesVersion is the node version in webhook mode ("1.34"), and the cluster's version
	// in the Cluster view whatever the mode.
	KubernetesVersion string         `json:"kubernetesVersion,omitempty"`
	Install           InstallOptions `json:"install,omitzero"`
	// Namespace is where the Cluster view creates the workload's Pods. Injection as kube-inject
	// does it does not read it, so it is not part of the memo key.
	Namespace Namespace `json:"namespace,omitzero"`
}

// Namespace is the namespace a workload's Pods are created in, with its labels
// (istio-injection, istio.io/rev, pod-security.kubernetes.io/enforce, …).
type Namespace struct {
	Name   string            `json:"name,omitempty"`
	Labels map[string]string `json:"labels,omitempty"`
}

// LabelsOf are the labels of namespace name: ns's own when ns is that namespace (or names none:
// the settings' namespace is the one the workloads are meant for), under those a Namespace
// document of the manifest gives it (docs, by name; see NamespaceLabels), as `kubectl create -f`
// would create it.
func (ns Namespace) LabelsOf(name string, docs map[string]map[string]string) map[string]string {
	out := map[string]string{}
	if ns.Name == "" || ns.Name == name {
		maps.Copy(out, ns.Labels)
	}
	maps.Copy(out, docs[name])
	return out
}

// NamespaceLabels are the labels of the Namespace documents among docs, by name. Namespaces pass
// through injection as they are written.
func NamespaceLabels(docs []Document) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, d := range docs {
		if d.Error == nil && d.APIVersion == "v1" && d.Kind == "Namespace" {
			out[d.Name] = d.labels
		}
	}
	return out
}

func (s Settings) mode() Mode {
	if s.Mode == "" {
		return ModeKubeInject
	}
	return s.Mode
}

// KubernetesMinor is the minor version of the webhook's nodes and of the Cluster view's
// cluster: KubernetesVersion, or DefaultKubernetesVersion when none is given. It is the one
// place that defaults and parses it; past it the version is this int.
func (s Settings) KubernetesMinor() (int, error) {
	v := s.KubernetesVersion
	if v == "" {
		v = DefaultKubernetesVersion
	}
	return parseKubernetesVersion(v)
}

// key identifies the settings for memoisation: equal keys inject identically.
func (s Settings) key() string {
	k := string(s.mode())
	if s.mode() == ModeWebhook {
		minor, _ := s.KubernetesMinor()
		k += fmt.Sprintf("@1.%d", minor)
	}
	return k + "/" + s.Install.Hash()
}

// IstioctlEnv is the ENABLE_NATIVE_SIDECARS value under which offline `istioctl kube-inject`
// decides exactly as this mode does: unset for kube-inject, true/false for the forced modes, and
// for webhook mode the answer Istio's DetectNativeSidecar gives for nodes of the version (native
// from 1.33 on).
func (s Settings) IstioctlEnv() string {
	switch s.mode() {
	case ModeNative:
		return "true"
	case ModeClassic:
		return "false"
	case ModeWebhook:
		if minor, err := s.KubernetesMinor(); err == nil && minor >= 33 {
			return "true"
		}
		return "false"
	}
	return ""
}
