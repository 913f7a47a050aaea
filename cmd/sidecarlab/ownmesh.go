package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/sidecarlab/sidecarlab/engine"
)

// ownMesh reads the mesh's own configuration the flags name into the install options: the
// ConfigMaps of --mesh-from (and their revision, unless --revision names one), or each of
// istioctl's three files.
func (f *settingsFlags) ownMesh(c *cli, s *engine.Settings) error {
	o := &s.Install
	o.Revision = f.revision
	if f.cluster.given() {
		for _, fl := range []struct{ name, value string }{{"--mesh-from", f.meshFrom}, {"--injectConfigFile", f.injectConfig},
			{"--meshConfigFile", f.meshConfig}, {"--valuesFile", f.values}, {"--operator", f.operator}} {
			if fl.value != "" {
				return usageError{c.T("cli.error.cluster_and", "Flag", fl.name)}
			}
		}
		if len(f.set) > 0 {
			return usageError{c.T("cli.error.cluster_and", "Flag", "--set")}
		}
		m, err := f.cluster.read(c, f.namespace, f.revision)
		if err != nil {
			return err
		}
		o.Mesh, o.Revision = m.Own, m.Revision
		if f.namespace != "" {
			s.Namespace = engine.Namespace{Name: f.namespace, Labels: m.NamespaceLabels}
			if f.kubeVersion == "" {
				s.KubernetesVersion = m.KubernetesVersion
			}
		}
		return nil
	}
	if f.meshFrom != "" {
		for _, fl := range []struct{ name, value string }{{"--injectConfigFile", f.injectConfig}, {"--meshConfigFile", f.meshConfig}, {"--valuesFile", f.values}} {
			if fl.value != "" {
				return usageError{c.T("cli.error.mesh_from_and", "Flag", fl.name)}
			}
		}
		b, err := os.ReadFile(f.meshFrom)
		if err != nil {
			return err
		}
		read, err := engine.ParseMeshConfigMaps(b)
		var ie *input.Error
		if errors.As(err, &ie) {
			return &fileError{file: f.meshFrom, err: ie}
		}
		if err != nil {
			return err
		}
		o.Mesh = read.Mesh
		if o.Revision == "" {
			o.Revision = read.Revision
		}
		if read.LabelRevision != "" {
			fmt.Fprintln(c.stderr, "sidecarlab:", c.T("cli.mesh_label_revision", "Revision", engine.RevisionName(read.Revision), "Label", read.LabelRevision))
		}
		if !read.Mesh.SameIstio() {
			fmt.Fprintln(c.stderr, "sidecarlab:", c.T("cli.mesh_other_istio", "Istio", read.Mesh.Istio, "Embedded", engine.Version().Istio))
		}
		return nil
	}
	// istioctl kube-inject reads the files it is not given from the cluster (the injector's
	// webhook or ConfigMap, the istio ConfigMap); offline it fails. Filling them with the embedded
	// Istio's defaults would inject what no cluster of the user's does (its test image, no CNI),
	// so a part of the three is refused, unless --set or --operator render the rest on purpose.
	parts := []struct {
		flag, file string
		into       *string
	}{{"--injectConfigFile", f.injectConfig, &o.Mesh.InjectorConfig}, {"--valuesFile", f.values, &o.Mesh.Values}, {"--meshConfigFile", f.meshConfig, &o.Mesh.MeshConfig}}
	var given, missing []string
	for _, part := range parts {
		if part.file == "" {
			missing = append(missing, part.flag)
		} else {
			given = append(given, part.flag)
		}
	}
	if len(given) > 0 && len(missing) > 0 && len(f.set) == 0 && f.operator == "" {
		return usageError{c.T("cli.error.istioctl_files", "Given", strings.Join(given, c.T("cli.list_sep")), "Missing", strings.Join(missing, c.T("cli.list_sep")))}
	}
	for _, part := range parts {
		if part.file == "" {
			continue
		}
		b, err := os.ReadFile(part.file)
		if err != nil {
			return err
		}
		*part.into = string(b)
	}
	return nil
}
