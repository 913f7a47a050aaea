package handlers

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
)

// meshField is the hidden field that carries a state's own mesh through the form: its
// compacted texts (engine.CompactMesh) and its revision.
type meshField struct {
	Mesh     engine.OwnMesh `json:"mesh"`
	Revision string         `json:"revision,omitempty"`
}

// readMesh reads the form's mesh into the install options: a new paste of its ConfigMaps
// (meshConfigMaps), else the one the form carried (mesh), unless its box was unticked.
func readMesh(f url.Values, in *engine.InstallOptions) error {
	if paste := f.Get("meshConfigMaps"); strings.TrimSpace(paste) != "" {
		return pastedMesh(paste, in)
	}
	if js := f.Get("mesh"); js != "" && f.Get("meshKeep") != "" {
		var m meshField
		if err := json.Unmarshal([]byte(js), &m); err != nil {
			return httpError{status: http.StatusBadRequest, id: "errors.form.mesh"}
		}
		in.Mesh, in.Revision = engine.CompactMesh(m.Mesh), m.Revision
	}
	return nil
}

// pastedMesh reads a mesh's ConfigMaps, as kubectl prints them, into the install options,
// compacted as a link keeps them (engine.CompactMesh), with their revision unless the options
// name one.
func pastedMesh(paste string, in *engine.InstallOptions) error {
	read, err := engine.ParseMeshConfigMaps([]byte(paste))
	if err != nil {
		return err
	}
	in.Mesh = engine.CompactMesh(read.Mesh)
	if in.Revision == "" {
		in.Revision = read.Revision
	}
	return nil
}

// meshForm is the install options' own mesh as the form carries and shows it: the hidden
// field's JSON ("" for none), the revision, the embedded Istio's release when the mesh's
// templates are that Istio's, and the Istio that installed the mesh when it is another.
func meshForm(in engine.InstallOptions) (field, revision, istioTemplates, otherIstio string) {
	if in.Mesh.IsZero() {
		return "", "", "", ""
	}
	if !in.Mesh.SameIstio() {
		otherIstio = in.Mesh.Istio
	}
	b, _ := json.Marshal(meshField{Mesh: in.Mesh, Revision: in.Revision})
	revision = engine.RevisionName(in.Revision)
	if in.Mesh.EmbeddedTemplates() {
		istioTemplates = engine.Version().Istio
	}
	return string(b), revision, istioTemplates, otherIstio
}

// meshOf is the answer's word on the settings' own mesh, nil when there is none.
func meshOf(in engine.InstallOptions) *api.Mesh {
	if in.Mesh.IsZero() {
		return nil
	}
	m := &api.Mesh{Revision: engine.RevisionName(in.Revision), Istio: in.Mesh.Istio, Templates: "own", InjectedBy: engine.Version().Istio, Embedded: in.Mesh.Embedded()}
	if in.Mesh.EmbeddedTemplates() {
		m.Templates = "istio"
	}
	return m
}

// ownMesh reads the request's MeshConfigMaps, or its cluster's mesh and namespace, into its
// settings, and keeps the mesh compacted (engine.CompactMesh: the templates left out when they
// are Istio's), as its link will.
func (s *server) ownMesh(ctx context.Context, req *api.InjectRequest) error {
	in := &req.Settings.Install
	given := 0
	for _, g := range []bool{req.MeshConfigMaps != "", req.ClusterMesh != "", !in.Mesh.IsZero()} {
		if g {
			given++
		}
	}
	if given > 1 {
		return httpError{status: http.StatusBadRequest, id: "errors.api.mesh-twice", args: []any{"ConfigMaps", `"meshConfigMaps", "clusterMesh"`, "Mesh", `"settings.install.mesh"`}}
	}
	if req.ClusterNamespace != "" {
		if ns := req.Settings.Namespace; ns.Name != "" || len(ns.Labels) > 0 {
			return httpError{status: http.StatusBadRequest, id: "errors.api.namespace-twice", args: []any{"Cluster", `"clusterNamespace"`, "Namespace", `"settings.namespace"`}}
		}
		ns, err := s.clusterNamespace(ctx, req.ClusterNamespace)
		if err != nil {
			return err
		}
		req.Settings.Namespace, req.ClusterNamespace = ns, ""
	}
	switch {
	case req.MeshConfigMaps != "":
		if err := pastedMesh(req.MeshConfigMaps, in); err != nil {
			return err
		}
		req.MeshConfigMaps = ""
	case req.ClusterMesh != "":
		if err := s.clusterMesh(ctx, req.ClusterMesh, in); err != nil {
			return err
		}
		req.ClusterMesh = ""
	default:
		in.Mesh = engine.CompactMesh(in.Mesh)
	}
	return nil
}
