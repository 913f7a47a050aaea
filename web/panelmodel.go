package web

import (
	"maps"
	"slices"
	"strings"

	"istio.io/api/annotation"

	"github.com/sidecarlab/sidecarlab/engine/catalog"
	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/i18n"
)

// openGroups start expanded in the annotation panel.
var openGroups = []catalog.Group{catalog.GroupResources, catalog.GroupProxy, catalog.GroupLifecycle}

// ActiveAnnotations is what the steps leave set, in the order each key was first set.
func ActiveAnnotations(steps []input.Step) []ActiveAnnotation {
	var out []ActiveAnnotation
	for _, s := range steps {
		i := slices.IndexFunc(out, func(a ActiveAnnotation) bool { return a.Key == s.Key })
		switch {
		case s.Remove && i >= 0:
			out = slices.Delete(out, i, i+1)
		case !s.Remove && i >= 0:
			out[i].Value = s.Value
		case !s.Remove:
			out = append(out, ActiveAnnotation{Key: s.Key, Value: s.Value})
		}
	}
	return out
}

// AnnotationGroups lays the catalog out as the panel: grouped, typed, prefilled with an example.
// It does not depend on the state, so actions never need to re-render it. Istio's hidden
// annotations, and the one its injector writes itself (the status), are left out of the panel
// (the API lists them).
//
// The lab's annotations come first, in a group of their own (labPanel); proxy.istio.io/config
// gets its typed editor. What the search matches is searchText.
func PanelGroups(cat *catalog.Catalog) []AnnotationGroup {
	lab := AnnotationGroup{Name: labGroup, Open: true}
	for _, name := range labPanel {
		if a, ok := cat.Lookup(name); ok && !a.Hidden {
			it := annotationItem(a)
			if s := labSummaries[name]; s != "" {
				it.Summary = "lab.panel.summary." + s // ours, shown in the reader's language
			}
			lab.Items = append(lab.Items, it)
		}
	}
	groups := []AnnotationGroup{lab}
	for _, g := range catalog.Groups() {
		wg := AnnotationGroup{Name: string(g), Open: slices.Contains(openGroups, g)}
		for _, a := range cat.All() {
			if a.Group != g || a.Hidden || a.WrittenByInjector || slices.Contains(labPanel, a.Name) {
				continue
			}
			wg.Items = append(wg.Items, annotationItem(a))
		}
		if len(wg.Items) > 0 {
			groups = append(groups, wg)
		}
	}
	return groups
}

// annotationItem is one annotation as the panel shows it: typed input, prefilled with an example.
func annotationItem(a catalog.Annotation) AnnotationItem {
	val := a.Example
	it := AnnotationItem{Name: a.Name, Description: a.Description, FeatureStatus: a.FeatureStatus, Kind: string(a.Kind), Deprecated: a.Deprecated,
		Field: "v:" + a.Name, Value: val, Input: "text"}
	if a.Name == annotation.ProxyConfig.Name {
		it.ConfigFields = ConfigFields()
	}
	it.Search = searchText(a, it)
	switch a.Kind {
	case catalog.KindBool:
		it.Input = "select"
		for _, o := range []string{"true", "false"} {
			it.Options = append(it.Options, Option{Value: o, Label: o, Selected: o == val})
		}
	case catalog.KindEnum:
		it.Input = "select"
		for _, o := range a.Enum {
			it.Options = append(it.Options, Option{Value: o, Label: o, Selected: o == val})
		}
	case catalog.KindYAML, catalog.KindJSON:
		it.Input = "textarea"
	}
	return it
}

// labGroup is the panel's first group: the annotations the lab works through (DESIGN, lab
// workflow 2). They move there from their own groups, so each annotation is in the panel once.
const labGroup = "lab"

// groupNames are the panel's groups' names in the catalogs, by the group: the lab's and the
// catalog's (catalog.Groups).
var groupNames = map[string]string{
	labGroup:                       "lab.panel.group.lab",
	string(catalog.GroupResources): "lab.panel.group.resources",
	string(catalog.GroupProxy):     "lab.panel.group.proxy-config",
	string(catalog.GroupLifecycle): "lab.panel.group.lifecycle",
	string(catalog.GroupTraffic):   "lab.panel.group.traffic",
	string(catalog.GroupInjection): "lab.panel.group.injection",
	string(catalog.GroupLogging):   "lab.panel.group.logging",
	string(catalog.GroupProbes):    "lab.panel.group.probes",
	string(catalog.GroupOther):     "lab.panel.group.everything-else",
}

// labPanel are the lab group's annotations, in the lab's order. Hold is set through
// proxy.istio.io/config (its typed editor has holdApplicationUntilProxyStarts).
var labPanel = []string{
	annotation.SidecarProxyCPU.Name, annotation.SidecarProxyCPULimit.Name,
	annotation.SidecarProxyMemory.Name, annotation.SidecarProxyMemoryLimit.Name,
	annotation.ProxyConfig.Name,
	annotation.SidecarTrafficExcludeOutboundPorts.Name,
	annotation.SidecarInject.Name,
	annotation.SidecarNativeSidecar.Name,
}

// labSummaries are the ids of the lab's annotations' summaries in the catalogs
// (lab.panel.summary.ID): ours, in the reader's language, beside Istio's English description.
var labSummaries = map[string]string{
	annotation.SidecarProxyCPU.Name:                    "proxyCPU",
	annotation.SidecarProxyCPULimit.Name:               "proxyCPULimit",
	annotation.SidecarProxyMemory.Name:                 "proxyMemory",
	annotation.SidecarProxyMemoryLimit.Name:            "proxyMemoryLimit",
	annotation.ProxyConfig.Name:                        "config",
	annotation.SidecarTrafficExcludeOutboundPorts.Name: "excludeOutboundPorts",
	annotation.SidecarInject.Name:                      "inject",
	annotation.SidecarNativeSidecar.Name:               "nativeSidecar",
}

// searchTopics are what a learner looks for in the panel besides a key or a description: each
// topic's words are in the catalogs, one list per language (lab.panel.words.TOPIC), and a topic
// finds the annotations listed here. So "startup", 起動 and 시작 all find hold (set in
// proxy.istio.io/config) and the native sidecar, and ポート or 포트 the port lists.
var searchTopics = map[string][]string{
	"startup":  {annotation.ProxyConfig.Name, annotation.SidecarNativeSidecar.Name},
	"hold":     {annotation.ProxyConfig.Name},
	"shutdown": {annotation.ProxyConfig.Name, annotation.SidecarNativeSidecar.Name},
	"job":      {annotation.SidecarNativeSidecar.Name},
	"ports": {
		annotation.SidecarTrafficExcludeInboundPorts.Name, annotation.SidecarTrafficExcludeOutboundPorts.Name,
		annotation.SidecarTrafficIncludeInboundPorts.Name, annotation.SidecarTrafficIncludeOutboundPorts.Name,
		annotation.SidecarStatusReadinessApplicationPorts.Name, annotation.SidecarStatusPort.Name,
	},
	"bypass": {
		annotation.SidecarTrafficExcludeInboundPorts.Name, annotation.SidecarTrafficExcludeOutboundPorts.Name,
		annotation.SidecarTrafficExcludeOutboundIPRanges.Name, annotation.SidecarTrafficExcludeInterfaces.Name,
	},
	"capture": {
		annotation.SidecarTrafficIncludeInboundPorts.Name, annotation.SidecarTrafficIncludeOutboundPorts.Name,
		annotation.SidecarTrafficIncludeOutboundIPRanges.Name, annotation.SidecarInterceptionMode.Name,
	},
	"ip-ranges": {annotation.SidecarTrafficExcludeOutboundIPRanges.Name, annotation.SidecarTrafficIncludeOutboundIPRanges.Name},
	"resources": {
		annotation.SidecarProxyCPU.Name, annotation.SidecarProxyCPULimit.Name,
		annotation.SidecarProxyMemory.Name, annotation.SidecarProxyMemoryLimit.Name,
	},
	"cpu":       {annotation.SidecarProxyCPU.Name, annotation.SidecarProxyCPULimit.Name},
	"memory":    {annotation.SidecarProxyMemory.Name, annotation.SidecarProxyMemoryLimit.Name},
	"disable":   {annotation.SidecarInject.Name},
	"injection": {annotation.SidecarInject.Name, annotation.IoIstioRev.Name, annotation.InjectTemplates.Name},
	"revision":  {annotation.IoIstioRev.Name},
	"logging":   {annotation.SidecarAgentLogLevel.Name, annotation.SidecarComponentLogLevel.Name, annotation.SidecarLogLevel.Name},
	"image":     {annotation.SidecarProxyImage.Name, annotation.SidecarProxyImageType.Name},
	"probes": {
		annotation.SidecarStatusReadinessApplicationPorts.Name, annotation.SidecarStatusReadinessFailureThreshold.Name,
		annotation.SidecarStatusReadinessInitialDelaySeconds.Name, annotation.SidecarStatusReadinessPeriodSeconds.Name,
		annotation.SidecarRewriteAppHTTPProbers.Name, annotation.SidecarStatusPort.Name,
	},
	"metrics": {
		annotation.PrometheusMergeMetrics.Name, annotation.SidecarExtraStatTags.Name,
		annotation.SidecarStatsCompression.Name, annotation.SidecarStatsEvictionInterval.Name,
		annotation.SidecarStatsFlushInterval.Name, annotation.SidecarStatsHistogramBins.Name,
		annotation.SidecarStatsHistogramBuckets.Name, annotation.SidecarStatsInclusionPrefixes.Name,
		annotation.SidecarStatsInclusionRegexps.Name, annotation.SidecarStatsInclusionSuffixes.Name,
	},
	"volumes": {annotation.SidecarUserVolume.Name, annotation.SidecarUserVolumeMount.Name},
}

// searchText is what the panel's search matches for an annotation, lower case: its key, Istio's
// description, the config editor's field names, and — in every language sidecarlab speaks, so
// that a word finds it whichever language the page is in — its group's name, our summary and
// the words of its topics. The page's script filters on the same text (data-search), so the
// search with and without JavaScript agree.
func searchText(a catalog.Annotation, it AnnotationItem) string {
	parts := []string{a.Name, a.Description}
	for _, f := range it.ConfigFields {
		parts = append(parts, f.Name)
	}
	var ids []string
	if id, ok := groupNames[string(a.Group)]; ok {
		ids = append(ids, id)
	}
	if s := labSummaries[a.Name]; s != "" {
		ids = append(ids, "lab.panel.summary."+s)
	}
	for _, topic := range slices.Sorted(maps.Keys(searchTopics)) {
		if slices.Contains(searchTopics[topic], a.Name) {
			ids = append(ids, "lab.panel.words."+topic)
		}
	}
	for _, code := range i18n.Codes {
		l := i18n.For(code)
		for _, id := range ids {
			parts = append(parts, l.T(id))
		}
	}
	return strings.ToLower(strings.Join(parts, " "))
}

// MaxQuery bounds the search words a link or form may carry.
const MaxQuery = 200

// SearchTerms splits a query into lower-case words; every word must match.
func SearchTerms(q string) []string {
	if len(q) > MaxQuery {
		q = q[:MaxQuery]
	}
	return strings.Fields(strings.ToLower(q))
}

// matches says whether an item's search text holds every term.
func matches(search string, terms []string) bool {
	for _, t := range terms {
		if !strings.Contains(search, t) {
			return false
		}
	}
	return true
}

// FilterGroups keeps the items that match every term, and the groups that keep any; a filtered
// panel opens every group it shows.
func FilterGroups(groups []AnnotationGroup, q string) []AnnotationGroup {
	terms := SearchTerms(q)
	if len(terms) == 0 {
		return groups
	}
	var out []AnnotationGroup
	for _, g := range groups {
		var items []AnnotationItem
		for _, it := range g.Items {
			if matches(it.Search, terms) {
				items = append(items, it)
			}
		}
		if len(items) > 0 {
			out = append(out, AnnotationGroup{Name: g.Name, Items: items, Open: true})
		}
	}
	return out
}

// ConfigFields are the proxy.istio.io/config editor's rows, from Istio's ProxyConfig schema.
func ConfigFields() []ConfigField {
	var out []ConfigField
	for _, f := range catalog.ProxyConfigFields() {
		cf := ConfigField{Name: f.Name, Kind: string(f.Kind), Type: f.Type, Doc: ParseDoc(f.Doc), Field: "pc:" + f.Name, Input: "text"}
		switch f.Kind {
		case catalog.KindBool:
			cf.Input = "select"
			for _, o := range []string{"true", "false"} {
				cf.Options = append(cf.Options, Option{Value: o, Label: o, Selected: o == "true"})
			}
		case catalog.KindEnum:
			cf.Input = "select"
			for _, o := range f.Enum {
				cf.Options = append(cf.Options, Option{Value: o, Label: o})
			}
		case catalog.KindInteger, catalog.KindNumber:
			cf.Input, cf.Placeholder = "number", "2"
		case catalog.KindDuration:
			cf.Placeholder = "30s"
		case catalog.KindYAML:
			cf.Input, cf.Placeholder = "textarea", "YAML"
		}
		out = append(out, cf)
	}
	return out
}

// GroupMessage is the catalogs' message id of a panel group's name (the lab's or one of the
// catalog's groups), and whether it has one.
func GroupMessage(name string) (id string, ok bool) {
	id, ok = groupNames[name]
	return id, ok
}
