package engine

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sidecarlab/sidecarlab/engine/diff"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

// TestKubeInjectIgnoresThePolicy: istioctl kube-inject injects a pod that says nothing even when
// the installation's injection policy is disabled (IntoObject decides as under enabled), and
// kube-inject mode prints what it prints, byte for byte; webhook mode, which claims the
// webhook's decision, leaves the same pod as it is, with the webhook's word for why.
func TestKubeInjectIgnoresThePolicy(t *testing.T) {
	if testing.Short() {
		t.Skip("builds istioctl; run without -short")
	}
	t.Parallel()
	set := "values.global.proxy.autoInject=disabled"
	bin := testkit.Istioctl(t)
	dir, _, _, _ := istioctlConfig(t, bin, "--set", set)
	in := filepath.Join(t.TempDir(), "deployment.yaml")
	if err := os.WriteFile(in, []byte(labDeployment), 0o644); err != nil {
		t.Fatal(err)
	}
	want, stderr, err := kubeInject(bin, dir, in)
	if err != nil {
		t.Fatalf("istioctl: %v: %s", err, stderr)
	}
	e := testEngine(t)
	s := Settings{Install: InstallOptions{Set: []string{set}}}
	r := mustInject(t, e, []byte(labDeployment), nil, s)
	if got := r.Output(); got != want {
		t.Fatalf("kube-inject mode differs from istioctl:\n%s", diff.Unified(want, got))
	}
	if st, _ := r.Documents[0].Status(); st != StatusInjected {
		t.Fatalf("kube-inject mode: %s; istioctl injects under the disabled policy", st)
	}

	s.Mode = ModeWebhook
	w := mustInject(t, e, []byte(labDeployment), nil, s)
	d := w.Documents[0]
	if st, reason := d.Status(); st != StatusSkipped || reason != webhookSkip || !slices.Contains(d.Warnings, webhookSkip) {
		t.Fatalf("webhook mode: %s (%q), warnings %q; want skipped by the policy check", st, reason, d.Warnings)
	}
	if strings.Contains(w.Output(), "istio-proxy") {
		t.Errorf("webhook mode's skipped pod has a sidecar:\n%s", w.Output())
	}
	// Under the default policy, webhook mode injects the same pod.
	if st, _ := mustInject(t, e, []byte(labDeployment), nil, Settings{Mode: ModeWebhook}).Documents[0].Status(); st != StatusInjected {
		t.Errorf("webhook mode, policy enabled: %s", st)
	}
}
