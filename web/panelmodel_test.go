package web

import (
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/catalog"
	"github.com/sidecarlab/sidecarlab/i18n"
)

// TestSearchTopics: every annotation a topic names is one the panel shows, and every topic has
// words in every language.
func TestSearchTopics(t *testing.T) {
	shown := map[string]bool{}
	for _, g := range PanelGroups(catalog.DefaultCatalog()) {
		for _, it := range g.Items {
			shown[it.Name] = true
		}
	}
	for topic, names := range searchTopics {
		for _, n := range names {
			if !shown[n] {
				t.Errorf("topic %s: %s is not in the panel", topic, n)
			}
		}
		for _, code := range i18n.Codes {
			if w := i18n.For(code).T("lab.panel.words." + topic); w == "" || strings.HasPrefix(w, "lab.") {
				t.Errorf("topic %s has no %s words", topic, code)
			}
		}
	}
	if missing := i18n.Missing(); len(missing) != 0 {
		t.Errorf("messages missing from the catalogs: %q", missing)
	}
}
