package handlers

import (
	"bytes"
	"context"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/a-h/templ"
	"istio.io/api/annotation"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/catalog"
	"github.com/sidecarlab/sidecarlab/engine/diff"
	"github.com/sidecarlab/sidecarlab/engine/input"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/web"
)

// openGroups start expanded in the annotation panel.
var openGroups = []catalog.Group{catalog.GroupResources, catalog.GroupProxy, catalog.GroupLifecycle}

// renderPanel renders the catalog part of the annotation panel to HTML once per language: the
// server keeps the full panel for the life of the process (the catalog is Istio's, compiled in),
// and a search renders its filtered groups the same way.
func renderPanel(groups []web.AnnotationGroup) templ.Component {
	return &panelMemo{groups: groups, html: map[string]templ.Component{}}
}

// panelMemo is the panel rendered to HTML, once per language the pages are read in: at most one
// render per language sidecarlab speaks (i18n.Codes), so it is bounded.
type panelMemo struct {
	groups []web.AnnotationGroup
	mu     sync.Mutex
	html   map[string]templ.Component // by language code
}

// Render writes the panel in the language of ctx, rendering it the first time.
func (m *panelMemo) Render(ctx context.Context, w io.Writer) error {
	return m.in(i18n.FromContext(ctx)).Render(ctx, w)
}

func (m *panelMemo) in(l *i18n.Localizer) templ.Component {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.html[l.Lang()]; ok {
		return c
	}
	groups := make([]web.AnnotationGroup, len(m.groups))
	for i, g := range m.groups {
		if id, ok := groupNames[g.Name]; ok {
			g.Name = l.T(id)
		}
		groups[i] = g
	}
	var buf bytes.Buffer
	if err := web.AnnotationGroups(groups).Render(i18n.NewContext(context.Background(), l), &buf); err != nil {
		return web.AnnotationGroups(groups)
	}
	c := templ.Raw(buf.String())
	m.html[l.Lang()] = c
	return c
}

// activeAnnotations is what the steps leave set, in the order each key was first set.
func activeAnnotations(steps []input.Step) []web.ActiveAnnotation {
	var out []web.ActiveAnnotation
	for _, s := range steps {
		i := slices.IndexFunc(out, func(a web.ActiveAnnotation) bool { return a.Key == s.Key })
		switch {
		case s.Remove && i >= 0:
			out = slices.Delete(out, i, i+1)
		case !s.Remove && i >= 0:
			out[i].Value = s.Value
		case !s.Remove:
			out = append(out, web.ActiveAnnotation{Key: s.Key, Value: s.Value})
		}
	}
	return out
}

// annotationGroups lays the catalog out as the panel: grouped, typed, prefilled with an example.
// It does not depend on the state, so actions never need to re-render it. Istio's hidden
// annotations, and the one its injector writes itself (the status), are left out of the panel
// (the API lists them).
//
// The lab's annotations come first, in a group of their own (labPanel); proxy.istio.io/config
// gets its typed editor. What the search matches is searchText.
func annotationGroups(cat *catalog.Catalog) []web.AnnotationGroup {
	lab := web.AnnotationGroup{Name: labGroup, Open: true}
	for _, name := range labPanel {
		if a, ok := cat.Lookup(name); ok && !a.Hidden {
			it := annotationItem(a)
			if s := labSummaries[name]; s != "" {
				it.Summary = "lab.panel.summary." + s // ours, shown in the reader's language
			}
			lab.Items = append(lab.Items, it)
		}
	}
	groups := []web.AnnotationGroup{lab}
	for _, g := range catalog.Groups() {
		wg := web.AnnotationGroup{Name: string(g), Open: slices.Contains(openGroups, g)}
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
func annotationItem(a catalog.Annotation) web.AnnotationItem {
	val := a.Example
	it := web.AnnotationItem{Name: a.Name, Description: a.Description, FeatureStatus: a.FeatureStatus, Kind: string(a.Kind), Deprecated: a.Deprecated,
		Field: "v:" + a.Name, Value: val, Input: "text"}
	if a.Name == annotation.ProxyConfig.Name {
		it.ConfigFields = configFields()
	}
	it.Search = searchText(a, it)
	switch a.Kind {
	case catalog.KindBool:
		it.Input = "select"
		for _, o := range []string{"true", "false"} {
			it.Options = append(it.Options, web.Option{Value: o, Label: o, Selected: o == val})
		}
	case catalog.KindEnum:
		it.Input = "select"
		for _, o := range a.Enum {
			it.Options = append(it.Options, web.Option{Value: o, Label: o, Selected: o == val})
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
func searchText(a catalog.Annotation, it web.AnnotationItem) string {
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

// maxQuery bounds the search words a link or form may carry.
const maxQuery = 200

// searchTerms splits a query into lower-case words; every word must match.
func searchTerms(q string) []string {
	if len(q) > maxQuery {
		q = q[:maxQuery]
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

// filterGroups keeps the items that match every term, and the groups that keep any; a filtered
// panel opens every group it shows.
func filterGroups(groups []web.AnnotationGroup, q string) []web.AnnotationGroup {
	terms := searchTerms(q)
	if len(terms) == 0 {
		return groups
	}
	var out []web.AnnotationGroup
	for _, g := range groups {
		var items []web.AnnotationItem
		for _, it := range g.Items {
			if matches(it.Search, terms) {
				items = append(items, it)
			}
		}
		if len(items) > 0 {
			out = append(out, web.AnnotationGroup{Name: g.Name, Items: items, Open: true})
		}
	}
	return out
}

// searchedPanel is the panel for a search query (the page without JavaScript filters on the
// server): rendered per request, since its items depend on the query.
func searchedPanel(cat *catalog.Catalog, q string) (templ.Component, bool) {
	groups := filterGroups(annotationGroups(cat), q)
	return renderPanel(groups), len(groups) == 0
}

// configFields are the proxy.istio.io/config editor's rows, from Istio's ProxyConfig schema.
func configFields() []web.ConfigField {
	var out []web.ConfigField
	for _, f := range catalog.ProxyConfigFields() {
		cf := web.ConfigField{Name: f.Name, Kind: string(f.Kind), Type: f.Type, Doc: web.ParseDoc(f.Doc), Field: "pc:" + f.Name, Input: "text"}
		switch f.Kind {
		case catalog.KindBool:
			cf.Input = "select"
			for _, o := range []string{"true", "false"} {
				cf.Options = append(cf.Options, web.Option{Value: o, Label: o, Selected: o == "true"})
			}
		case catalog.KindEnum:
			cf.Input = "select"
			for _, o := range f.Enum {
				cf.Options = append(cf.Options, web.Option{Value: o, Label: o})
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

// currentValue is the value key has after the steps: the last step that sets or removes it,
// else the manifest's pod template annotation (where Istio reads it), else "".
func currentValue(manifest string, steps []input.Step, key string) string {
	for _, s := range slices.Backward(steps) {
		if s.Key == key {
			if s.Remove {
				return ""
			}
			return s.Value
		}
	}
	v, _ := engine.PodTemplateAnnotation([]byte(manifest), key)
	return v
}

// configFieldStep is the step the editor's "Add" makes: proxy.istio.io/config set to its current
// value with one field set. The engine still sees an ordinary step that replaces the whole value.
func configFieldStep(st api.State, field, value string) (input.Step, error) {
	key := annotation.ProxyConfig.Name
	merged, err := catalog.SetProxyConfigField(currentValue(st.Manifest, st.Steps, key), field, strings.ReplaceAll(value, "\r\n", "\n"))
	if err != nil {
		return input.Step{}, err
	}
	return input.Step{Key: key, Value: merged}, nil
}

// replacesNotice says which proxy.istio.io/config fields a step's value drops from the value
// before it ("" when the step is another or drops nothing). The value before is read from the
// step's own change to the annotation, which the diff already made: nothing is parsed again.
// It is in l's language; the error is ctx's, when the changes are made now (see Changes).
func replacesNotice(ctx context.Context, l *i18n.Localizer, s *engine.StepResult) (string, error) {
	old, ok, err := proxyConfigBefore(ctx, s)
	if !ok || err != nil {
		return "", err
	}
	dropped := catalog.DroppedProxyConfigFields(old, s.Step.Value)
	if len(dropped) == 0 {
		return "", nil
	}
	return l.N("lab.replaces", len(dropped), "Key", annotation.ProxyConfig.Name, "Fields", strings.Join(dropped, ", ")), nil
}

// defaultConfigNotice says why a proxy.istio.io/config step changes less than it sets: the
// fields it newly sets to what the installation's mesh config already gives in its defaultConfig
// (Engine.DefaultConfigGives). "" when it sets none such.
func defaultConfigNotice(ctx context.Context, l *i18n.Localizer, s *engine.StepResult, in *engine.Install) (string, error) {
	if s.Step == nil || s.Step.Remove || s.Step.Key != annotation.ProxyConfig.Name || in == nil {
		return "", nil
	}
	old, ok, err := proxyConfigBefore(ctx, s)
	if !ok || err != nil {
		return "", err
	}
	gives := in.DefaultConfigGives(old, s.Step.Value)
	if len(gives) == 0 {
		return "", nil
	}
	return l.N("lab.default-config-gives", len(gives), "Fields", strings.Join(gives, ", ")), nil
}

// proxyConfigBefore is the proxy.istio.io/config value a step that sets it replaced, as its
// changes say ("" when the annotation was added); ok is false for any other step and for a step
// whose changes do not touch the annotation.
func proxyConfigBefore(ctx context.Context, s *engine.StepResult) (old string, ok bool, err error) {
	key := annotation.ProxyConfig.Name
	if s.Step == nil || s.Step.Remove || s.Step.Key != key {
		return "", false, nil
	}
	changes, err := s.Changes(ctx)
	if err != nil {
		return "", false, err
	}
	for _, c := range changes {
		if !strings.HasSuffix(c.Path, `annotations["`+key+`"]`) {
			continue
		}
		if old, isText := c.Old.(string); isText && c.Kind == diff.Changed {
			return old, true, nil
		}
		return "", c.Kind == diff.Added, nil
	}
	return "", false, nil
}
