package handlers

import (
	"bytes"
	"context"
	"io"
	"slices"
	"sync"

	"github.com/sidecarlab/sidecarlab/engine/catalog"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/a-h/templ"
	"istio.io/api/annotation"

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
