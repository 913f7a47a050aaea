package provenance

import (
	"regexp"
	"strconv"
)

// checkedAt is the istio.io/istio commit (go.mod's pin) the code table was read at: its links
// point into it, so that their lines stay where they were read; a test holds every entry to the
// pinned module's source, so an upgrade of Istio asks for the table to be read again.
const checkedAt = "eed52ebb66ad"

// kubeAPIAt is the k8s.io/api version (go.mod's) its entries were read at; kubernetesAt
// k8s.io/kubernetes's.
const (
	kubeAPIAt    = "v0.36.1"
	kubernetesAt = "v1.36.1"
)

// APIDefaults are the API server's defaults for a Pod (what the webhook sees, defaulted when
// the object was decoded): Kubernetes' own defaulting functions, which the engine runs.
var APIDefaults = Code{Func: "RegisterDefaults", File: "pkg/apis/core/v1/zz_generated.defaults.go", Line: 32, Module: "k8s.io/kubernetes"}

// Code is a function of Istio's that sets fields of an injected pod after its templates ran,
// or a type of Kubernetes' whose encoding writes them (a container's resources: {}, which a
// corev1.Container always writes).
type Code struct {
	// Func is the function's name; File its file in its module and Line the line of its func.
	Func string `json:"func"`
	File string `json:"file"`
	Line int    `json:"line"`
	// Module is the Go module the file is in: istio.io/istio, or k8s.io/api.
	Module string `json:"module"`
}

// URL is the function's line in the pinned source, on GitHub.
func (c Code) URL() string {
	switch c.Module {
	case "k8s.io/api":
		return "https://github.com/kubernetes/api/blob/" + kubeAPIAt + "/" + c.File + "#L" + strconv.Itoa(c.Line)
	case "k8s.io/kubernetes":
		return "https://github.com/kubernetes/kubernetes/blob/" + kubernetesAt + "/" + c.File + "#L" + strconv.Itoa(c.Line)
	}
	return "https://github.com/istio/istio/blob/" + checkedAt + "/" + c.File + "#L" + strconv.Itoa(c.Line)
}

// codeFields are the fields Istio's Go code writes after the templates, by their pod-relative
// path (a named list's element by any name), each with the function that writes them: what
// postProcessPod (pkg/kube/inject/webhook.go) runs after the template's overlay, and the Go
// type's own encoding.
var codeFields = []struct {
	path *regexp.Regexp
	code Code
}{
	{regexp.MustCompile(`^metadata\.annotations\["sidecar\.istio\.io/status"\]$`), istioCode("applyMetadata", 771)},
	{regexp.MustCompile(`^metadata\.labels\["topology\.istio\.io/network"\]$`), istioCode("applyMetadata", 771)},
	{regexp.MustCompile(`^metadata\.annotations\["prometheus\.io/(scrape|port|path)"\]$`), istioCode("applyPrometheusMerge", 920)},
	{regexp.MustCompile(`^spec\.(initContainers|containers)\[[^\]]+\]\.env\[ISTIO_PROMETHEUS_ANNOTATIONS\]\.`), istioCode("applyPrometheusMerge", 920)},
	{regexp.MustCompile(`^metadata\.annotations\["proxy\.istio\.io/overrides"\]$`), istioCode("reapplyOverwrittenContainers", 511)},
	{regexp.MustCompile(`^spec\.(initContainers|containers)\[[^\]]+\]\.env\[(ISTIO_KUBE_APP_PROBERS)\]\.`), istioCode("applyRewrite", 830)},
	{regexp.MustCompile(`^spec\.(initContainers|containers)\[[^\]]+\]\.(readinessProbe|livenessProbe|startupProbe)\.`), istioCode("applyRewrite", 830)},
	{regexp.MustCompile(`^spec\.(initContainers|containers)\[[^\]]+\]\.lifecycle\.(postStart|preStop)\.httpGet\.`), istioCode("applyRewrite", 830)},
	{regexp.MustCompile(`^spec\.(initContainers|containers)\[[^\]]+\]\.env\[ISTIO_META_(CLUSTER_ID|NETWORK)\]\.value$`), Code{Func: "overwriteClusterInfo", File: "pkg/kube/inject/inject.go", Line: 941, Module: "istio.io/istio"}},
	{regexp.MustCompile(`^spec\.initContainers\[(istio-init|istio-validation)\]\.args\[\d+\]$`), istioCode("adjustInitContainerUser", 596)},
	{regexp.MustCompile(`^spec\.containers$`), Code{Func: "moveContainer", File: "pkg/kube/inject/webhook.go", Line: 276, Module: "istio.io/istio"}},
	{regexp.MustCompile(`^spec\.(initContainers|containers)\[[^\]]+\]\.env\[[^\]]+\]\.valueFrom\.resourceFieldRef\.divisor$`), Code{Func: "ResourceFieldSelector", File: "core/v1/types.go", Module: "k8s.io/api", Line: 2559}},
	{regexp.MustCompile(`^spec\.(initContainers|containers)\[[^\]]+\]\.resources$`), Code{Func: "Container", File: "core/v1/types.go", Module: "k8s.io/api", Line: 2909}},
}

// istioCode is a function of pkg/kube/inject/webhook.go.
func istioCode(name string, line int) Code {
	return Code{Func: name, File: "pkg/kube/inject/webhook.go", Line: line, Module: "istio.io/istio"}
}

// CodeOf is the function of Istio's that writes the field at a pod-relative path after the
// templates, if one does.
func CodeOf(podPath string) (Code, bool) {
	for _, c := range codeFields {
		if c.path.MatchString(podPath) {
			return c.code, true
		}
	}
	return Code{}, false
}
