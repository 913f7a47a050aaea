package catalog

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"istio.io/api/annotation"
	"k8s.io/apimachinery/pkg/api/validation"
	kvalidation "k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/engine/yamldoc"

	"istio.io/istio/pkg/config/mesh"
	"istio.io/istio/pkg/kube/inject"
)

// ValueKind is the type of an annotation's value, which decides the input a person gets and which
// values the lenient-* checks remark on (Istio, not the kind, decides what is refused).
type ValueKind string

const (
	KindString   ValueKind = "string"
	KindBool     ValueKind = "bool"
	KindInteger  ValueKind = "integer"
	KindQuantity ValueKind = "quantity"  // a Kubernetes resource quantity: 100m, 128Mi
	KindPortList ValueKind = "port-list" // comma-separated ports, maybe "*"
	KindCIDRList ValueKind = "cidr-list" // comma-separated CIDRs, maybe "*"
	KindEnum     ValueKind = "enum"
	KindYAML     ValueKind = "yaml" // e.g. proxy.istio.io/config, a ProxyConfig in YAML
	KindJSON     ValueKind = "json" // a JSON object or array
)

// Group is where an annotation sits in the playground's panel.
type Group string

const (
	GroupResources Group = "resources"
	GroupProxy     Group = "proxy config"
	GroupLifecycle Group = "startup/shutdown"
	GroupTraffic   Group = "traffic capture"
	GroupInjection Group = "injection control"
	GroupLogging   Group = "logging"
	GroupProbes    Group = "probes"
	GroupOther     Group = "everything else"
)

// ResourceAnnotations are the annotations that set the proxy's CPU and memory requests and limits.
var ResourceAnnotations = []string{annotation.SidecarProxyCPU.Name, annotation.SidecarProxyCPULimit.Name, annotation.SidecarProxyMemory.Name, annotation.SidecarProxyMemoryLimit.Name}

// Groups lists the groups in panel order.
func Groups() []Group {
	return []Group{GroupResources, GroupProxy, GroupLifecycle, GroupTraffic, GroupInjection, GroupLogging, GroupProbes, GroupOther}
}

// Annotation is one pod annotation Istio reads: Istio's own catalog entry (istio.io/api/annotation)
// plus sidecarlab's typing of its value.
type Annotation struct {
	Name          string `json:"name"`
	Description   string `json:"description"`
	FeatureStatus string `json:"featureStatus"`
	Deprecated    bool   `json:"deprecated,omitempty"`
	Hidden        bool   `json:"hidden,omitempty"`
	// WrittenByInjector is set for an annotation Istio's injector writes itself (the injection
	// status): on an input it comes from an earlier injection, and a person does not add it.
	WrittenByInjector bool      `json:"writtenByInjector,omitempty"`
	Kind              ValueKind `json:"kind"`
	Enum              []string  `json:"enum,omitempty"`
	Group             Group     `json:"group"`
	// Example is a value worth trying, used to prefill the input.
	Example string `json:"example,omitempty"`
}

// typing is what sidecarlab adds to Istio's entry.
type typing struct {
	kind    ValueKind
	group   Group
	enum    []string
	example string
}

var logLevels = []string{"trace", "debug", "info", "warning", "error", "critical", "off"}

// typings gives each pod annotation of Istio's catalog its value kind and group. Names come from
// Istio's constants, so a rename upstream breaks the build rather than the playground. An
// annotation missing here is still in the catalog, as a string under "everything else".
var typings = map[string]typing{
	annotation.SidecarProxyCPU.Name:         {KindQuantity, GroupResources, nil, "200m"},
	annotation.SidecarProxyCPULimit.Name:    {KindQuantity, GroupResources, nil, "1"},
	annotation.SidecarProxyMemory.Name:      {KindQuantity, GroupResources, nil, "256Mi"},
	annotation.SidecarProxyMemoryLimit.Name: {KindQuantity, GroupResources, nil, "1Gi"},

	annotation.ProxyConfig.Name:                   {KindYAML, GroupProxy, nil, "holdApplicationUntilProxyStarts: true"},
	annotation.SidecarProxyImage.Name:             {KindString, GroupProxy, nil, "docker.io/istio/proxyv2:1.31.0"},
	annotation.SidecarProxyImageType.Name:         {KindEnum, GroupProxy, []string{"default", "debug", "distroless"}, "distroless"},
	annotation.SidecarBootstrapOverride.Name:      {KindString, GroupProxy, nil, "custom-bootstrap-config"},
	annotation.SidecarDiscoveryAddress.Name:       {KindString, GroupProxy, nil, "istiod.istio-system.svc:15012"},
	annotation.SidecarUserVolume.Name:             {KindJSON, GroupProxy, nil, `{"certs":{"secret":{"secretName":"my-certs"}}}`},
	annotation.SidecarUserVolumeMount.Name:        {KindJSON, GroupProxy, nil, `{"certs":{"mountPath":"/etc/certs","readonly":true}}`},
	annotation.SidecarStatsInclusionPrefixes.Name: {KindString, GroupProxy, nil, "cluster.outbound"},
	annotation.SidecarStatsInclusionSuffixes.Name: {KindString, GroupProxy, nil, "upstream_cx_total"},
	annotation.SidecarStatsInclusionRegexps.Name:  {KindString, GroupProxy, nil, "http.*"},
	annotation.SidecarStatsHistogramBuckets.Name:  {KindJSON, GroupProxy, nil, `{"istiocustom":[1,5,10,50,100,500,1000]}`},
	annotation.SidecarStatsFlushInterval.Name:     {KindString, GroupProxy, nil, "10s"},
	annotation.SidecarStatsEvictionInterval.Name:  {KindString, GroupProxy, nil, "60s"},
	annotation.SidecarStatsHistogramBins.Name:     {KindInteger, GroupProxy, nil, "50"},
	annotation.SidecarStatsCompression.Name:       {KindEnum, GroupProxy, []string{"brotli", "gzip", "zstd"}, "gzip"},
	annotation.SidecarExtraStatTags.Name:          {KindString, GroupProxy, nil, "request_host"},
	annotation.PrometheusMergeMetrics.Name:        {KindBool, GroupProxy, nil, "false"},

	annotation.SidecarNativeSidecar.Name: {KindBool, GroupLifecycle, nil, "true"},

	annotation.SidecarInterceptionMode.Name:               {KindEnum, GroupTraffic, []string{"REDIRECT", "TPROXY", "NONE"}, "TPROXY"},
	annotation.SidecarTrafficIncludeOutboundIPRanges.Name: {KindCIDRList, GroupTraffic, nil, "10.0.0.0/8"},
	annotation.SidecarTrafficExcludeOutboundIPRanges.Name: {KindCIDRList, GroupTraffic, nil, "169.254.169.254/32"},
	annotation.SidecarTrafficIncludeInboundPorts.Name:     {KindPortList, GroupTraffic, nil, "8080"},
	annotation.SidecarTrafficExcludeInboundPorts.Name:     {KindPortList, GroupTraffic, nil, "9090"},
	annotation.SidecarTrafficIncludeOutboundPorts.Name:    {KindPortList, GroupTraffic, nil, "5432"},
	annotation.SidecarTrafficExcludeOutboundPorts.Name:    {KindPortList, GroupTraffic, nil, "3306,6379"},
	annotation.SidecarTrafficExcludeInterfaces.Name:       {KindString, GroupTraffic, nil, "eth1"},
	annotation.SidecarTrafficKubevirtInterfaces.Name:      {KindString, GroupTraffic, nil, "net1"},
	annotation.IoIstioRerouteVirtualInterfaces.Name:       {KindString, GroupTraffic, nil, "net1"},

	annotation.SidecarInject.Name:   {KindBool, GroupInjection, nil, "false"},
	annotation.InjectTemplates.Name: {KindString, GroupInjection, nil, "sidecar"},
	annotation.SidecarStatus.Name:   {KindJSON, GroupInjection, nil, ""},
	annotation.IoIstioRev.Name:      {KindString, GroupInjection, nil, "default"},
	annotation.ProxyOverrides.Name:  {KindJSON, GroupInjection, nil, ""},

	annotation.SidecarLogLevel.Name:          {KindEnum, GroupLogging, logLevels, "debug"},
	annotation.SidecarAgentLogLevel.Name:     {KindString, GroupLogging, nil, "default:debug"},
	annotation.SidecarComponentLogLevel.Name: {KindString, GroupLogging, nil, "misc:error,upstream:debug"},

	annotation.SidecarRewriteAppHTTPProbers.Name:              {KindBool, GroupProbes, nil, "false"},
	annotation.SidecarStatusPort.Name:                         {KindInteger, GroupProbes, nil, "15021"},
	annotation.SidecarStatusReadinessInitialDelaySeconds.Name: {KindInteger, GroupProbes, nil, "5"},
	annotation.SidecarStatusReadinessPeriodSeconds.Name:       {KindInteger, GroupProbes, nil, "5"},
	annotation.SidecarStatusReadinessFailureThreshold.Name:    {KindInteger, GroupProbes, nil, "10"},
	annotation.SidecarStatusReadinessApplicationPorts.Name:    {KindPortList, GroupProbes, nil, "8080"},
}

// Catalog is every annotation of Istio's catalog that applies to pods, typed.
type Catalog struct {
	all    []Annotation
	byName map[string]*Annotation
}

// DefaultCatalog is the catalog of the Istio compiled in. It is built once, on first use, and
// shared: the engine validates against it, and the panel, the API and the CLI list it.
func DefaultCatalog() *Catalog { return defaultCatalog() }

var defaultCatalog = sync.OnceValue(newCatalog)

// newCatalog builds the catalog from Istio's annotation list.
func newCatalog() *Catalog {
	c := &Catalog{byName: map[string]*Annotation{}}
	for _, in := range annotation.AllResourceAnnotations() {
		if !appliesToPods(in) {
			continue
		}
		t, ok := typings[in.Name]
		if !ok {
			t = typing{kind: KindString, group: GroupOther}
		}
		c.all = append(c.all, Annotation{
			Name: in.Name, Description: strings.TrimSpace(in.Description), FeatureStatus: in.FeatureStatus.String(),
			Deprecated: in.Deprecated, Hidden: in.Hidden, Kind: t.kind, Enum: t.enum, Group: t.group, Example: t.example,
			WrittenByInjector: in.Name == annotation.SidecarStatus.Name,
		})
	}
	groups := Groups()
	slices.SortFunc(c.all, func(a, b Annotation) int {
		if d := slices.Index(groups, a.Group) - slices.Index(groups, b.Group); d != 0 {
			return d
		}
		return strings.Compare(a.Name, b.Name)
	})
	for i := range c.all {
		c.byName[c.all[i].Name] = &c.all[i]
	}
	return c
}

func appliesToPods(in *annotation.Instance) bool {
	for _, r := range in.Resources {
		if r == annotation.Pod || r == annotation.Any {
			return true
		}
	}
	return false
}

// All returns the catalog in panel order (by group, then name). Callers must not modify it.
func (c *Catalog) All() []Annotation { return c.all }

// Lookup finds an annotation by its exact name.
func (c *Catalog) Lookup(name string) (Annotation, bool) {
	a, ok := c.byName[name]
	if !ok {
		return Annotation{}, false
	}
	return *a, true
}

// ValidateStep refuses a step only where Kubernetes or Istio itself would refuse it: a key that
// is not a valid annotation key, a value Istio's own validator for the annotation
// (inject.AnnotationValidation) rejects, with Istio's message, and the two bounds that protect
// the server (see SizeError). A value Istio takes leniently ("no", "TRUE", port 0)
// runs, and the lenient-* checks say what Istio made of it: never refuse what Istio accepts.
func (c *Catalog) ValidateStep(s input.Step) error {
	if err := c.StepBounds(s); err != nil || s.Remove {
		return err
	}
	return istioRefusal(s.Key, s.Value)
}

// StepBounds refuses what no manifest could carry — a key Kubernetes refuses, a value beyond the
// bounds (SizeError) — and nothing Istio is to judge: what Options.StepsAsWritten
// checks before the injection.
func (c *Catalog) StepBounds(s input.Step) error {
	// Kubernetes checks keys lower-cased (apimachinery's ValidateAnnotations), so a capital letter
	// in a key is no reason to refuse it.
	if errs := kvalidation.IsQualifiedName(strings.ToLower(s.Key)); len(errs) > 0 {
		return &input.Error{Field: "annotation " + strconv.Quote(s.Key), ID: "annotation-key",
			Params: input.Params("errors", strings.Join(errs, "; "))}
	}
	if s.Remove {
		return nil
	}
	if err := SizeError(s.Key, s.Value); err != nil {
		err.Field = "annotation " + strconv.Quote(s.Key)
		return err
	}
	return nil
}

// ValidateValue refuses a value Istio refuses (with the message Istio's injector gives for it)
// or one beyond the server's bounds; every other value is Istio's to read as it does.
func (c *Catalog) ValidateValue(key, value string) error {
	if err := SizeError(key, value); err != nil {
		err.Field = "annotation " + strconv.Quote(key)
		return err
	}
	return istioRefusal(key, value)
}

// istioRefusal is the error Istio's injector fails a pod with for the annotation's value, or nil.
func istioRefusal(key, value string) error {
	if key == annotation.ProxyConfig.Name {
		// The injector reads the proxy config (mesh.ApplyProxyConfig) before it validates the
		// annotations, so a value that does not parse fails with the reader's message, not the
		// validator's ("failed to convert to apply proxy config: …").
		if _, err := mesh.MergeProxyConfig(value, mesh.DefaultProxyConfig()); err != nil {
			return &input.Error{Field: "annotation " + strconv.Quote(key), Msg: yamldoc.Clip(err.Error())}
		}
	}
	if v, ok := inject.AnnotationValidation[key]; ok {
		if err := v(value); err != nil {
			// Istio's words, as its injector fails a pod with them (validateAnnotations), with the
			// echoed value bounded.
			return &input.Error{Field: "annotation " + strconv.Quote(key), Msg: fmt.Sprintf("invalid value '%s' for annotation '%s': %s", yamldoc.Clip(value), key, yamldoc.Clip(err.Error()))}
		}
	}
	return nil
}

// FitsKind says whether value is what the annotation's kind describes: "true" or "false", a
// whole number, one of the enum, ports from 1 to 65535 (or "*"), JSON, a YAML map. It refuses
// nothing (Istio decides what it accepts); the lenient-* checks read it to say what Istio made
// of a value that does not fit.
func FitsKind(a Annotation, value string) bool {
	switch a.Kind {
	case KindBool:
		return value == "true" || value == "false"
	case KindInteger:
		_, err := strconv.ParseUint(value, 10, 32)
		return err == nil
	case KindEnum:
		return slices.Contains(a.Enum, value)
	case KindPortList:
		if value == "*" || value == "" {
			return true
		}
		for _, p := range strings.Split(value, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(p))
			if err != nil || n < 1 || n > 65535 {
				return false
			}
		}
	case KindJSON:
		return json.Valid([]byte(value))
	case KindYAML:
		var v map[string]any
		return yaml.Unmarshal([]byte(value), &v) == nil
	}
	return true
}

// maxQuantityLen bounds a resource quantity's text: no real quantity is longer, and parsing a
// huge one is slow enough to stall a server (a 900 KB number took 37 s).
const maxQuantityLen = 64

// SizeError applies the two bounds that protect the server, the only refusals that are
// not Istio's (docs/playground.md, "Limits"): Kubernetes' own limit on annotations (256 KiB in all), and 64
// characters for the resource annotations Istio parses as quantities.
func SizeError(key, value string) *input.Error {
	if len(key)+len(value) > validation.TotalAnnotationSizeLimitB {
		return &input.Error{ID: "annotation-too-large", Params: input.Params("size", strconv.Itoa(len(value)), "max", strconv.Itoa(validation.TotalAnnotationSizeLimitB))}
	}
	if slices.Contains(ResourceAnnotations, key) && len(value) > maxQuantityLen {
		return &input.Error{ID: "quantity-too-long", Params: input.Params("size", strconv.Itoa(len(value)), "max", strconv.Itoa(maxQuantityLen))}
	}
	return nil
}

// Names are the catalog's annotation names.
func (c *Catalog) Names() []string {
	out := make([]string, 0, len(c.all))
	for _, a := range c.all {
		out = append(out, a.Name)
	}
	sort.Strings(out)
	return out
}
