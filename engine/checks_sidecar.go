package engine

import (
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/sidecarlab/sidecarlab/engine/catalog"
	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/engine/lifecycle"

	"istio.io/api/annotation"
	"istio.io/istio/pkg/kube/inject"
	"sigs.k8s.io/yaml"
)

// checkHoldSwallowed: hold is on, but a global values.global.proxy.lifecycle made Istio's
// template write that lifecycle instead of the postStart "pilot-agent wait".
func checkHoldSwallowed(c *docContext) []Finding {
	if c.proxy == nil || c.native || !holdRequested(c.p, c.proxy) || lifecycle.PostStartWait(c.proxy) || !globalLifecycle(c.p.install) {
		return nil
	}
	return []Finding{{Path: c.specPath + ".containers[istio-proxy].lifecycle", Fix: &Fix{}}}
}

// checkHoldNative: hold has no effect on a native sidecar, which the kubelet starts first anyway.
func checkHoldNative(c *docContext) []Finding {
	if c.proxy == nil || !c.native || !holdRequested(c.p, c.proxy) {
		return nil
	}
	return []Finding{{Path: c.specPath + ".initContainers[istio-proxy]"}}
}

// checkJobClassic: a Job or CronJob with a classic sidecar, whose pod never completes.
func checkJobClassic(c *docContext) []Finding {
	if c.proxy == nil || c.native || (c.d.Kind != "Job" && c.d.Kind != "CronJob") {
		return nil
	}
	return []Finding{{Path: c.specPath + ".containers[istio-proxy]",
		Fix: &Fix{Steps: []input.Step{{Key: annotation.SidecarNativeSidecar.Name, Value: "true"}}}}}
}

// nativeSidecarMinMinor is the first Kubernetes minor version with native sidecars (init
// containers with restartPolicy Always) on by default: 1.29.
const nativeSidecarMinMinor = 29

// webhookNativeMinMinor is the first Kubernetes minor version on which Istio's webhook, in its
// default auto mode, injects native sidecars: 1.33.
const webhookNativeMinMinor = 33

// checkNativeUnsupported: a native sidecar on webhook nodes older than 1.29.
func checkNativeUnsupported(c *docContext) []Finding {
	minor, ok := c.webhookMinor()
	if c.proxy == nil || !ok || !c.native || minor >= nativeSidecarMinMinor {
		return nil
	}
	return []Finding{{Path: c.specPath + ".initContainers[istio-proxy].restartPolicy",
		Params: map[string]string{"version": fmt.Sprintf("1.%d", minor)},
		Fix:    &Fix{Steps: []input.Step{{Key: annotation.SidecarNativeSidecar.Name, Value: "false"}}}}}
}

// checkWebhookClassic: the webhook's auto mode keeps classic sidecars on nodes older than 1.33
// (unless the pod opted out of native sidecars itself).
func checkWebhookClassic(c *docContext) []Finding {
	minor, ok := c.webhookMinor()
	if c.proxy == nil || !ok || c.native || minor >= webhookNativeMinMinor || c.podAnn[annotation.SidecarNativeSidecar.Name] == "false" {
		return nil
	}
	return []Finding{{Path: c.specPath + ".containers[istio-proxy]", Params: map[string]string{"version": fmt.Sprintf("1.%d", minor)}}}
}

// webhookMinor is the nodes' Kubernetes minor version in webhook mode; ok is false in other modes.
func (c *docContext) webhookMinor() (int, bool) {
	if c.p.settings.mode() != ModeWebhook {
		return 0, false
	}
	minor, err := c.p.settings.KubernetesMinor()
	return minor, err == nil
}

// checkResourceDefaults: one resource annotation makes Istio's template emit only the annotated
// resources; the other defaults are dropped, not kept.
func checkResourceDefaults(c *docContext) []Finding {
	if c.proxy == nil {
		return nil
	}
	set := setResourceAnnotations(c.podAnn)
	if len(set) == 0 {
		return nil
	}
	missing := missingResources(c.proxy)
	if len(missing) == 0 {
		return nil
	}
	return []Finding{{Path: c.specPath + ".containers[istio-proxy].resources",
		Params: map[string]string{"set": strings.Join(set, ", "), "missing": strings.Join(missing, ", ")}}}
}

// holdRequested says whether holdApplicationUntilProxyStarts is on for this proxy, as Istio's
// template decides it: the proxy config (the mesh-wide default, overridden by the pod's own
// proxy.istio.io/config, which Istio writes merged into PROXY_CONFIG) or the global value.
func holdRequested(p *prepared, proxy *corev1.Container) bool {
	hold := p.install.mesh.GetDefaultConfig().GetHoldApplicationUntilProxyStarts().GetValue()
	for _, env := range proxy.Env {
		if env.Name == "PROXY_CONFIG" {
			var pc struct {
				Hold *bool `json:"holdApplicationUntilProxyStarts"`
			}
			if json.Unmarshal([]byte(env.Value), &pc) == nil && pc.Hold != nil {
				hold = *pc.Hold
			}
		}
	}
	if hold {
		return true
	}
	g, _ := p.install.values.Map()["global"].(map[string]any)
	px, _ := g["proxy"].(map[string]any)
	h, _ := px["holdApplicationUntilProxyStarts"].(bool)
	return h
}

func globalLifecycle(in *Install) bool {
	g, _ := in.values.Map()["global"].(map[string]any)
	px, _ := g["proxy"].(map[string]any)
	lc, _ := px["lifecycle"].(map[string]any)
	return len(lc) > 0
}

func setResourceAnnotations(ann map[string]string) []string {
	var out []string
	for _, k := range catalog.ResourceAnnotations {
		if _, ok := ann[k]; ok {
			out = append(out, k)
		}
	}
	return out
}

func missingResources(c *corev1.Container) []string {
	var out []string
	for _, kind := range []string{"requests", "limits"} {
		list := c.Resources.Requests
		if kind == "limits" {
			list = c.Resources.Limits
		}
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if _, ok := list[r]; !ok {
				out = append(out, kind+"."+string(r))
			}
		}
	}
	return out
}

// checkInjectedNothing: Istio ran its injection on the pod — the status annotation it writes is
// there — but the template added no container, init container or volume: no istio-proxy, the
// pod as it was but for Istio's bookkeeping, which reads like an injection that happened. A
// mesh's own config written for another Istio does this, and the finding names how when the
// config shows it (Params: cause):
//   - "template-key": the config gives its template under "template:", the single template
//     older Istio releases read (Istio 1.1's ConfigMap, say), and none under "templates:", the
//     only key Istio reads now; so there is no template in it for Istio to run;
//   - "delimiters": its templates use Istio ≤ 1.1's [[ ]] delimiters, which later releases'
//     template engine copies as text, so the sidecar the template describes is never made.
func checkInjectedNothing(c *docContext) []Finding {
	if c.d.Skipped || c.proxy != nil {
		return nil
	}
	raw, ok := c.outMeta.Annotations[annotation.SidecarStatus.Name]
	if !ok {
		return nil
	}
	var st inject.SidecarInjectionStatus
	if json.Unmarshal([]byte(raw), &st) != nil || len(st.InitContainers)+len(st.Containers)+len(st.Volumes) > 0 {
		return nil
	}
	cause := ""
	switch config := c.p.install.InjectorConfig; {
	case oldTemplateKey(config):
		cause = "template-key"
	case oldDelimiters(config):
		cause = "delimiters"
	}
	return []Finding{{Path: fmt.Sprintf("%s[%q]", c.annPath, annotation.SidecarStatus.Name), Params: map[string]string{"cause": cause}}}
}

// oldTemplateKey says whether an injector config gives a template under "template:" and none
// under "templates:". Istio's charts have written both since the named templates came, the
// first as a trap for an injector that still read it ("{{ Template_Version_And_Istio_Version_
// Mismatched_Check_Installation }}"); only an older config has "template:" alone.
func oldTemplateKey(config string) bool {
	var c struct {
		Template  *string        `json:"template"`
		Templates map[string]any `json:"templates"`
	}
	return yaml.Unmarshal([]byte(config), &c) == nil && c.Template != nil && len(c.Templates) == 0
}

// oldDelimiters says whether injection templates use Istio ≤ 1.1's [[ ]] delimiters: an action
// such as "[[ .ProxyConfig" or "[[- if" (Istio 1.2 moved to Go's {{ }}).
func oldDelimiters(config string) bool {
	for rest := config; ; {
		i := strings.Index(rest, "[[")
		if i < 0 {
			return false
		}
		rest = strings.TrimLeft(rest[i+2:], " -")
		for _, action := range []string{".", "$", "if ", "else", "end", "range ", "with ", "or ", "and ", "not ", "toJson", "annotation "} {
			if strings.HasPrefix(rest, action) {
				return true
			}
		}
	}
}
