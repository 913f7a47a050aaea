package admission

import (
	"context"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	psadmission "k8s.io/pod-security-admission/admission"
	psaapi "k8s.io/pod-security-admission/admission/api"
	"k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/metrics"
	"k8s.io/pod-security-admission/policy"

	"github.com/sidecarlab/sidecarlab/engine"
)

// podSecurity is Pod Security Admission as the API server of that version runs it, with the
// default configuration (privileged everywhere unless the namespace's labels say otherwise).
type podSecurity struct {
	adm     *psadmission.Admission
	version api.Version
}

func newPodSecurity(v api.Version) (*podSecurity, error) {
	ev, err := policy.NewEvaluator(policy.DefaultChecks(), &v)
	if err != nil {
		return nil, err
	}
	return &podSecurity{adm: &psadmission.Admission{Configuration: &psaapi.PodSecurityConfiguration{}, Evaluator: ev, Metrics: noMetrics{}}, version: v}, nil
}

// evaluate runs the admission code on the Pod with the namespace's policy: admitted unless the
// enforce level forbids it; violations are the enforce and audit messages, warnings the warn
// level's, as the API server words them.
func (p *podSecurity) evaluate(ctx context.Context, ns engine.Namespace, pod *corev1.Pod) (admitted bool, violations, warnings []string) {
	defaults := api.Policy{
		Enforce: api.LevelVersion{Level: api.LevelPrivileged, Version: api.LatestVersion()},
		Audit:   api.LevelVersion{Level: api.LevelPrivileged, Version: api.LatestVersion()},
		Warn:    api.LevelVersion{Level: api.LevelPrivileged, Version: api.LatestVersion()},
	}
	nsPolicy, errs := api.PolicyToEvaluate(ns.Labels, defaults)
	attrs := &api.AttributesRecord{
		Name: createdName(pod), Namespace: ns.Name, Kind: schema.GroupVersionKind{Version: "v1", Kind: "Pod"},
		Resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Operation: admissionv1.Create, Object: pod,
	}
	resp := p.adm.EvaluatePod(ctx, nsPolicy, errs.ToAggregate(), &pod.ObjectMeta, &pod.Spec, attrs, true)
	if !resp.Allowed && resp.Result != nil {
		violations = append(violations, resp.Result.Message)
	}
	if a := resp.AuditAnnotations[api.AuditViolationsAnnotationKey]; a != "" {
		violations = append(violations, a)
	}
	return resp.Allowed, violations, resp.Warnings
}

type noMetrics struct{}

func (noMetrics) RecordEvaluation(metrics.Decision, api.LevelVersion, metrics.Mode, api.Attributes) {}
func (noMetrics) RecordExemption(api.Attributes)                                                    {}
func (noMetrics) RecordError(bool, api.Attributes)                                                  {}
