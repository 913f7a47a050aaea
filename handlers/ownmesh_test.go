package handlers

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine"
)

// TestStateSizeCountsOwnMesh: a link's state is bounded by --max-body with its mesh's own
// configuration counted (each of its texts), as a POST carrying it would be.
func TestStateSizeCountsOwnMesh(t *testing.T) {
	small := New(testLogger(), func() Engine { return eng }, testConfig(Config{MaxBodyBytes: 1000}))
	big := strings.Repeat("# padding\n", 100)
	for name, mesh := range map[string]engine.OwnMesh{
		"injector config": {InjectorConfig: big},
		"values":          {Values: big},
		"mesh config":     {MeshConfig: big},
		"webhooks":        {Webhooks: big},
	} {
		st := State{Manifest: deploymentYAML, Settings: engine.Settings{Install: engine.InstallOptions{Mesh: mesh}}}
		if r := do(t, small, httptest.NewRequest(http.MethodGet, stateLink(t, st), nil)); r.status != http.StatusRequestEntityTooLarge {
			t.Errorf("%s of %d bytes: %d, want 413", name, len(big), r.status)
		}
	}
	// Without it, the same link is small enough.
	if r := do(t, small, httptest.NewRequest(http.MethodGet, stateLink(t, State{Manifest: deploymentYAML}), nil)); r.status == http.StatusRequestEntityTooLarge {
		t.Errorf("the manifest alone: %d", r.status)
	}
}
