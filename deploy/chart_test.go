package deploy

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/lint"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"
	loader "helm.sh/helm/v4/pkg/chart/v2/loader"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

func render(t *testing.T, vals map[string]any) (map[string]string, error) {
	t.Helper()
	return Render("tools", vals)
}

func deployment(t *testing.T, files map[string]string) appsv1.Deployment {
	t.Helper()
	var d appsv1.Deployment
	if err := yaml.Unmarshal([]byte(files["sidecarlab/templates/deployment.yaml"]), &d); err != nil {
		t.Fatal(err)
	}
	return d
}

func TestChartRenders(t *testing.T) {
	files, err := render(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := deployment(t, files)
	c := d.Spec.Template.Spec.Containers[0]
	if *d.Spec.Replicas != 1 || c.ReadinessProbe.HTTPGet.Path != "/readyz" || c.LivenessProbe.HTTPGet.Path != "/healthz" {
		t.Fatalf("probes or replicas: %+v", d.Spec)
	}
	if c.SecurityContext == nil || !*c.SecurityContext.ReadOnlyRootFilesystem || *c.SecurityContext.AllowPrivilegeEscalation || !*d.Spec.Template.Spec.SecurityContext.RunAsNonRoot {
		t.Fatal("the pod is not locked down")
	}
	// Room for the server and one worker (allowCustomTemplates, on by default).
	if c.Resources.Requests.Cpu().String() != "250m" || c.Resources.Limits.Memory().String() != "1Gi" || len(c.Env) != 0 {
		t.Fatalf("resources %v, env %v", c.Resources, c.Env)
	}
	if !strings.Contains(files["sidecarlab/templates/service.yaml"], "targetPort: http") {
		t.Fatal("no service")
	}
	// The hosting flags, as numbers the flag parser reads (not 1.073741824e+09), and a grace
	// period that covers the server's own shutdown wait (request timeout + 5 s).
	wantArgs := []string{"serve", "--addr=:8080", "--db=/data/links.db", "--rate-limit=6000", "--share-rate-limit=60",
		"--rooms=100", "--room-learners=500", "--room-idle=180m", "--room-rate-limit=20000",
		"--max-body=1048576", "--store-quota=1073741824", "--request-timeout=15s",
		"--allow-custom-templates=true", "--worker-cpu-seconds=10", "--worker-memory=402653184", "--max-workers=1"}
	if diff := cmp.Diff(wantArgs, c.Args); diff != "" {
		t.Fatalf("args (-want +got):\n%s", diff)
	}
	if g := d.Spec.Template.Spec.TerminationGracePeriodSeconds; g == nil || *g < 20 {
		t.Fatalf("terminationGracePeriodSeconds %v, want ≥ 15 s + 5 s", g)
	}
	// Behind an ingress: its proxies, and the other limits, set from values.
	files, err = render(t, map[string]any{"trustedProxies": []any{"10.0.0.0/8", "192.168.0.0/16"}, "storeQuota": 5368709120, "shareRateLimit": 10, "requestTimeoutSeconds": 30})
	if err != nil {
		t.Fatal(err)
	}
	d = deployment(t, files)
	args := strings.Join(d.Spec.Template.Spec.Containers[0].Args, " ")
	for _, want := range []string{"--trusted-proxies=10.0.0.0/8,192.168.0.0/16", "--store-quota=5368709120", "--share-rate-limit=10", "--request-timeout=30s"} {
		if !strings.Contains(args, want) {
			t.Errorf("args %q lack %q", args, want)
		}
	}
	if g := d.Spec.Template.Spec.TerminationGracePeriodSeconds; g == nil || *g != 40 {
		t.Errorf("terminationGracePeriodSeconds %v, want 40", g)
	}
	// PostgreSQL from a Secret, with several replicas.
	files, err = render(t, map[string]any{"replicaCount": 3, "postgres": map[string]any{"existingSecret": "links-db"}})
	if err != nil {
		t.Fatal(err)
	}
	d = deployment(t, files)
	env := d.Spec.Template.Spec.Containers[0].Env
	if *d.Spec.Replicas != 3 || len(env) != 1 || env[0].Name != "SIDECARLAB_POSTGRES" || env[0].ValueFrom.SecretKeyRef.Name != "links-db" {
		t.Fatalf("postgres: replicas %d, env %+v", *d.Spec.Replicas, env)
	}
	// User templates: run by default, in workers with their limits as flags; refused by a
	// locked-down server (allowCustomTemplates: false), which has no workers to limit.
	for _, want := range []string{"--allow-custom-templates=true", "--worker-cpu-seconds=10", "--worker-memory=402653184", "--max-workers=1"} {
		if !strings.Contains(args, want) {
			t.Errorf("by default: args %q lack %q", args, want)
		}
	}
	files, err = render(t, map[string]any{"allowCustomTemplates": false})
	if err != nil {
		t.Fatal(err)
	}
	args = strings.Join(deployment(t, files).Spec.Template.Spec.Containers[0].Args, " ")
	if !strings.Contains(args, "--allow-custom-templates=false") || strings.Contains(args, "--worker-") {
		t.Errorf("allowCustomTemplates false: args %q, want --allow-custom-templates=false and no worker flags", args)
	}
	// Several replicas on SQLite would each keep their own links: refused.
	if _, err := render(t, map[string]any{"replicaCount": 2}); err == nil || !strings.Contains(err.Error(), "needs PostgreSQL") {
		t.Fatalf("replicas on SQLite: %v", err)
	}
}

// TestChartClusterRead: by default the pod has no token of the API server's and no RBAC; with
// cluster.read it reads with exactly get/list namespaces, list webhooks and get ConfigMaps in
// Istio's namespace (what clustermesh.Reader asks; the control plane's tests apply these
// objects to a real API server and take each rule away), bound to its ServiceAccount.
func TestChartClusterRead(t *testing.T) {
	files, err := render(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := deployment(t, files)
	if a := d.Spec.Template.Spec.AutomountServiceAccountToken; a == nil || *a {
		t.Fatalf("automountServiceAccountToken %v by default, want false", a)
	}
	if strings.TrimSpace(files[Release+"/templates/rbac.yaml"]) != "" || strings.Contains(strings.Join(d.Spec.Template.Spec.Containers[0].Args, " "), "--cluster-read") {
		t.Fatalf("RBAC or --cluster-read without cluster.read:\n%s", files[Release+"/templates/rbac.yaml"])
	}
	files, err = render(t, map[string]any{"cluster": map[string]any{"read": true, "istioNamespace": "istio-canary"}})
	if err != nil {
		t.Fatal(err)
	}
	d = deployment(t, files)
	if a := d.Spec.Template.Spec.AutomountServiceAccountToken; a == nil || !*a || d.Spec.Template.Spec.ServiceAccountName != Release {
		t.Fatalf("cluster.read: automount %v, ServiceAccount %q", a, d.Spec.Template.Spec.ServiceAccountName)
	}
	args := strings.Join(d.Spec.Template.Spec.Containers[0].Args, " ")
	if !strings.Contains(args, "--cluster-read --istio-namespace=istio-canary") {
		t.Fatalf("cluster.read: args %q", args)
	}
	cr, err := RenderClusterRead("tools", "istio-canary")
	if err != nil {
		t.Fatal(err)
	}
	type rule struct{ group, resource, verbs, namespace string }
	var got []rule
	for _, r := range cr.ClusterRole.Rules {
		got = append(got, rule{strings.Join(r.APIGroups, ","), strings.Join(r.Resources, ","), strings.Join(r.Verbs, ","), ""})
	}
	for _, r := range cr.Role.Rules {
		got = append(got, rule{strings.Join(r.APIGroups, ","), strings.Join(r.Resources, ","), strings.Join(r.Verbs, ","), cr.Role.Namespace})
	}
	want := []rule{{"", "namespaces", "get,list", ""}, {"admissionregistration.k8s.io", "mutatingwebhookconfigurations", "list", ""}, {"", "configmaps", "get", "istio-canary"}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(rule{})); diff != "" {
		t.Fatalf("rules (-want +got):\n%s", diff)
	}
	for _, b := range []struct {
		role, want string
		subjects   []rbacv1.Subject
	}{{cr.ClusterRoleBinding.RoleRef.Name, cr.ClusterRole.Name, cr.ClusterRoleBinding.Subjects}, {cr.RoleBinding.RoleRef.Name, cr.Role.Name, cr.RoleBinding.Subjects}} {
		if b.role != b.want || len(b.subjects) != 1 || b.subjects[0].Name != cr.ServiceAccount.Name || b.subjects[0].Namespace != "tools" {
			t.Errorf("binding of %q to %+v, want the ServiceAccount %s in tools", b.role, b.subjects, cr.ServiceAccount.Name)
		}
	}
	if cr.RoleBinding.Namespace != "istio-canary" {
		t.Errorf("RoleBinding in %q, want Istio's namespace", cr.RoleBinding.Namespace)
	}
}

func TestChartLints(t *testing.T) {
	l := lint.RunAll(ChartDir, nil, "tools")
	for _, m := range l.Messages {
		t.Log(m)
	}
	if l.HighestSeverity >= support.WarningSev {
		t.Fatal("helm lint found problems")
	}
}

// TestChartBuiltInIsTheFolder: the chart built into the program is the folder's, file for file,
// as Helm's directory loader reads it (an embed pattern that missed a file would differ here).
func TestChartBuiltInIsTheFolder(t *testing.T) {
	fromDir, err := loader.Load(ChartDir)
	if err != nil {
		t.Fatal(err)
	}
	builtIn, err := load()
	if err != nil {
		t.Fatal(err)
	}
	files := func(c *chart.Chart) map[string]string {
		m := map[string]string{"Chart.yaml": c.Metadata.Name + " " + c.Metadata.Version}
		for _, f := range append(append([]*common.File{}, c.Templates...), c.Raw...) {
			m[f.Name] = string(f.Data)
		}
		return m
	}
	if d := cmp.Diff(files(fromDir), files(builtIn)); d != "" {
		t.Errorf("the built-in chart differs from %s (-folder +built in):\n%s", ChartDir, d)
	}
	if len(builtIn.Templates) < 5 {
		t.Errorf("the built-in chart has %d templates, want the folder's 5", len(builtIn.Templates))
	}
}
