package admission

import (
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/ambient"
)

// TestComparePodSecurity: both sides of a comparison are judged at baseline and restricted. The
// sidecar of the ambient profile (istio-validation, no NET_ADMIN) passes baseline as the pod as
// written does; a privileged app fails baseline on both sides, with PSA's own message; and
// neither passes restricted without the app's securityContext.
func TestComparePodSecurity(t *testing.T) {
	privileged := strings.Replace(deployment, "        image: nginx\n", "        image: nginx\n        securityContext: {privileged: true}\n", 1)
	if privileged == deployment {
		t.Fatal("the test's Deployment has no container to make privileged")
	}
	for _, tc := range []struct {
		name     string
		manifest string
		baseline bool
		message  string
	}{
		{"as written", deployment, true, ""},
		{"privileged", privileged, false, `privileged (container "web" must not set securityContext.privileged=true)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ambient.Compare(t.Context(), testEngine, []byte(tc.manifest), nil, engine.Settings{}, 3)
			if err != nil {
				t.Fatal(err)
			}
			if err := ComparePodSecurity(t.Context(), c, engine.Settings{}); err != nil {
				t.Fatal(err)
			}
			w := c.Workloads[0]
			for side, got := range map[string][]ambient.PodSecurity{"sidecar": w.SidecarPodSecurity, "ambient": w.AmbientPodSecurity} {
				if len(got) != 2 || got[0].Level != "baseline" || got[1].Level != "restricted" {
					t.Fatalf("%s: %+v", side, got)
				}
				if got[0].Allowed != tc.baseline {
					t.Errorf("%s at baseline: allowed %v, want %v (%q)", side, got[0].Allowed, tc.baseline, got[0].Violations)
				}
				if tc.message != "" && !strings.Contains(strings.Join(got[0].Violations, "\n"), tc.message) {
					t.Errorf("%s at baseline: %q, want PSA's %q", side, got[0].Violations, tc.message)
				}
				if got[1].Allowed || len(got[1].Violations) == 0 {
					t.Errorf("%s at restricted: %+v", side, got[1])
				}
			}
		})
	}
	// Classic injection (no CNI) is what baseline refuses; the comparison's sidecar side never is.
	r := admitOne(t, deployment, engine.Settings{}, engine.Namespace{Name: "shop", Labels: map[string]string{"istio-injection": "enabled", "pod-security.kubernetes.io/enforce": "baseline"}})
	if r.Admitted {
		t.Fatal("the default profile's istio-init passed baseline: the comparison's check above cannot tell CNI from classic")
	}
}
