package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/sidecarlab/sidecarlab/explain"
	"github.com/sidecarlab/sidecarlab/internal/testcluster"
)

// admitFromCluster is `sidecarlab admit -o json --kubeconfig K -n NAMESPACE`: the namespace's
// labels, the revision it selects, its ConfigMaps, webhooks and the Kubernetes version all read
// from the cluster.
func admitFromCluster(t *testing.T, kubeconfig, manifest, namespace string) ([]explain.Admission, string) {
	t.Helper()
	out, stderr, err := runCLI(t, manifest, "admit", "-f", "-", "--kubeconfig", kubeconfig, "-n", namespace, "-o", "json")
	if err != nil && !errors.Is(err, errSilent) {
		t.Fatalf("sidecarlab admit --kubeconfig: %v\n%s", err, stderr)
	}
	var got []explain.Admission
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("sidecarlab admit -o json: %v\n%s", err, out)
	}
	return got, stderr
}

// called are the names of the webhooks that called the injector.
func called(a explain.Admission) []string {
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
			own := nsCell{name: "mesh-" + ns.name, labels: ns.labels}
			if ns.name == "kube-system" {
				own = ns
			}
			name := c.namespace(t, own)
			var objs []any
			for _, p := range conformancePods {
				objs = append(objs, p.pod(name))
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
			for i, p := range conformancePods {
				a, b := got[i], want[i]
				cell := ns.name + "/" + p.name
				if a.Error != "" || b.Error != "" {
					t.Errorf("%s: %q, by hand %q", cell, a.Error, b.Error)
					continue
				}
				server, refused, _ := c.dryRunCreate(t, p.pod(name))
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

// readerRules are the least a ServiceAccount needs to read the mesh: what the Helm chart's
// cluster.read role grants.
var readerRules = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get"}},
	{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}},
	{APIGroups: []string{"admissionregistration.k8s.io"}, Resources: []string{"mutatingwebhookconfigurations"}, Verbs: []string{"list"}},
}

// TestClusterMeshPermissions: a ServiceAccount with readerRules reads the mesh; without any one
// of them the error names the request the cluster refused.
func TestClusterMeshPermissions(t *testing.T) {
	t.Parallel()
	c := needCluster(t)
	ns := c.namespace(t, nsCell{name: "reader", labels: map[string]string{"istio-injection": "enabled"}})
	pod := manifestOf(t, (podCell{name: "web"}).pod(ns))
	for i := -1; i < len(readerRules); i++ {
		rules := slices.Clone(readerRules)
		var want string
		if i >= 0 {
			rules = slices.Delete(rules, i, i+1)
			want = fmt.Sprintf("%s %s", readerRules[i].Verbs[0], readerRules[i].Resources[0])
		}
		kubeconfig := c.serviceAccountKubeconfig(t, fmt.Sprintf("reader-%d", i+1), rules)
		_, stderr, err := runCLI(t, pod, "admit", "-f", "-", "--kubeconfig", kubeconfig, "-n", ns)
		switch {
		case i < 0 && err != nil:
			t.Errorf("with every rule: %v\n%s", err, stderr)
		case i >= 0 && (err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "was refused")):
			t.Errorf("without %s: %v", want, err)
		}
	}
}

// serviceAccountKubeconfig makes a ServiceAccount with the rules (cluster-wide) and writes a
// kubeconfig with a token of it.
func (c *testCluster) serviceAccountKubeconfig(t *testing.T, name string, rules []rbacv1.PolicyRule) string {
	t.Helper()
	ctx := context.Background()
	const ns = "default"
	name += "-" + runID()
	create := func(err error) {
		t.Helper()
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	_, err := c.client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	create(err)
	_, err = c.client.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{})
	create(err)
	_, err = c.client.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: ns}}}, metav1.CreateOptions{})
	create(err)
	tok, err := c.client.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
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
