package engine

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

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
