package handlers

import (
	"bytes"
	"context"
	"io"
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
		if id, ok := web.GroupMessage(g.Name); ok {
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

// searchedPanel is the panel for a search query (the page without JavaScript filters on the
// server): rendered per request, since its items depend on the query.
func searchedPanel(cat *catalog.Catalog, q string) (templ.Component, bool) {
	groups := web.FilterGroups(web.PanelGroups(cat), q)
	return renderPanel(groups), len(groups) == 0
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
