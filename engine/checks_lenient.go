package engine

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"istio.io/api/annotation"

	"github.com/sidecarlab/sidecarlab/engine/catalog"
	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/engine/yamldoc"

	"istio.io/istio/pkg/kube/inject"
)

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
