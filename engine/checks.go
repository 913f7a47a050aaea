package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/sidecarlab/sidecarlab/engine/yamldoc"

	"istio.io/api/annotation"
	meshconfig "istio.io/api/mesh/v1alpha1"

	"istio.io/istio/pkg/kube/inject"
)

// Severity ranks a finding.
type Severity string

const (
	SeverityInfo    Severity = "info"    // worth knowing; nothing is wrong
	SeverityWarning Severity = "warning" // probably not what was meant
	SeverityError   Severity = "error"   // the workload will misbehave
)

// Rank orders severities: info < warning < error.
func (s Severity) Rank() int {
	return slices.Index([]Severity{SeverityInfo, SeverityWarning, SeverityError}, s)
}

// Finding is one pitfall a check found. The checks are sidecarlab's own knowledge, not Istio's:
// each is tested on a case that trips it and one that does not, against Istio's real output.
// A finding carries no sentence: its check id and parameters are what the edge (web, API, CLI)
// words, in the reader's language.
type Finding struct {
	// Check is the check's stable id, e.g. "job-classic-sidecar".
	Check    string   `json:"check"`
	Severity Severity `json:"severity"`
	// Doc is the 1-based document; Path the field it concerns.
	Doc  int    `json:"doc"`
	Path string `json:"path,omitempty"`
	// Params are the facts the sentence names, by check (see each check's doc): the annotation
	// "key", a "suggestion", the "value" found, a Kubernetes "version", …
	Params map[string]string `json:"params,omitempty"`
	// Fix is set when the finding has a fix; its words are the check's too.
	Fix *Fix `json:"fix,omitempty"`
}

// Fix repairs a finding. Where it can be done in one click, Steps are the annotation steps to
// add; a fix without steps is advice only.
type Fix struct {
	Steps []Step `json:"steps,omitempty"`
}

// Check describes one of sidecarlab's pitfall checks.
type Check struct {
	ID       string   `json:"id"`
	Severity Severity `json:"severity"`
}

// check is a Check with the function that looks for it in one injected document.
type check struct {
	Check
	run func(c *docContext) []Finding
}

// checks are every check, in the order their findings are reported. Each run returns findings
// with Path, Params and Fix; Check, Severity and Doc are filled in from the table.
var checks = [...]check{
	// Params: key, kind (of the workload), readFrom (where Istio reads annotations).
	{Check{"workload-metadata-annotation", SeverityWarning}, checkWorkloadMetadata},
	// Params: key.
	{Check{"cronjob-pod-template-annotation", SeverityWarning}, checkCronJobTemplate},
	// Params: key; suggestion (when one is near).
	{Check{"unknown-istio-annotation", SeverityWarning}, checkUnknownAnnotation},
	// Params: key, description (the first sentence of Istio's catalog entry).
	{Check{"deprecated-annotation", SeverityWarning}, checkDeprecated},
	// Params: value; result (injected or skipped: what Istio's fallback policy decided).
	{Check{"inject-value", SeverityWarning}, checkInjectValue},
	// The lenient-* checks: a value Istio accepts though it is not what the annotation's kind
	// says, and what Istio made of it (one id per way Istio reads it, since the words differ).
	// Params: key, value.
	{Check{"lenient-native-sidecar", SeverityWarning}, checkLenientNative},
	// Params: key, value, read (true or false, as Istio read it).
	{Check{"lenient-bool-read", SeverityInfo}, checkLenientBoolRead},
	// Params: key, value, used (the installation's setting Istio used instead: true or false).
	{Check{"lenient-bool-ignored", SeverityWarning}, checkLenientBoolIgnored},
	// Params: key.
	{Check{"lenient-port-zero", SeverityWarning}, checkLenientPortZero},
	// Params: key, value, kind; enum (the values, comma-separated, for an enum).
	{Check{"lenient-unchecked", SeverityWarning}, checkLenientUnchecked},
	// Params: field; suggestion (when one is near).
	{Check{"unknown-proxy-config-field", SeverityWarning}, checkProxyConfigFields},
	// No params.
	{Check{"hold-swallowed-by-global-lifecycle", SeverityError}, checkHoldSwallowed},
	// No params.
	{Check{"hold-ignored-native-sidecar", SeverityInfo}, checkHoldNative},
	// No params.
	{Check{"job-classic-sidecar", SeverityError}, checkJobClassic},
	// Params: version (the nodes' Kubernetes version, "1.28").
	{Check{"native-sidecar-unsupported", SeverityError}, checkNativeUnsupported},
	// Params: version.
	{Check{"webhook-auto-stays-classic", SeverityInfo}, checkWebhookClassic},
	// Params: set (the resource annotations set, comma-separated), missing (requests.memory, …).
	{Check{"resource-annotation-drops-defaults", SeverityInfo}, checkResourceDefaults},
	// Params: id (the name in IgnoreAnnotation that is no check's).
	{Check{"ignore-unknown-check", SeverityWarning}, checkIgnoreIDs},
}

// Checks lists every check, in the order their findings are reported.
func Checks() []Check {
	out := make([]Check, len(checks))
	for i, c := range checks {
		out[i] = c.Check
	}
	return out
}

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

var resourceAnnotations = []string{annotation.SidecarProxyCPU.Name, annotation.SidecarProxyCPULimit.Name, annotation.SidecarProxyMemory.Name, annotation.SidecarProxyMemoryLimit.Name}

// docContext is what every check reads of one injected document.
type docContext struct {
	p       *prepared
	catalog *Catalog
	d       Document
	// in is the typed input (annotation steps applied); read the metadata Istio read
	// annotations and labels from; podAnn its annotations.
	in     runtime.Object
	read   *metav1.ObjectMeta
	podAnn map[string]string
	// annPath and specPath are where the pod's annotations and spec are in this kind.
	annPath, specPath string
	// proxy is istio-proxy in the output, nil when none was injected; native says whether it
	// is a native sidecar.
	proxy  *corev1.Container
	native bool
}

// check runs every check on a row of a request. The findings a workload opts out of with
// IgnoreAnnotation are returned apart, as ignored, so every edge honours the opt-out and can
// still say how many it hid.
func (e *Engine) check(ctx context.Context, p *prepared, docs []Document) (found, ignored []Finding, err error) {
	for _, d := range docs {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		c, ok := newDocContext(p, e.catalog, d)
		if !ok {
			continue
		}
		skip := map[string]bool{}
		for _, a := range c.ignoreAnnotations() {
			for _, id := range a.ids {
				skip[id] = true
			}
		}
		for _, ch := range checks {
			for _, f := range ch.run(c) {
				f.Check, f.Severity, f.Doc = ch.ID, ch.Severity, d.Index
				if skip[f.Check] {
					ignored = append(ignored, f)
				} else {
					found = append(found, f)
				}
			}
		}
	}
	return found, ignored, nil
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

// IsCheck says whether id is one of the checks' ids.
func IsCheck(id string) bool { return checkIDs[id] }

// checkIDs are the checks' ids, filled once from the table (a check in the table reads it, so
// it cannot be an initializer of its own) and only read after.
var checkIDs = map[string]bool{}

func init() {
	for _, c := range checks {
		checkIDs[c.ID] = true
	}
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

func newDocContext(p *prepared, cat *Catalog, d Document) (*docContext, bool) {
	in, out, ok := d.objects()
	if !ok {
		return nil, false
	}
	read, _, _, ok := podParts(in)
	if !ok {
		return nil, false
	}
	_, _, outSpec, ok := podParts(out)
	if !ok {
		return nil, false
	}
	c := &docContext{p: p, catalog: cat, d: d, in: in, read: read, podAnn: read.Annotations,
		annPath: "spec.template.metadata.annotations", specPath: "spec.template.spec"}
	switch d.Kind {
	case "Pod":
		c.annPath, c.specPath = "metadata.annotations", "spec"
	case "CronJob":
		c.annPath, c.specPath = "spec.jobTemplate.metadata.annotations", "spec.jobTemplate.spec.template.spec"
	}
	c.proxy, c.native, _ = proxyContainer(outSpec)
	return c, true
}

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
			Fix:    &Fix{Steps: []Step{{Key: k, Value: own.Annotations[k]}}}})
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
			Fix:    &Fix{Steps: []Step{{Key: k, Value: tmpl.Annotations[k]}}}})
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
		if m := closest(k, c.catalog.names()); m != "" {
			f.Params["suggestion"] = m
			f.Fix = &Fix{Steps: []Step{{Key: k, Remove: true}, {Key: m, Value: c.podAnn[k]}}}
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

// lenientAnnotation is one pod annotation Istio read whose value does not fit its kind.
type lenientAnnotation struct {
	a     Annotation
	key   string
	value string
	path  string
}

// lenientAnnotations are the annotations Istio read (sorted by key) whose values do not fit
// their kind (fitsKind), and which Istio nevertheless accepted: the document was injected or
// skipped, not failed. The annotations the injector writes itself are left out.
func (c *docContext) lenientAnnotations() []lenientAnnotation {
	var out []lenientAnnotation
	for _, k := range sortedKeys(c.podAnn) {
		a, ok := c.catalog.Lookup(k)
		if !ok || a.WrittenByInjector || fitsKind(a, c.podAnn[k]) {
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
			f.Fix.Steps = []Step{{Key: l.key, Value: strconv.FormatBool(b)}}
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
		if l.a.Kind == KindPortList && hasPortZero(l.value) {
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
		if _, validated := inject.AnnotationValidation[l.key]; validated || l.a.Kind == KindBool || (l.a.Kind == KindPortList && hasPortZero(l.value)) {
			continue
		}
		f := Finding{Path: l.path, Params: map[string]string{"key": l.key, "value": yamldoc.Clip(l.value), "kind": string(l.a.Kind)}}
		if l.a.Kind == KindEnum {
			f.Params["enum"] = strings.Join(l.a.Enum, ", ")
		}
		fs = append(fs, f)
	}
	return fs
}

// checkProxyConfigFields: fields of proxy.istio.io/config that ProxyConfig does not have.
func checkProxyConfigFields(c *docContext) []Finding {
	pc, ok := c.podAnn[annotation.ProxyConfig.Name]
	if !ok {
		return nil
	}
	var fs []Finding
	for _, u := range unknownProxyConfigFields(pc) {
		f := Finding{Path: fmt.Sprintf("%s[%q].%s", c.annPath, annotation.ProxyConfig.Name, u.path), Params: map[string]string{"field": u.path}}
		if u.suggest != "" {
			f.Params["suggestion"] = u.suggest
			if fixed, ok := renameTopField(pc, u.path, u.suggest); ok {
				f.Fix = &Fix{Steps: []Step{{Key: annotation.ProxyConfig.Name, Value: fixed}}}
			}
		}
		fs = append(fs, f)
	}
	return fs
}

// checkHoldSwallowed: hold is on, but a global values.global.proxy.lifecycle made Istio's
// template write that lifecycle instead of the postStart "pilot-agent wait".
func checkHoldSwallowed(c *docContext) []Finding {
	if c.proxy == nil || c.native || !holdRequested(c.p, c.proxy) || hasPostStartWait(c.proxy) || !globalLifecycle(c.p.install) {
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
		Fix: &Fix{Steps: []Step{{Key: annotation.SidecarNativeSidecar.Name, Value: "true"}}}}}
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
		Fix:    &Fix{Steps: []Step{{Key: annotation.SidecarNativeSidecar.Name, Value: "false"}}}}}
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
	minor, err := c.p.settings.kubernetesMinor()
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

// firstSentence is the first sentence of an annotation's description.
func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i > 0 {
		return s[:i+1]
	}
	return s
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

func hasPostStartWait(c *corev1.Container) bool {
	if c.Lifecycle == nil || c.Lifecycle.PostStart == nil || c.Lifecycle.PostStart.Exec == nil {
		return false
	}
	return slices.Equal(c.Lifecycle.PostStart.Exec.Command, []string{"pilot-agent", "wait"})
}

func globalLifecycle(in *Install) bool {
	g, _ := in.values.Map()["global"].(map[string]any)
	px, _ := g["proxy"].(map[string]any)
	lc, _ := px["lifecycle"].(map[string]any)
	return len(lc) > 0
}

func setResourceAnnotations(ann map[string]string) []string {
	var out []string
	for _, k := range resourceAnnotations {
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

type unknownField struct{ path, suggest string }

// unknownProxyConfigFields lists fields of a proxy.istio.io/config value that ProxyConfig lacks,
// walking nested messages (maps and well-known types are leaves).
func unknownProxyConfigFields(value string) []unknownField {
	var m map[string]any
	if yaml.Unmarshal([]byte(value), &m) != nil {
		return nil
	}
	var out []unknownField
	var walk func(prefix string, m map[string]any, md protoreflect.MessageDescriptor)
	walk = func(prefix string, m map[string]any, md protoreflect.MessageDescriptor) {
		names := fieldNames(md)
		for _, k := range sortedKeys(m) {
			fd := findField(md, k)
			if fd == nil {
				out = append(out, unknownField{path: prefix + k, suggest: closest(k, names)})
				continue
			}
			if sub, ok := m[k].(map[string]any); ok && fd.Kind() == protoreflect.MessageKind && !fd.IsMap() &&
				!strings.HasPrefix(string(fd.Message().FullName()), "google.protobuf.") {
				walk(prefix+k+".", sub, fd.Message())
			}
		}
	}
	walk("", m, (&meshconfig.ProxyConfig{}).ProtoReflect().Descriptor())
	return out
}

func findField(md protoreflect.MessageDescriptor, name string) protoreflect.FieldDescriptor {
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.JSONName() == name || string(fd.Name()) == name {
			return fd
		}
	}
	return nil
}

func fieldNames(md protoreflect.MessageDescriptor) []string {
	fields := md.Fields()
	out := make([]string, 0, fields.Len())
	for i := range fields.Len() {
		out = append(out, fields.Get(i).JSONName())
	}
	return out
}

// renameTopField rewrites a proxy config with one top-level field renamed, as YAML.
func renameTopField(value, from, to string) (string, bool) {
	if strings.Contains(from, ".") {
		return "", false
	}
	var m map[string]any
	if yaml.Unmarshal([]byte(value), &m) != nil {
		return "", false
	}
	m[to] = m[from]
	delete(m, from)
	b, err := yaml.Marshal(m)
	if err != nil {
		return "", false
	}
	return strings.TrimSuffix(string(b), "\n"), true
}
