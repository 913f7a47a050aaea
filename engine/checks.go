package engine

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"istio.io/api/annotation"
	meshconfig "istio.io/api/mesh/v1alpha1"
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
type Finding struct {
	// Check is the check's stable id, e.g. "job-classic-sidecar".
	Check    string   `json:"check"`
	Severity Severity `json:"severity"`
	// Doc is the 1-based document; Path the field it concerns.
	Doc     int    `json:"doc"`
	Path    string `json:"path,omitempty"`
	Message string `json:"message"`
	Fix     *Fix   `json:"fix,omitempty"`
}

// Fix is what would repair a finding: a text, and where it can be done in one click, the
// annotation steps to add.
type Fix struct {
	Text  string `json:"text"`
	Steps []Step `json:"steps,omitempty"`
}

// String renders a finding on one line, as the CLI prints it.
func (f Finding) String() string {
	s := fmt.Sprintf("%s [%s] document %d", f.Severity, f.Check, f.Doc)
	if f.Path != "" {
		s += " " + f.Path
	}
	s += ": " + f.Message
	if f.Fix != nil {
		s += " Fix: " + f.Fix.Text
	}
	return s
}

// Checks lists every check id with a one-line summary.
var Checks = []struct{ ID, Summary string }{
	{"workload-metadata-annotation", "Istio annotation on the workload's own metadata, which Istio never reads"},
	{"cronjob-pod-template-annotation", "CronJob annotation on the pod template; kube-inject reads spec.jobTemplate.metadata"},
	{"unknown-istio-annotation", "an annotation under an Istio prefix that Istio does not know"},
	{"unknown-proxy-config-field", "a field of proxy.istio.io/config that ProxyConfig does not have"},
	{"hold-swallowed-by-global-lifecycle", "holdApplicationUntilProxyStarts without its postStart, because a global proxy lifecycle replaced it"},
	{"hold-ignored-native-sidecar", "holdApplicationUntilProxyStarts with a native sidecar, which starts first anyway"},
	{"job-classic-sidecar", "a Job or CronJob with a classic sidecar: the pod never completes"},
	{"native-sidecar-unsupported", "a native sidecar on Kubernetes older than 1.29"},
	{"webhook-auto-stays-classic", "the webhook's auto mode keeps classic sidecars on nodes older than 1.33"},
	{"deprecated-annotation", "an annotation Istio's catalog marks deprecated"},
	{"inject-value", "sidecar.istio.io/inject with a value other than \"true\" or \"false\""},
	{"resource-annotation-drops-defaults", "one resource annotation drops the proxy's other default requests and limits"},
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

// check runs every check on a row of a request.
func (e *Engine) check(p *prepared, docs []Document) []Finding {
	var out []Finding
	for _, d := range docs {
		if in, res, ok := d.objects(); ok {
			out = append(out, e.checkDocument(p, d, in, res)...)
		}
	}
	return out
}

func (e *Engine) checkDocument(p *prepared, d Document, in, out runtime.Object) []Finding {
	var fs []Finding
	add := func(f Finding) {
		f.Doc = d.Index
		fs = append(fs, f)
	}
	readMeta, _, _, ok := podParts(in)
	if !ok {
		return nil
	}
	_, _, outSpec, ok := podParts(out)
	if !ok {
		return nil
	}
	podAnn := readMeta.Annotations
	annPath, specPath := "spec.template.metadata.annotations", "spec.template.spec"
	switch d.Kind {
	case "Pod":
		annPath, specPath = "metadata.annotations", "spec"
	case "CronJob":
		annPath, specPath = "spec.jobTemplate.metadata.annotations", "spec.jobTemplate.spec.template.spec"
	}

	// Annotations on the workload's own metadata.
	if d.Kind != "Pod" {
		if own := objectMeta(in); own != nil {
			for _, k := range sortedKeys(own.Annotations) {
				if !hasIstioPrefix(k) || injectorWritten[k] {
					continue
				}
				if _, also := podAnn[k]; also {
					continue
				}
				add(Finding{Check: "workload-metadata-annotation", Severity: SeverityWarning, Path: fmt.Sprintf("metadata.annotations[%q]", k),
					Message: fmt.Sprintf("%s is on the %s's own metadata; Istio reads annotations only from %s, so it has no effect.", k, d.Kind, annPath),
					Fix:     &Fix{Text: "Move it to the pod template.", Steps: []Step{{Key: k, Value: own.Annotations[k]}}}})
			}
		}
	}
	// CronJob: annotations on the pod template are not where kube-inject reads.
	if d.Kind == "CronJob" {
		_, tmpl, _, _ := podParts(in)
		for _, k := range sortedKeys(tmpl.Annotations) {
			if !hasIstioPrefix(k) || injectorWritten[k] {
				continue
			}
			if _, also := podAnn[k]; also {
				continue
			}
			add(Finding{Check: "cronjob-pod-template-annotation", Severity: SeverityWarning, Path: fmt.Sprintf("spec.jobTemplate.spec.template.metadata.annotations[%q]", k),
				Message: fmt.Sprintf("For a CronJob, istioctl kube-inject reads annotations from spec.jobTemplate.metadata, so %s on the pod template has no effect here (the in-cluster webhook, which sees the Pod, would read it).", k),
				Fix:     &Fix{Text: "Set it on spec.jobTemplate.metadata, where kube-inject reads it.", Steps: []Step{{Key: k, Value: tmpl.Annotations[k]}}}})
		}
	}

	for _, k := range sortedKeys(podAnn) {
		v := podAnn[k]
		path := fmt.Sprintf("%s[%q]", annPath, k)
		// Unknown annotations under Istio's prefixes.
		if hasIstioPrefix(k) && !knownAnnotations[k] {
			f := Finding{Check: "unknown-istio-annotation", Severity: SeverityWarning, Path: path,
				Message: fmt.Sprintf("%s is not an annotation Istio knows; Istio ignores it without a word.", k)}
			if m := closest(k, e.catalog.names()); m != "" {
				f.Message += fmt.Sprintf(" Did you mean %s?", m)
				f.Fix = &Fix{Text: "Use " + m + ".", Steps: []Step{{Key: k, Remove: true}, {Key: m, Value: v}}}
			}
			add(f)
		}
		if a, ok := e.catalog.Lookup(k); ok && a.Deprecated {
			f := Finding{Check: "deprecated-annotation", Severity: SeverityWarning, Path: path,
				Message: fmt.Sprintf("%s is deprecated in Istio's catalog: %s", k, firstSentence(a.Description))}
			if k == annotation.SidecarInject.Name {
				f.Fix = &Fix{Text: "Use the sidecar.istio.io/inject label on the pod template instead."}
			}
			add(f)
		}
	}
	// sidecar.istio.io/inject values: the label wins over the annotation, as in Istio.
	injectVal, injectFrom := podAnn[annotation.SidecarInject.Name], annPath
	if l, ok := readMeta.Labels["sidecar.istio.io/inject"]; ok {
		injectVal, injectFrom = l, strings.Replace(annPath, "annotations", "labels", 1)
	}
	if injectVal != "" && injectVal != "true" && injectVal != "false" {
		add(Finding{Check: "inject-value", Severity: SeverityWarning, Path: fmt.Sprintf("%s[%q]", injectFrom, "sidecar.istio.io/inject"),
			Message: fmt.Sprintf("sidecar.istio.io/inject is %q; Istio accepts only \"true\" and \"false\" and falls back to the default policy (here: inject).", injectVal),
			Fix:     &Fix{Text: "Write \"true\" or \"false\"."}})
	}
	// Unknown fields of proxy.istio.io/config.
	if pc, ok := podAnn[annotation.ProxyConfig.Name]; ok {
		for _, u := range unknownProxyConfigFields(pc) {
			f := Finding{Check: "unknown-proxy-config-field", Severity: SeverityWarning, Path: fmt.Sprintf("%s[%q].%s", annPath, annotation.ProxyConfig.Name, u.path),
				Message: fmt.Sprintf("ProxyConfig has no field %q; Istio ignores it without a word.", u.path)}
			if u.suggest != "" {
				f.Message += fmt.Sprintf(" Did you mean %q?", u.suggest)
				if fixed, ok := renameTopField(pc, u.path, u.suggest); ok {
					f.Fix = &Fix{Text: "Use " + u.suggest + ".", Steps: []Step{{Key: annotation.ProxyConfig.Name, Value: fixed}}}
				}
			}
			add(f)
		}
	}

	proxy, native, _ := proxyContainer(outSpec)
	if proxy != nil {
		hold := e.holdRequested(p, proxy)
		if hold && !native && !hasPostStartWait(proxy) && globalLifecycle(p.install) {
			add(Finding{Check: "hold-swallowed-by-global-lifecycle", Severity: SeverityError, Path: specPath + ".containers[istio-proxy].lifecycle",
				Message: "holdApplicationUntilProxyStarts is on, but values.global.proxy.lifecycle is set, and Istio's template then writes that lifecycle instead of the postStart \"pilot-agent wait\": the app can start before the proxy is ready.",
				Fix:     &Fix{Text: "Add the wait to the global lifecycle in the IstioOperator: values.global.proxy.lifecycle.postStart.exec.command: [pilot-agent, wait], next to your preStop."}})
		}
		if hold && native {
			add(Finding{Check: "hold-ignored-native-sidecar", Severity: SeverityInfo, Path: specPath + ".initContainers[istio-proxy]",
				Message: "holdApplicationUntilProxyStarts has no effect on a native sidecar: the kubelet starts istio-proxy, an init container with restartPolicy Always, before the app containers anyway (and Istio adds no postStart)."})
		}
		if (d.Kind == "Job" || d.Kind == "CronJob") && !native {
			add(Finding{Check: "job-classic-sidecar", Severity: SeverityError, Path: specPath + ".containers[istio-proxy]",
				Message: "This Job's pod gets istio-proxy as a regular container, which keeps running after the job's work ends, so the pod never completes. The old workaround — calling the agent's /quitquitquit at the end of the job's script — never runs when the job fails.",
				Fix:     &Fix{Text: "Inject a native sidecar (Kubernetes ≥ 1.29).", Steps: []Step{{Key: annotation.SidecarNativeSidecar.Name, Value: "true"}}}})
		}
		if p.settings.mode() == ModeWebhook {
			v := p.settings.KubernetesVersion
			if v == "" {
				v = DefaultKubernetesVersion
			}
			minor, _ := parseKubernetesVersion(v)
			if native && minor < 29 {
				add(Finding{Check: "native-sidecar-unsupported", Severity: SeverityError, Path: specPath + ".initContainers[istio-proxy].restartPolicy",
					Message: fmt.Sprintf("Native sidecars (init containers with restartPolicy Always) need Kubernetes 1.29 or later; on 1.%d the API server rejects or ignores restartPolicy and the pod does not start as intended.", minor),
					Fix:     &Fix{Text: "Opt out of native sidecars on this cluster.", Steps: []Step{{Key: annotation.SidecarNativeSidecar.Name, Value: "false"}}}})
			}
			if !native && minor < 33 && podAnn[annotation.SidecarNativeSidecar.Name] != "false" {
				add(Finding{Check: "webhook-auto-stays-classic", Severity: SeverityInfo, Path: specPath + ".containers[istio-proxy]",
					Message: fmt.Sprintf("Istio's webhook in its default auto mode uses native sidecars only when every node runs Kubernetes 1.33 or later; with 1.%d nodes it stays classic.", minor)})
			}
		}
		if set := setResourceAnnotations(podAnn); len(set) > 0 {
			missing := missingResources(proxy)
			if len(missing) > 0 {
				add(Finding{Check: "resource-annotation-drops-defaults", Severity: SeverityInfo, Path: specPath + ".containers[istio-proxy].resources",
					Message: fmt.Sprintf("With %s set, Istio's template emits only the annotated resources: istio-proxy has no %s now (the defaults are dropped, not kept).", strings.Join(set, ", "), strings.Join(missing, ", "))})
			}
		}
	}
	return fs
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i > 0 {
		return s[:i+1]
	}
	return s
}

func (e *Engine) holdRequested(p *prepared, proxy *corev1.Container) bool {
	if p.install.mesh.GetDefaultConfig().GetHoldApplicationUntilProxyStarts().GetValue() {
		return true
	}
	if v, _ := p.install.values.Map()["global"].(map[string]any); v != nil {
		if px, _ := v["proxy"].(map[string]any); px != nil {
			if h, _ := px["holdApplicationUntilProxyStarts"].(bool); h {
				return true
			}
		}
	}
	for _, env := range proxy.Env {
		if env.Name == "PROXY_CONFIG" {
			var pc struct {
				Hold *bool `json:"holdApplicationUntilProxyStarts"`
			}
			if json.Unmarshal([]byte(env.Value), &pc) == nil && pc.Hold != nil {
				return *pc.Hold
			}
		}
	}
	return false
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

// closest returns the candidate nearest to s by edit distance (case-insensitive), if it is near
// enough to be a likely typo.
func closest(s string, candidates []string) string {
	best, bestD := "", 1<<30
	ls := strings.ToLower(s)
	for _, c := range candidates {
		d := levenshtein(ls, strings.ToLower(c))
		if d < bestD || (d == bestD && c < best) {
			best, bestD = c, d
		}
	}
	if bestD <= max(2, len(s)/5) {
		return best
	}
	return ""
}

func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// names are the catalog's annotation names.
func (c *Catalog) names() []string {
	out := make([]string, 0, len(c.all))
	for _, a := range c.all {
		out = append(out, a.Name)
	}
	sort.Strings(out)
	return out
}
