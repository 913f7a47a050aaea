package engine

import (
	"context"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/sidecarlab/sidecarlab/engine/catalog"
	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/engine/lifecycle"
	"github.com/sidecarlab/sidecarlab/engine/yamldoc"
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
	Check    CheckID  `json:"check"`
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
	Steps []input.Step `json:"steps,omitempty"`
}

// CheckID is a check's stable id ("job-classic-sidecar"): the one spelling the engine reports and
// package wording words it by.
type CheckID string

// The checks' ids, in the order their findings are reported (Checks).
const (
	CheckWorkloadMetadataAnnotation      CheckID = "workload-metadata-annotation"
	CheckCronjobPodTemplateAnnotation    CheckID = "cronjob-pod-template-annotation"
	CheckUnknownIstioAnnotation          CheckID = "unknown-istio-annotation"
	CheckDeprecatedAnnotation            CheckID = "deprecated-annotation"
	CheckInjectValue                     CheckID = "inject-value"
	CheckLenientNativeSidecar            CheckID = "lenient-native-sidecar"
	CheckLenientBoolRead                 CheckID = "lenient-bool-read"
	CheckLenientBoolIgnored              CheckID = "lenient-bool-ignored"
	CheckLenientPortZero                 CheckID = "lenient-port-zero"
	CheckLenientUnchecked                CheckID = "lenient-unchecked"
	CheckUnknownProxyConfigField         CheckID = "unknown-proxy-config-field"
	CheckHoldSwallowedByGlobalLifecycle  CheckID = "hold-swallowed-by-global-lifecycle"
	CheckHoldIgnoredNativeSidecar        CheckID = "hold-ignored-native-sidecar"
	CheckJobClassicSidecar               CheckID = "job-classic-sidecar"
	CheckNativeSidecarUnsupported        CheckID = "native-sidecar-unsupported"
	CheckWebhookAutoStaysClassic         CheckID = "webhook-auto-stays-classic"
	CheckResourceAnnotationDropsDefaults CheckID = "resource-annotation-drops-defaults"
	CheckTemplateInjectedNothing         CheckID = "template-injected-nothing"
	CheckIgnoreUnknownCheck              CheckID = "ignore-unknown-check"
	CheckDuplicateKey                    CheckID = "duplicate-key"
	CheckAmbientNeedsWaypoint            CheckID = "ambient-needs-waypoint"
	CheckAmbientPolicyL4                 CheckID = "ambient-policy-l4"
)

// Check describes one of sidecarlab's pitfall checks.
type Check struct {
	ID       CheckID  `json:"id"`
	Severity Severity `json:"severity"`
}

// check is a Check with the function that looks for it in one injected document.
type check struct {
	Check
	run func(c *docContext) []Finding
}

// checks are every check, in the order their findings are reported. Each run returns findings
// with Path, Params and Fix; Check, Severity and Doc are filled in from the table. The checks
// live by topic: checks_annotations.go (where and which Istio annotations a workload carries),
// checks_lenient.go (values Istio accepts though they do not fit), checks_sidecar.go (the
// sidecar's start, native sidecars, its resources) and checks_ignore.go (the opt-out).
var checks = [...]check{
	// Params: key, kind (of the workload), readFrom (where Istio reads annotations).
	{Check{CheckWorkloadMetadataAnnotation, SeverityWarning}, checkWorkloadMetadata},
	// Params: key.
	{Check{CheckCronjobPodTemplateAnnotation, SeverityWarning}, checkCronJobTemplate},
	// Params: key; suggestion (when one is near).
	{Check{CheckUnknownIstioAnnotation, SeverityWarning}, checkUnknownAnnotation},
	// Params: key, description (the first sentence of Istio's catalog entry).
	{Check{CheckDeprecatedAnnotation, SeverityWarning}, checkDeprecated},
	// Params: value; result (injected or skipped: what Istio's fallback policy decided).
	{Check{CheckInjectValue, SeverityWarning}, checkInjectValue},
	// The lenient-* checks: a value Istio accepts though it is not what the annotation's kind
	// says, and what Istio made of it (one id per way Istio reads it, since the words differ).
	// Params: key, value.
	{Check{CheckLenientNativeSidecar, SeverityWarning}, checkLenientNative},
	// Params: key, value, read (true or false, as Istio read it).
	{Check{CheckLenientBoolRead, SeverityInfo}, checkLenientBoolRead},
	// Params: key, value, used (the installation's setting Istio used instead: true or false).
	{Check{CheckLenientBoolIgnored, SeverityWarning}, checkLenientBoolIgnored},
	// Params: key.
	{Check{CheckLenientPortZero, SeverityWarning}, checkLenientPortZero},
	// Params: key, value, kind; enum (the values, comma-separated, for an enum).
	{Check{CheckLenientUnchecked, SeverityWarning}, checkLenientUnchecked},
	// Params: field; suggestion (when one is near).
	{Check{CheckUnknownProxyConfigField, SeverityWarning}, checkProxyConfigFields},
	// No params.
	{Check{CheckHoldSwallowedByGlobalLifecycle, SeverityError}, checkHoldSwallowed},
	// No params.
	{Check{CheckHoldIgnoredNativeSidecar, SeverityInfo}, checkHoldNative},
	// No params.
	{Check{CheckJobClassicSidecar, SeverityError}, checkJobClassic},
	// Params: version (the nodes' Kubernetes version, "1.28").
	{Check{CheckNativeSidecarUnsupported, SeverityError}, checkNativeUnsupported},
	// Params: version.
	{Check{CheckWebhookAutoStaysClassic, SeverityInfo}, checkWebhookClassic},
	// Params: set (the resource annotations set, comma-separated), missing (requests.memory, …).
	{Check{CheckResourceAnnotationDropsDefaults, SeverityInfo}, checkResourceDefaults},
	// Params: cause ("template-key", "delimiters" or "": what in the mesh's config is too old).
	{Check{CheckTemplateInjectedNothing, SeverityError}, checkInjectedNothing},
	// Params: id (the name in IgnoreAnnotation that is no check's).
	{Check{CheckIgnoreUnknownCheck, SeverityWarning}, checkIgnoreIDs},
	// Params: key (the path of the key written twice), lines (where, comma-separated); value
	// (the last one's, which is kept, when it is a scalar).
	{Check{CheckDuplicateKey, SeverityWarning}, checkDuplicateKeys},
}

// Checks lists every check, in the order their findings are reported: the row's checks, then
// the waypoint checks (checks_waypoint.go).
func Checks() []Check {
	out := make([]Check, 0, len(checks)+len(waypointCheckList))
	for _, c := range checks {
		out = append(out, c.Check)
	}
	return append(out, waypointCheckList...)
}

// docContext is what every check reads of one injected document.
type docContext struct {
	p       *prepared
	catalog *catalog.Catalog
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
	// outMeta is the output pod's metadata (the pod template's, for a controller).
	outMeta *metav1.ObjectMeta
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
		skip := map[CheckID]bool{}
		for _, a := range c.ignoreAnnotations() {
			for _, id := range a.ids {
				skip[CheckID(id)] = true
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

// IsCheck says whether id is one of the checks' ids.
func IsCheck(id string) bool { return checkIDs[CheckID(id)] }

// checkIDs are the checks' ids, filled once from the table (a check in the table reads it, so
// it cannot be an initializer of its own) and only read after.
var checkIDs = map[CheckID]bool{}

func init() {
	for _, c := range Checks() {
		checkIDs[c.ID] = true
	}
}

func newDocContext(p *prepared, cat *catalog.Catalog, d Document) (*docContext, bool) {
	in, out, ok := d.objects()
	if !ok {
		return nil, false
	}
	read, _, _, ok := podParts(in)
	if !ok {
		return nil, false
	}
	_, outMeta, outSpec, ok := podParts(out)
	if !ok {
		return nil, false
	}
	c := &docContext{p: p, catalog: cat, d: d, in: in, read: read, podAnn: read.Annotations, outMeta: outMeta,
		annPath: "spec.template.metadata.annotations", specPath: "spec.template.spec"}
	switch d.Kind {
	case "Pod":
		c.annPath, c.specPath = "metadata.annotations", "spec"
	case "CronJob":
		c.annPath, c.specPath = "spec.jobTemplate.metadata.annotations", "spec.jobTemplate.spec.template.spec"
	}
	c.proxy, c.native, _ = lifecycle.ProxyContainer(outSpec)
	return c, true
}

// checkDuplicateKeys: a key written twice in one mapping of the document. Kubernetes' reader,
// and so Istio's, reads the YAML into a map: the last value wins and the others are dropped
// without a word, so the manifest does not do what its first lines say.
func checkDuplicateKeys(c *docContext) []Finding {
	var fs []Finding
	for _, d := range yamldoc.DuplicateKeys(c.d.Input) {
		lines := make([]string, len(d.Lines))
		for i, l := range d.Lines {
			lines[i] = strconv.Itoa(c.d.Line + l - 1)
		}
		params := map[string]string{"key": d.Path, "lines": strings.Join(lines, ", ")}
		if d.Scalar {
			params["value"] = d.Kept
		}
		fs = append(fs, Finding{Path: d.Path, Params: params})
	}
	return fs
}

// Location is where a finding points in the input manifest, for tools that mark a line (a CI
// annotation, an editor's gutter): lines and columns in the whole input, not the document.
type Location = yamldoc.Location

// Locate finds each finding of docs in the input: one Location per finding, in order. Each
// document with a finding is parsed once. A finding whose document is not among docs points at
// the input's first line.
func Locate(docs []Document, fs []Finding) []Location {
	out := make([]Location, len(fs))
	seen := map[int]*yamldoc.Text{}
	for i, f := range fs {
		if f.Doc < 1 || f.Doc > len(docs) {
			out[i] = Location{Line: 1, Column: 1}
			continue
		}
		d := docs[f.Doc-1]
		p, ok := seen[f.Doc]
		if !ok {
			p = yamldoc.ParseText(d.Input)
			seen[f.Doc] = p
		}
		l := p.Find(f.Path)
		l.Line += d.Line - 1
		out[i] = l
	}
	return out
}
