package admission

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"istio.io/api/annotation"
	"istio.io/istio/pkg/kube/inject"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
)

// differsLegitimately are the golden inputs whose Pod from the webhook path is not the pod
// template of the kube-inject output, and why. The test fails if one of them stops differing,
// so the list stays true.
var differsLegitimately = map[string]string{
	// kube-inject writes a CronJob's injected labels and annotations on spec.jobTemplate.metadata
	// (where it reads them), not on the pod template; the webhook patches the Pod itself. Istio's
	// own TestInjection leaves CronJobs out of its webhook comparison for the same reason.
	"cronjob.yaml": "kube-inject puts a CronJob's pod labels and annotations on the job template",
}

// TestWebhookPathMatchesKubeInject: for every input of Istio's injection golden corpus, the Pod
// the webhook path makes (the controller's Pod with the API server's defaults, Istio's webhook,
// its JSON patch) carries the same labels, annotations and spec as the pod template the engine's
// webhook mode writes for it (which injects the defaulted object and leaves out the defaults Istio
// did not touch), defaulted again, with the same installation and nodes, in namespace default
// (what kube-inject assumes), with the same normalisation as Istio's own test (the status
// annotation and fieldRef apiVersions aside). Istio's TestInjection asserts the same of its two
// paths; cmd/sidecarlab's conformance tests hold both to a real API server.
func TestWebhookPathMatchesKubeInject(t *testing.T) {
	dir := filepath.Join(testkit.IstioDir(t), "pkg/kube/inject/testdata/inject")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(t.Context(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	raw := New(e)
	defer raw.Close()
	s := engine.Settings{Mode: engine.ModeWebhook, Namespace: engine.Namespace{Name: "default", Labels: map[string]string{"istio-injection": "enabled"}}}
	compared := 0
	for _, ent := range entries {
		name := ent.Name()
		if !strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".iop.yaml") {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, name+".injected")); err != nil {
			continue
		}
		t.Run(name, func(t *testing.T) {
			in, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			inj, err := e.Inject(t.Context(), in, nil, s)
			if err != nil {
				t.Fatal(err)
			}
			rs, err := raw.Admit(t.Context(), in, nil, s)
			if err != nil {
				t.Fatal(err)
			}
			var diffs []string
			n := 0
			for i, d := range inj.Documents {
				r := rs[i]
				if d.Error != nil || r.Error != "" || r.Final == nil || !d.Injectable {
					continue
				}
				tmpl, err := templateOf(d.Output())
				if err != nil {
					t.Fatalf("document %d: %v", d.Index, err)
				}
				if tmpl == nil {
					continue
				}
				n++
				engine.APIDefault(tmpl)
				got, want := normalise(r.Final), normalise(tmpl)
				if got != want {
					diffs = append(diffs, diffText(t, want, got))
				}
			}
			compared += n
			reason, listed := differsLegitimately[name]
			switch {
			case len(diffs) > 0 && !listed:
				t.Errorf("the webhook path differs from kube-inject's pod template (-kube-inject +webhook):\n%s", strings.Join(diffs, "\n"))
			case len(diffs) == 0 && listed:
				t.Errorf("listed as differing (%s), but the two paths agree now: take it off the list", reason)
			}
		})
	}
	if compared < 30 {
		t.Fatalf("compared only %d documents: is the corpus where it was?", compared)
	}
}

// templateOf is the pod template (as a Pod) of one injected document, nil for kinds without one.
func templateOf(output string) (*corev1.Pod, error) {
	obj, err := inject.FromRawToObject([]byte(output))
	if err != nil {
		return nil, err
	}
	p, err := podOf(engine.Workload{Object: obj}, "")
	if err != nil {
		return nil, nil // a kind without a pod template
	}
	return p, nil
}

// normalise keeps what both paths decide (labels, annotations, spec) without the status
// annotation, fieldRef apiVersions and the labels the controller adds.
func normalise(p *corev1.Pod) string {
	p = p.DeepCopy()
	delete(p.Annotations, annotation.SidecarStatus.Name)
	for _, k := range []string{"pod-template-hash", "job-name", "batch.kubernetes.io/job-name"} {
		delete(p.Labels, k)
	}
	if len(p.Labels) == 0 {
		p.Labels = nil
	}
	if len(p.Annotations) == 0 {
		p.Annotations = nil
	}
	for _, cs := range [][]corev1.Container{p.Spec.Containers, p.Spec.InitContainers} {
		for i := range cs {
			for j := range cs[i].Env {
				if f := cs[i].Env[j].ValueFrom; f != nil && f.FieldRef != nil {
					f.FieldRef.APIVersion = ""
				}
			}
		}
	}
	b, _ := yaml.Marshal(struct {
		Labels      map[string]string `json:"labels,omitempty"`
		Annotations map[string]string `json:"annotations,omitempty"`
		Spec        corev1.PodSpec    `json:"spec"`
	}{p.Labels, p.Annotations, p.Spec})
	return string(b)
}

func diffText(t *testing.T, want, got string) string {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "kube-inject"), filepath.Join(dir, "webhook")
	_ = os.WriteFile(a, []byte(want), 0o644)
	_ = os.WriteFile(b, []byte(got), 0o644)
	out, _ := exec.Command("diff", "-u", a, b).CombinedOutput()
	return string(out)
}
