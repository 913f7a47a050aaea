package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/sidecarlab/sidecarlab/deploy"
	"github.com/sidecarlab/sidecarlab/internal/testcluster"
	"github.com/sidecarlab/sidecarlab/internal/testkit"
	"github.com/sidecarlab/sidecarlab/wording"
)

// admitFromCluster is `sidecarlab admit -o json --kubeconfig K -n NAMESPACE`: the namespace's
// labels, the revision it selects, its ConfigMaps, webhooks and the Kubernetes version all read
// from the cluster.
func admitFromCluster(t *testing.T, kubeconfig, manifest, namespace string) ([]wording.Admission, string) {
	t.Helper()
	out, stderr, err := runCLI(t, manifest, "admit", "-f", "-", "--kubeconfig", kubeconfig, "-n", namespace, "-o", "json")
	if err != nil && !errors.Is(err, errSilent) {
		t.Fatalf("sidecarlab admit --kubeconfig: %v\n%s", err, stderr)
	}
	var got []wording.Admission
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("sidecarlab admit -o json: %v\n%s", err, out)
	}
	return got, stderr
}

// called are the names of the webhooks that called the injector.
func called(a wording.Admission) []string {
	var out []string
	for _, w := range a.Webhooks {
		if w.Called {
			out = append(out, w.Name)
		}
	}
	return out
}

// TestClusterMeshAdmit: `admit --kubeconfig` with nothing but a namespace answers for every cell
// of the conformance matrix as the API server does (injected, admitted, Pod Security's message),
// and as admit answers when told the namespace's labels and install options by hand: the
// revision each namespace selects (a tag, the second revision, none) is the cluster's.
func TestClusterMeshAdmit(t *testing.T) {
	t.Parallel()
	c := needCluster(t)
	for _, ns := range conformanceNamespaces {
		t.Run(ns.name, func(t *testing.T) {
			t.Parallel() // each namespace is its own
			own := nsCell{name: "mesh-" + ns.name, labels: ns.labels}
			if ns.name == "kube-system" {
				own = ns
			}
			name := c.namespace(t, own)
			pods := matrixPods(name)
			// The API server's answers, asked while sidecarlab answers.
			serverAnswers := c.dryRunCreates(t, pods)
			var objs []any
			for _, p := range pods {
				objs = append(objs, p)
			}
			manifest := manifestOf(t, objs...)
			got, stderr := admitFromCluster(t, c.kubeconfig, manifest, name)
			want := admitJSON(t, manifest, name, ns)
			if len(got) != len(conformancePods) || len(want) != len(got) {
				t.Fatalf("%d answers from the cluster's mesh, %d by hand, want %d", len(got), len(want), len(conformancePods))
			}
			// The revision it read, as stderr says, is the cell's.
			if !strings.Contains(stderr, "revision "+ns.rev.Name+" ") {
				t.Errorf("read %q, want revision %s", stderr, ns.rev.Name)
			}
			answers := serverAnswers()
			for i, p := range conformancePods {
				a, b := got[i], want[i]
				cell := ns.name + "/" + p.name
				if a.Error != "" || b.Error != "" {
					t.Errorf("%s: %q, by hand %q", cell, a.Error, b.Error)
					continue
				}
				server, refused := answers[i].server, answers[i].refused
				if a.Admitted != (refused == nil) || (refused == nil && a.Injected != injected(server)) {
					t.Errorf("%s: admitted %v injected %v; the API server: refused %v, injected %v", cell, a.Admitted, a.Injected, refused, refused == nil && injected(server))
				}
				if a.Injected != b.Injected || a.Admitted != b.Admitted || !slices.Equal(a.Violations, b.Violations) ||
					!slices.Equal(a.Warnings, b.Warnings) || !slices.Equal(called(a), called(b)) {
					t.Errorf("%s: from the cluster %+v\nby hand %+v", cell, a, b)
				}
			}
		})
	}
}

// TestClusterMeshInject: `inject --kubeconfig` reads the revision named, a tag resolved to its
// revision, and injects exactly as with that revision's install options given by hand.
func TestClusterMeshInject(t *testing.T) {
	t.Parallel()
	c := needCluster(t)
	pod := manifestOf(t, (podCell{name: "web"}).pod("shop"))
	for _, cse := range []struct {
		revision string
		by       []string
	}{
		{"prod", setFlags(testcluster.Default)},
		{"default", setFlags(testcluster.Default)},
		{"cni", append(setFlags(testcluster.CNI), "--revision", "cni")},
	} {
		t.Run(cse.revision, func(t *testing.T) {
			got, stderr, err := runCLI(t, pod, "inject", "-f", "-", "--kubeconfig", c.kubeconfig, "--revision", cse.revision)
			if err != nil {
				t.Fatalf("%v: %s", err, stderr)
			}
			want, _, err := runCLI(t, pod, append([]string{"inject", "-f", "-"}, cse.by...)...)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Fatalf("inject --kubeconfig --revision %s:\n%s\nwith %v:\n%s", cse.revision, got, cse.by, want)
			}
		})
	}
	_, _, err := runCLI(t, pod, "inject", "-f", "-", "--kubeconfig", c.kubeconfig, "--revision", "nope")
	if err == nil || !strings.Contains(err.Error(), `no revision or revision tag "nope"`) {
		t.Fatalf("--revision nope: %v", err)
	}
}

// TestClusterMeshPermissions: the Helm chart's cluster.read objects (deploy.RenderClusterRead),
// applied as they are, let its ServiceAccount read the mesh for `admit --kubeconfig` and for
// `serve --cluster-read` (the cluster's revisions and namespaces, an injection with this
// cluster's mesh and namespace, as `inject --revision` gives). Without any one verb of its
// rules, what needs it fails naming the request the cluster refused.
func TestClusterMeshPermissions(t *testing.T) {
	t.Parallel()
	c := needCluster(t)
	ns := c.namespace(t, nsCell{name: "reader", labels: map[string]string{"istio-injection": "enabled"}})
	pod := manifestOf(t, (podCell{name: "web"}).pod(ns))
	chart, err := deploy.RenderClusterRead(ns, "istio-system")
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := runCLI(t, pod, append([]string{"inject", "-f", "-", "--revision", "cni"}, setFlags(testcluster.CNI)...)...)
	if err != nil {
		t.Fatal(err)
	}
	grants := chartGrants(*chart)
	for i := -1; i < len(grants); i++ {
		cr := *chart
		name := "reader"
		if i >= 0 {
			cr = grants[i].without(*chart)
			name = fmt.Sprintf("reader-no-%s-%s", grants[i].verb, grants[i].resource)
		}
		kubeconfig := c.applyClusterRead(t, name, cr)
		failed := useClusterRead(t, kubeconfig, ns, pod, want)
		if i < 0 {
			if failed != "" {
				t.Errorf("with the chart's rules:\n%s", failed)
			}
			continue
		}
		t.Logf("without %s %s:\n%s", grants[i].verb, grants[i].resource, failed)
		refused := fmt.Sprintf("%s %s", grants[i].verb, grants[i].resource)
		if !strings.Contains(failed, refused) || !strings.Contains(failed, "was refused") {
			t.Errorf("without %s: %q", refused, failed)
		}
	}
}

// grant is one verb on one resource of the chart's ClusterRole or Role.
type grant struct {
	namespaced     bool // the Role's (in Istio's namespace), else the ClusterRole's
	rule           int
	verb, resource string
	group          string
}

// chartGrants are every verb of every rule of cluster.read's roles.
func chartGrants(cr deploy.ClusterRead) []grant {
	var out []grant
	for _, role := range []struct {
		namespaced bool
		rules      []rbacv1.PolicyRule
	}{{false, cr.ClusterRole.Rules}, {true, cr.Role.Rules}} {
		for i, r := range role.rules {
			for _, v := range r.Verbs {
				out = append(out, grant{namespaced: role.namespaced, rule: i, verb: v, resource: r.Resources[0], group: r.APIGroups[0]})
			}
		}
	}
	return out
}

// without is cr with g's verb taken from its rule.
func (g grant) without(cr deploy.ClusterRead) deploy.ClusterRead {
	rules := &cr.ClusterRole.Rules
	if g.namespaced {
		rules = &cr.Role.Rules
	}
	*rules = slices.Clone(*rules)
	r := (*rules)[g.rule]
	r.Verbs = slices.DeleteFunc(slices.Clone(r.Verbs), func(v string) bool { return v == g.verb })
	(*rules)[g.rule] = r
	if len(r.Verbs) == 0 {
		*rules = slices.Delete(*rules, g.rule, g.rule+1) // a rule needs a verb
	}
	return cr
}

// useClusterRead reads the cluster with kubeconfig as `admit --kubeconfig -n namespace` and as
// `serve --cluster-read` does (the catalog, the page's choices, an injection with revision cni's
// mesh into namespace, whose output must be want), and says what failed ("" for nothing).
func useClusterRead(t *testing.T, kubeconfig, namespace, pod, want string) string {
	t.Helper()
	var failed []string
	if _, stderr, err := runCLI(t, pod, "admit", "-f", "-", "--kubeconfig", kubeconfig, "-n", namespace); err != nil {
		failed = append(failed, fmt.Sprintf("admit: %v %s", err, stderr))
	}
	s := startServe(t, "--cluster-read", "--kubeconfig", kubeconfig)
	defer func() { s.stop(); s.waitStopped(t) }()
	status, _, body := s.get(t, "/api/v1/cluster")
	var cat struct {
		Revisions, Namespaces []struct{ Name string }
		Error                 struct{ Message string }
	}
	_ = json.Unmarshal([]byte(body), &cat)
	has := func(list []struct{ Name string }, name string) bool {
		return slices.ContainsFunc(list, func(x struct{ Name string }) bool { return x.Name == name })
	}
	if status != http.StatusOK || !has(cat.Revisions, "cni") || !has(cat.Namespaces, namespace) {
		failed = append(failed, fmt.Sprintf("GET /api/v1/cluster: %d %s", status, cat.Error.Message))
	}
	if _, _, page := s.get(t, "/"); !strings.Contains(page, `<option value="cni">`) || !strings.Contains(page, `<option value="`+namespace+`">`) {
		failed = append(failed, "the page offers no revision cni or namespace "+namespace)
	}
	req, _ := json.Marshal(map[string]string{"manifest": pod, "clusterMesh": "cni", "clusterNamespace": namespace})
	resp, err := http.Post(s.base+"/api/v1/inject?include=output", "application/json", bytes.NewReader(req))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Output string
		Error  struct{ Message string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || out.Output != want {
		failed = append(failed, fmt.Sprintf("POST /api/v1/inject: %d %s", resp.StatusCode, out.Error.Message))
	}
	return strings.Join(failed, "\n")
}

// applyClusterRead creates the chart's cluster.read objects, each named name-<run>, waits until
// the API server authorizes what their rules grant, and writes a kubeconfig with a token of
// their ServiceAccount.
func (c *testCluster) applyClusterRead(t *testing.T, name string, cr deploy.ClusterRead) string {
	t.Helper()
	ctx := context.Background()
	name += "-" + runID()
	create := func(_ any, err error) {
		t.Helper()
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	// The ServiceAccount goes where Helm installs the release: the namespace its bindings name.
	sa := cr.ServiceAccount
	sa.Name, sa.Namespace = name, cr.ClusterRoleBinding.Subjects[0].Namespace
	subjects := []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: sa.Namespace}}
	cr.ClusterRole.Name, cr.ClusterRoleBinding.Name, cr.Role.Name, cr.RoleBinding.Name = name, name, name, name
	cr.ClusterRoleBinding.RoleRef.Name, cr.RoleBinding.RoleRef.Name = name, name
	cr.ClusterRoleBinding.Subjects, cr.RoleBinding.Subjects = subjects, subjects
	create(c.client.CoreV1().ServiceAccounts(sa.Namespace).Create(ctx, &sa, metav1.CreateOptions{}))
	create(c.client.RbacV1().ClusterRoles().Create(ctx, &cr.ClusterRole, metav1.CreateOptions{}))
	create(c.client.RbacV1().ClusterRoleBindings().Create(ctx, &cr.ClusterRoleBinding, metav1.CreateOptions{}))
	create(c.client.RbacV1().Roles(cr.Role.Namespace).Create(ctx, &cr.Role, metav1.CreateOptions{}))
	create(c.client.RbacV1().RoleBindings(cr.RoleBinding.Namespace).Create(ctx, &cr.RoleBinding, metav1.CreateOptions{}))
	// RBAC is authorized from the API server's informers: wait until it grants what was made.
	user := "system:serviceaccount:" + sa.Namespace + ":" + name
	for _, g := range chartGrants(cr) {
		attrs := &authorizationv1.ResourceAttributes{Verb: g.verb, Group: g.group, Resource: g.resource}
		if g.namespaced {
			attrs.Namespace = cr.Role.Namespace
		}
		testkit.WaitFor(t, user+" may "+g.verb+" "+g.resource, func() bool {
			r, err := c.client.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User: user, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + sa.Namespace, "system:authenticated"}, ResourceAttributes: attrs}}, metav1.CreateOptions{})
			return err == nil && r.Status.Allowed
		})
	}
	return c.tokenKubeconfig(t, sa.Namespace, name)
}

// tokenKubeconfig writes a kubeconfig of the cluster with a token of the ServiceAccount.
func (c *testCluster) tokenKubeconfig(t *testing.T, namespace, name string) string {
	t.Helper()
	tok, err := c.client.CoreV1().ServiceAccounts(namespace).CreateToken(context.Background(), name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.LoadFromFile(c.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cur := cfg.Contexts[cfg.CurrentContext]
	out := clientcmdapi.NewConfig()
	out.Clusters["c"] = cfg.Clusters[cur.Cluster]
	out.AuthInfos["sa"] = &clientcmdapi.AuthInfo{Token: tok.Status.Token}
	out.Contexts["sa"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "sa"}
	out.CurrentContext = "sa"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*out, path); err != nil {
		t.Fatal(err)
	}
	return path
}
