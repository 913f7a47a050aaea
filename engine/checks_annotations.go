package engine

import (
	"fmt"
	"strings"

	"istio.io/api/annotation"

	"github.com/sidecarlab/sidecarlab/engine/catalog"
	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/engine/yamldoc"
)

// istioPrefixes are annotation prefixes Istio owns.
var istioPrefixes = []string{"sidecar.istio.io/", "proxy.istio.io/", "traffic.sidecar.istio.io/", "status.sidecar.istio.io/",
	"readiness.status.sidecar.istio.io/", "prometheus.istio.io/", "inject.istio.io/", "istio.io/", "ambient.istio.io/",
	"networking.istio.io/", "security.istio.io/", "telemetry.istio.io/"}

func hasIstioPrefix(k string) bool {
	for _, p := range istioPrefixes {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// knownAnnotations are all of Istio's annotation names, for any resource (an annotation for
// Services on a pod is misplaced, not unknown).
var knownAnnotations = func() map[string]bool {
	m := map[string]bool{}
	for _, a := range annotation.AllResourceAnnotations() {
		m[a.Name] = true
	}
	return m
}()

// Annotations Istio's injector writes itself; on an input they come from a previous injection.
var injectorWritten = map[string]bool{annotation.SidecarStatus.Name: true, annotation.IoIstioRev.Name: true}

// checkWorkloadMetadata: Istio annotations on the workload's own metadata, which Istio never reads.
func checkWorkloadMetadata(c *docContext) []Finding {
	if c.d.Kind == "Pod" {
		return nil
	}
	own := objectMeta(c.in)
	if own == nil {
		return nil
	}
	var fs []Finding
	for _, k := range sortedKeys(own.Annotations) {
		if !hasIstioPrefix(k) || injectorWritten[k] {
			continue
		}
		if _, also := c.podAnn[k]; also {
			continue
		}
		fs = append(fs, Finding{Path: fmt.Sprintf("metadata.annotations[%q]", k),
			Params: map[string]string{"key": k, "kind": c.d.Kind, "readFrom": c.annPath},
			Fix:    &Fix{Steps: []input.Step{{Key: k, Value: own.Annotations[k]}}}})
	}
	return fs
}

// checkCronJobTemplate: for a CronJob, annotations on the pod template are not where
// kube-inject reads (spec.jobTemplate.metadata).
func checkCronJobTemplate(c *docContext) []Finding {
	if c.d.Kind != "CronJob" {
		return nil
	}
	_, tmpl, _, _ := podParts(c.in)
	var fs []Finding
	for _, k := range sortedKeys(tmpl.Annotations) {
		if !hasIstioPrefix(k) || injectorWritten[k] {
			continue
		}
		if _, also := c.podAnn[k]; also {
			continue
		}
		fs = append(fs, Finding{Path: fmt.Sprintf("spec.jobTemplate.spec.template.metadata.annotations[%q]", k),
			Params: map[string]string{"key": k},
			Fix:    &Fix{Steps: []input.Step{{Key: k, Value: tmpl.Annotations[k]}}}})
	}
	return fs
}

// checkUnknownAnnotation: an annotation under Istio's prefixes that Istio does not know (Istio
// ignores it without a word), with the nearest known name as a suggestion.
func checkUnknownAnnotation(c *docContext) []Finding {
	var fs []Finding
	for _, k := range sortedKeys(c.podAnn) {
		if !hasIstioPrefix(k) || knownAnnotations[k] {
			continue
		}
		f := Finding{Path: fmt.Sprintf("%s[%q]", c.annPath, k), Params: map[string]string{"key": k}}
		if m := catalog.Closest(k, c.catalog.Names()); m != "" {
			f.Params["suggestion"] = m
			f.Fix = &Fix{Steps: []input.Step{{Key: k, Remove: true}, {Key: m, Value: c.podAnn[k]}}}
		}
		fs = append(fs, f)
	}
	return fs
}

// checkDeprecated: an annotation Istio's catalog marks deprecated.
func checkDeprecated(c *docContext) []Finding {
	var fs []Finding
	for _, k := range sortedKeys(c.podAnn) {
		a, ok := c.catalog.Lookup(k)
		if !ok || !a.Deprecated {
			continue
		}
		f := Finding{Path: fmt.Sprintf("%s[%q]", c.annPath, k), Params: map[string]string{"key": k, "description": firstSentence(a.Description)}}
		if k == annotation.SidecarInject.Name {
			f.Fix = &Fix{} // use the label instead
		}
		fs = append(fs, f)
	}
	return fs
}

// checkInjectValue: sidecar.istio.io/inject other than "true" or "false" (the label wins over
// the annotation, as in Istio).
func checkInjectValue(c *docContext) []Finding {
	val, from := c.podAnn[annotation.SidecarInject.Name], c.annPath
	if l, ok := c.read.Labels["sidecar.istio.io/inject"]; ok {
		val, from = l, strings.Replace(c.annPath, "annotations", "labels", 1)
	}
	if val == "" || val == "true" || val == "false" {
		return nil
	}
	// Istio's injectRequired takes exactly "true" and "false"; any other value (even "False")
	// falls back to the injection policy, whose decision the document's status is.
	result := string(StatusInjected)
	if c.d.Skipped {
		result = string(StatusSkipped)
	}
	return []Finding{{Path: fmt.Sprintf("%s[%q]", from, "sidecar.istio.io/inject"), Params: map[string]string{"value": yamldoc.Clip(val), "result": result}, Fix: &Fix{}}}
}

// checkProxyConfigFields: fields of proxy.istio.io/config that ProxyConfig does not have.
func checkProxyConfigFields(c *docContext) []Finding {
	pc, ok := c.podAnn[annotation.ProxyConfig.Name]
	if !ok {
		return nil
	}
	var fs []Finding
	for _, u := range catalog.UnknownProxyConfigFields(pc) {
		f := Finding{Path: fmt.Sprintf("%s[%q].%s", c.annPath, annotation.ProxyConfig.Name, u.Path), Params: map[string]string{"field": u.Path}}
		if u.Suggest != "" {
			f.Params["suggestion"] = u.Suggest
			if fixed, ok := catalog.RenameTopField(pc, u.Path, u.Suggest); ok {
				f.Fix = &Fix{Steps: []input.Step{{Key: annotation.ProxyConfig.Name, Value: fixed}}}
			}
		}
		fs = append(fs, f)
	}
	return fs
}

// firstSentence is the first sentence of an annotation's description.
func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i > 0 {
		return s[:i+1]
	}
	return s
}
