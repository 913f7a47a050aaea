package web

import "testing"

// TestTabs: the default tab is the first, and each tab's id is its own (ids name the tab panels
// and the ?tab= of links).
func TestTabs(t *testing.T) {
	tabs := Tabs()
	if tabs[0].ID != DefaultTab {
		t.Fatalf("the first tab is %q, DefaultTab %q", tabs[0].ID, DefaultTab)
	}
	seen := map[string]bool{}
	for _, tab := range tabs {
		if seen[tab.ID] || tab.ID == "" || tab.Title == "" {
			t.Errorf("tab %+v: empty or repeated", tab)
		}
		seen[tab.ID] = true
	}
	tabs[0].ID = "changed"
	if Tabs()[0].ID != DefaultTab {
		t.Fatal("a caller changed the tabs")
	}
}
