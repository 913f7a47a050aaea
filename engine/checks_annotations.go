package engine

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"istio.io/api/annotation"
	"istio.io/istio/pkg/kube/inject"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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

// IgnoreAnnotation opts a workload out of some of sidecarlab's checks: a comma-separated list of
// check ids, on the workload's own metadata or its pod template's (a finding a team has
// accepted, so CI stops failing on it). It is sidecarlab's, not Istio's: Istio never reads it.
const IgnoreAnnotation = "sidecarlab.dev/ignore"

// ignoreAnnotation is one IgnoreAnnotation in a document: where it is and the ids it names.
type ignoreAnnotation struct {
	path string
	ids  []string
}

// ignoreAnnotations are the document's IgnoreAnnotations: on the workload's own metadata, where
// Istio reads annotations (a CronJob's spec.jobTemplate.metadata) and on the pod template.
func (c *docContext) ignoreAnnotations() []ignoreAnnotation {
	_, tmpl, _, _ := podParts(c.in)
	metas := []struct {
		m    *metav1.ObjectMeta
		path string
	}{{objectMeta(c.in), "metadata.annotations"}, {c.read, c.annPath}, {tmpl, strings.TrimSuffix(c.specPath, "spec") + "metadata.annotations"}}
	var out []ignoreAnnotation
	seen := map[*metav1.ObjectMeta]bool{}
	for _, m := range metas {
		if m.m == nil || seen[m.m] {
			continue
		}
		seen[m.m] = true
		v, ok := m.m.Annotations[IgnoreAnnotation]
		if !ok {
			continue
		}
		a := ignoreAnnotation{path: fmt.Sprintf("%s[%q]", m.path, IgnoreAnnotation)}
		for id := range strings.SplitSeq(v, ",") {
			if id = strings.TrimSpace(id); id != "" {
				a.ids = append(a.ids, id)
			}
		}
		out = append(out, a)
	}
	return out
}

// checkIgnoreIDs: a name in IgnoreAnnotation that is no check's (a typo ignores nothing).
func checkIgnoreIDs(c *docContext) []Finding {
	var fs []Finding
	for _, a := range c.ignoreAnnotations() {
		for _, id := range a.ids {
			if !IsCheck(id) {
				fs = append(fs, Finding{Path: a.path, Params: map[string]string{"id": id}})
			}
		}
	}
	return fs
}

// lenientAnnotation is one pod annotation Istio read whose value does not fit its kind.
type lenientAnnotation struct {
	a     catalog.Annotation
	key   string
	value string
	path  string
}

// lenientAnnotations are the annotations Istio read (sorted by key) whose values do not fit
// their kind (catalog.FitsKind), and which Istio nevertheless accepted: the document was injected or
// skipped, not failed. The annotations the injector writes itself are left out.
func (c *docContext) lenientAnnotations() []lenientAnnotation {
	var out []lenientAnnotation
	for _, k := range sortedKeys(c.podAnn) {
		a, ok := c.catalog.Lookup(k)
		if !ok || a.WrittenByInjector || catalog.FitsKind(a, c.podAnn[k]) {
			continue
		}
		out = append(out, lenientAnnotation{a: a, key: k, value: c.podAnn[k], path: fmt.Sprintf("%s[%q]", c.annPath, k)})
	}
	return out
}

// checkLenientNative: sidecar.istio.io/nativeSidecar other than "true" or "false". Istio's
// injection template turns native sidecars on for every value but "false" (it compares with
// `ne … "false"`), so "TRUE", "False", "no" and "0" all make istio-proxy a native sidecar. The
// finding is reported only when the output shows it.
func checkLenientNative(c *docContext) []Finding {
	var fs []Finding
	for _, l := range c.lenientAnnotations() {
		if l.key != annotation.SidecarNativeSidecar.Name || c.proxy == nil || !c.native {
			continue
		}
		f := Finding{Path: l.path, Params: map[string]string{"key": l.key, "value": yamldoc.Clip(l.value)}, Fix: &Fix{}}
		if b, err := strconv.ParseBool(l.value); err == nil {
			// The spelling Istio reads for what Go (and a person) would read the value as.
			f.Fix.Steps = []input.Step{{Key: l.key, Value: strconv.FormatBool(b)}}
		}
		fs = append(fs, f)
	}
	return fs
}

// parseBoolAnnotations are the boolean annotations Istio reads with Go's strconv.ParseBool
// (which takes 1, t, T, TRUE, True, 0, f, F, FALSE, False too): prometheus.istio.io/merge-metrics
// (enablePrometheusMerge; its validator refuses any other value) and
// sidecar.istio.io/rewriteAppHTTPProbers (ShouldRewriteAppHTTPProbers; no validator: any other
// value is ignored for the installation's setting).
var parseBoolAnnotations = []string{annotation.PrometheusMergeMetrics.Name, annotation.SidecarRewriteAppHTTPProbers.Name}

// checkLenientBoolRead: a ParseBool spelling other than "true" or "false" on an annotation
// Istio reads with ParseBool: Istio honours it; worth knowing, since the same spelling means
// something else on sidecar.istio.io/inject and sidecar.istio.io/nativeSidecar.
func checkLenientBoolRead(c *docContext) []Finding {
	var fs []Finding
	for _, l := range c.lenientAnnotations() {
		b, err := strconv.ParseBool(l.value)
		if !slices.Contains(parseBoolAnnotations, l.key) || err != nil {
			continue
		}
		fs = append(fs, Finding{Path: l.path, Params: map[string]string{"key": l.key, "value": l.value, "read": strconv.FormatBool(b)}})
	}
	return fs
}

// checkLenientBoolIgnored: sidecar.istio.io/rewriteAppHTTPProbers that ParseBool does not take
// ("yes", "on"): Istio ignores it and uses the installation's
// values.sidecarInjectorWebhook.rewriteAppHTTPProbe.
func checkLenientBoolIgnored(c *docContext) []Finding {
	var fs []Finding
	for _, l := range c.lenientAnnotations() {
		if _, err := strconv.ParseBool(l.value); l.key != annotation.SidecarRewriteAppHTTPProbers.Name || err == nil {
			continue
		}
		w, _ := c.p.install.values.Map()["sidecarInjectorWebhook"].(map[string]any)
		used, _ := w["rewriteAppHTTPProbe"].(bool)
		fs = append(fs, Finding{Path: l.path, Params: map[string]string{"key": l.key, "value": yamldoc.Clip(l.value), "used": strconv.FormatBool(used)}, Fix: &Fix{}})
	}
	return fs
}

// checkLenientPortZero: port 0 in a port list. Istio's validators take ports from 0 (they parse
// a 16-bit number) and the template passes the list to istio-init as written, where a rule for
// port 0 matches no connection.
func checkLenientPortZero(c *docContext) []Finding {
	var fs []Finding
	for _, l := range c.lenientAnnotations() {
		if l.a.Kind == catalog.KindPortList && hasPortZero(l.value) {
			fs = append(fs, Finding{Path: l.path, Params: map[string]string{"key": l.key}, Fix: &Fix{}})
		}
	}
	return fs
}

// hasPortZero says whether a comma-separated port list names port 0.
func hasPortZero(list string) bool {
	for _, p := range strings.Split(list, ",") {
		if n, err := strconv.ParseUint(strings.TrimSpace(p), 10, 16); err == nil && n == 0 {
			return true
		}
	}
	return false
}

// checkLenientUnchecked: a value that does not fit its kind on an annotation Istio has no
// validator for (a log level "loud", a port "eighty", a histogram bin count "fifty"): Istio
// takes it as written, into the pod, where the mistake shows only when the pod runs. The
// annotations the other lenient checks and inject-value word are left to them; so are those
// Istio validates (what Istio accepted there, it accepted as a valid value).
func checkLenientUnchecked(c *docContext) []Finding {
	var fs []Finding
	for _, l := range c.lenientAnnotations() {
		if _, validated := inject.AnnotationValidation[l.key]; validated || l.a.Kind == catalog.KindBool || (l.a.Kind == catalog.KindPortList && hasPortZero(l.value)) {
			continue
		}
		f := Finding{Path: l.path, Params: map[string]string{"key": l.key, "value": yamldoc.Clip(l.value), "kind": string(l.a.Kind)}}
		if l.a.Kind == catalog.KindEnum {
			f.Params["enum"] = strings.Join(l.a.Enum, ", ")
		}
		fs = append(fs, f)
	}
	return fs
}
