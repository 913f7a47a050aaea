package admission

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/pod-security-admission/api"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/ambient"
)

// ComparedLevels are the Pod Security levels a sidecar-or-ambient comparison judges both sides'
// pods at: the two that restrict anything.
var ComparedLevels = []api.Level{api.LevelBaseline, api.LevelRestricted}

// ComparePodSecurity judges both sides' pods of each workload of c with Pod Security Admission,
// at each of ComparedLevels, as a namespace that enforces the level would: the pod each side's
// controller creates, with the API server's defaults, at the Kubernetes version of s. The
// engine cannot (it does not import this package); the API, the page and the CLI call it on the
// comparison they answer with.
func ComparePodSecurity(ctx context.Context, c *ambient.Comparison, s engine.Settings) error {
	minor, err := s.KubernetesMinor()
	if err != nil {
		return err
	}
	psa, err := newPodSecurity(api.MajorMinorVersion(1, minor))
	if err != nil {
		return err
	}
	for i := range c.Workloads {
		w := &c.Workloads[i]
		if w.Error != "" || w.AmbientPod == nil {
			continue
		}
		ns := w.AmbientPod.Namespace
		for _, side := range []struct {
			obj runtime.Object
			out *[]ambient.PodSecurity
		}{{w.SidecarObject, &w.SidecarPodSecurity}, {w.AmbientObject, &w.AmbientPodSecurity}} {
			pod, err := podOf(engine.Workload{Doc: w.Doc, APIVersion: w.APIVersion, Kind: w.Kind, Name: w.Name, Namespace: w.Namespace, Object: side.obj}, ns)
			if err != nil {
				// A kind whose controller sidecarlab does not follow: no verdict, as the
				// Cluster view gives none.
				break
			}
			*side.out = judge(ctx, psa, ns, defaulted(pod))
		}
	}
	return nil
}

// judge is PSA's verdict on pod at each of ComparedLevels.
func judge(ctx context.Context, psa *podSecurity, ns string, pod *corev1.Pod) []ambient.PodSecurity {
	out := make([]ambient.PodSecurity, 0, len(ComparedLevels))
	for _, level := range ComparedLevels {
		labels := map[string]string{api.EnforceLevelLabel: string(level)}
		allowed, violations, _ := psa.evaluate(ctx, engine.Namespace{Name: ns, Labels: labels}, pod)
		out = append(out, ambient.PodSecurity{Level: string(level), Allowed: allowed, Violations: violations})
	}
	return out
}
