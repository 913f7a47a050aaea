package handlers

import (
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

// TestYAMLOnlyForItsTab: the results carry the injected YAML (made from the output's JSON when
// first read) only when the YAML tab is rendered; a toggle on another tab does not make it.
func TestYAMLOnlyForItsTab(t *testing.T) {
	newServer(t)
	st := api.State{Manifest: testkit.Deployment, Steps: []input.Step{{Key: "sidecar.istio.io/proxyCPU", Value: "150m"}}}
	tl, err := eng.Timeline(t.Context(), []byte(st.Manifest), st.Steps, st.Settings)
	if err != nil {
		t.Fatal(err)
	}
	v := view{state: st, step: -1}
	only := func(tab string) func(string) bool { return func(t string) bool { return t == tab } }
	for _, tab := range []string{"diff", "unified", "pitfalls", "lifecycle", "batch"} {
		if r, err := buildResults(t.Context(), i18n.For("en"), v, "", tl, nil, only(tab)); err != nil || r.Output != "" {
			t.Errorf("the %s tab's results carry the YAML (%v)", tab, err)
		}
	}
	if r, err := buildResults(t.Context(), i18n.For("en"), v, "", tl, nil, only("yaml")); err != nil || r.Output != tl.Steps[1].Output() || r.Output == "" {
		t.Errorf("the yaml tab's results carry %q (%v), want the last row's output", r.Output, err)
	}
}
