// Package deploy holds the Helm chart, and renders it with Helm's own library: for its own
// tests, and for the control plane's, which apply its cluster.read RBAC to a real API server.
package deploy

import (
	"embed"
	"fmt"
	"io/fs"
	"strings"

	"helm.sh/helm/v4/pkg/chart/common"
	commonutil "helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/loader/archive"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	loader "helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// Release is the release name the chart is rendered with; its objects are named after it.
const Release = "sidecarlab"

// ChartDir is the chart's folder, from this package's.
const ChartDir = "chart/sidecarlab"

// chartFiles is the chart, built into the program: the tests that render it run from other
// folders, and builds with -trimpath have no source path to find it by.
//
//go:embed all:chart/sidecarlab
var chartFiles embed.FS

// load reads the chart as Helm's directory loader would (its files by their path in the chart).
func load() (*chart.Chart, error) {
	var files []*archive.BufferedFile
	err := fs.WalkDir(chartFiles, ChartDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := chartFiles.ReadFile(path)
		files = append(files, &archive.BufferedFile{Name: strings.TrimPrefix(path, ChartDir+"/"), Data: data})
		return err
	})
	if err != nil {
		return nil, err
	}
	return loader.LoadFiles(files)
}

// Render renders the chart with vals over its values.yaml, as `helm template sidecarlab
// deploy/chart/sidecarlab --namespace NAMESPACE` does: each template's path, and its text.
func Render(namespace string, vals map[string]any) (map[string]string, error) {
	ch, err := load()
	if err != nil {
		return nil, err
	}
	rv, err := commonutil.ToRenderValues(ch, vals, common.ReleaseOptions{Name: Release, Namespace: namespace}, common.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	return engine.Render(ch, rv)
}

// ClusterRead is what the chart adds with cluster.read: the pod's ServiceAccount, a ClusterRole
// (namespaces, webhooks) and a Role in Istio's namespace (its ConfigMaps), each bound to it.
type ClusterRead struct {
	ServiceAccount     corev1.ServiceAccount
	ClusterRole        rbacv1.ClusterRole
	ClusterRoleBinding rbacv1.ClusterRoleBinding
	Role               rbacv1.Role
	RoleBinding        rbacv1.RoleBinding
}

// RenderClusterRead renders the chart with cluster.read in namespace, Istio's ConfigMaps in
// istioNamespace, and decodes the objects cluster.read adds.
func RenderClusterRead(namespace, istioNamespace string) (*ClusterRead, error) {
	files, err := Render(namespace, map[string]any{"cluster": map[string]any{"read": true, "istioNamespace": istioNamespace}})
	if err != nil {
		return nil, err
	}
	cr := &ClusterRead{}
	if err := yaml.UnmarshalStrict([]byte(files[Release+"/templates/serviceaccount.yaml"]), &cr.ServiceAccount); err != nil {
		return nil, fmt.Errorf("serviceaccount.yaml: %w", err)
	}
	into := map[string]any{"ClusterRole": &cr.ClusterRole, "ClusterRoleBinding": &cr.ClusterRoleBinding, "Role": &cr.Role, "RoleBinding": &cr.RoleBinding}
	for _, doc := range strings.Split(files[Release+"/templates/rbac.yaml"], "\n---\n") {
		var head struct{ Kind string }
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
			return nil, fmt.Errorf("rbac.yaml: %w", err)
		}
		obj, ok := into[head.Kind]
		if !ok {
			return nil, fmt.Errorf("rbac.yaml: a %q, or one twice", head.Kind)
		}
		if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
			return nil, fmt.Errorf("rbac.yaml: %s: %w", head.Kind, err)
		}
		delete(into, head.Kind)
	}
	if len(into) > 0 {
		return nil, fmt.Errorf("rbac.yaml lacks %d of its objects", len(into))
	}
	return cr, nil
}
