package web

import (
	"context"
	"testing"

	"github.com/sidecarlab/sidecarlab/i18n"
)

// TestTabs: the default tab is the first, and each tab's id is its own (ids name the tab panels
// and the ?tab= of links).
func TestTabs(t *testing.T) {
	tabs := Tabs()
	if tabs[0].ID != DefaultTab {
		t.Fatalf("the first tab is %q, DefaultTab %q", tabs[0].ID, DefaultTab)
	}
	seen := map[string]bool{}
	for _, tab := range tabs {
		if seen[tab.ID] || tab.ID == "" {
			t.Errorf("tab %+v: empty or repeated", tab)
		}
		// Worded in every language (a missing message would be its id).
		for _, code := range i18n.Codes {
			ctx := i18n.NewContext(context.Background(), i18n.For(code))
			if title := tab.Title(ctx); title == "" || title == "results.tab."+tab.ID {
				t.Errorf("tab %s in %s: title %q", tab.ID, code, title)
			}
		}
		seen[tab.ID] = true
	}
	tabs[0].ID = "changed"
	if Tabs()[0].ID != DefaultTab {
		t.Fatal("a caller changed the tabs")
	}
}
