package admission

import (
	"testing"

	"github.com/sidecarlab/sidecarlab/engine"
)

// BenchmarkAdmit is the Cluster view of one Deployment in a namespace labelled for injection:
// the webhook selection, Istio's webhook, its patch and Pod Security.
func BenchmarkAdmit(b *testing.B) {
	s := engine.Settings{Namespace: engine.Namespace{Name: "shop", Labels: map[string]string{"istio-injection": "enabled", "pod-security.kubernetes.io/enforce": "baseline"}}}
	for b.Loop() {
		rs, err := adm.Admit(b.Context(), []byte(deployment), nil, s)
		if err != nil || !rs[0].Injected {
			b.Fatal(err)
		}
	}
}
