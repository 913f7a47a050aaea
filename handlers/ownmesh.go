package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/clustermesh"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/web"
	"github.com/sidecarlab/sidecarlab/wording"
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

// Cluster is the cluster the server reads its mesh from (serve --cluster-read,
// clustermesh.Cached), read-only: the page offers its revisions as a setting and its namespaces
// in the Cluster tab's group. What is read goes into the state, so a link keeps what was shown
// even when the cluster changes.
type Cluster interface {
	Catalog(ctx context.Context) (*clustermesh.Catalog, error)
	Read(ctx context.Context, namespace, revision string) (*clustermesh.Mesh, error)
	Namespace(ctx context.Context, name string) (map[string]string, error)
}

var errNoCluster = httpError{status: http.StatusNotFound, id: "errors.cluster.none", args: []any{"Flag", "serve --cluster-read"}}

// clusterError is a failed read of the server's cluster: a refusal (a permission the server
// lacks) is the server's side, 502, naming the request; an API server that never answered is the
// server's side too, 502, said without the error, which names the API server's address (that is
// for the server's log, not for every reader of the page); what the cluster holds not being what
// was asked (no such revision or namespace, ConfigMaps that do not parse) is the request's, 422.
func (s *server) clusterError(ctx context.Context, err error) error {
	var refused *clustermesh.Refused
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
		return err
	case errors.As(err, &refused) && refused.Unreachable():
		s.log.WarnContext(ctx, "reading the cluster", "err", err)
		return httpError{status: http.StatusBadGateway, retryAfter: "30", id: unreachableID(refused)}
	case errors.As(err, &refused) && !refused.NotFound():
		return httpError{status: http.StatusBadGateway, id: "errors.cluster.refused", args: []any{"Err", wording.For(ctx).ClusterError(err)}}
	default:
		return httpError{status: http.StatusUnprocessableEntity, id: "errors.cluster.unusable", args: []any{"Err", wording.For(ctx).ClusterError(err)}}
	}
}

// unreachableID is the message for an API server that never answered: "refused" only when the
// connection was (nothing listens at its address), else that it cannot be reached.
func unreachableID(r *clustermesh.Refused) string {
	if r.ConnectionRefused() {
		return "errors.cluster.connection-refused"
	}
	return "errors.cluster.unreachable"
}

// clusterMesh reads the revision's (or revision tag's) mesh from the server's cluster into the
// install options, compacted as a link keeps it: its ConfigMaps and its webhooks.
func (s *server) clusterMesh(ctx context.Context, revision string, in *engine.InstallOptions) error {
	if revision == "" {
		return nil
	}
	if s.cfg.Cluster == nil {
		return errNoCluster
	}
	m, err := s.cfg.Cluster.Read(ctx, "", revision)
	if err != nil {
		return s.clusterError(ctx, err)
	}
	in.Mesh, in.Revision = engine.CompactMesh(m.Own), m.Revision
	return nil
}

// clusterNamespace reads a namespace of the server's cluster, its name and labels, as the
// Cluster tab creates Pods in.
func (s *server) clusterNamespace(ctx context.Context, name string) (engine.Namespace, error) {
	if s.cfg.Cluster == nil {
		return engine.Namespace{}, errNoCluster
	}
	labels, err := s.cfg.Cluster.Namespace(ctx, name)
	if err != nil {
		return engine.Namespace{}, s.clusterError(ctx, err)
	}
	ns := engine.Namespace{Name: name, Labels: labels}
	return ns, checkNamespace(ns)
}

// maxChoiceLabel bounds a namespace's choice as the page words it (its name and labels).
const maxChoiceLabel = 120

// clusterChoices are the server's cluster's revisions and namespaces as the page offers them
// (nil when the server reads no cluster); a cluster that cannot be listed is said, not fatal.
func (s *server) clusterChoices(ctx context.Context, l *i18n.Localizer) *web.ClusterChoices {
	if s.cfg.Cluster == nil {
		return nil
	}
	cat, err := s.cfg.Cluster.Catalog(ctx)
	if err != nil {
		s.log.WarnContext(ctx, "reading the cluster", "err", err)
		// An API server that never answered is said without the error: it names its address.
		var refused *clustermesh.Refused
		if errors.As(err, &refused) && refused.Unreachable() {
			return &web.ClusterChoices{Error: l.T(unreachableID(refused))}
		}
		return &web.ClusterChoices{Error: l.T("page.cluster.error", "Err", wording.In(l).ClusterError(err))}
	}
	c := &web.ClusterChoices{More: cat.More, Count: len(cat.Namespaces)}
	for _, r := range cat.Revisions {
		label := r.Name
		if len(r.Tags) > 0 {
			label = l.T("page.cluster.tags", "Revision", r.Name, "Tags", strings.Join(r.Tags, ", "))
		}
		c.Revisions = append(c.Revisions, web.Option{Value: r.Name, Label: label})
	}
	for _, ns := range cat.Namespaces {
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(ns.Labels)) {
			if k == "kubernetes.io/metadata.name" {
				continue // every namespace has it: its own name
			}
			kv = append(kv, k+"="+ns.Labels[k])
		}
		label := ns.Name
		if len(kv) > 0 {
			label = fmt.Sprintf("%s (%s)", ns.Name, strings.Join(kv, ", "))
		}
		if len(label) > maxChoiceLabel {
			label = strings.ToValidUTF8(label[:maxChoiceLabel], "") + "…"
		}
		c.Namespaces = append(c.Namespaces, web.Option{Value: ns.Name, Label: label})
	}
	return c
}

// handleAPICluster is GET /api/v1/cluster: what the request fields clusterMesh and
// clusterNamespace may name; 404 when the server reads no cluster.
func (s *server) handleAPICluster() http.Handler {
	return s.handler(func(w http.ResponseWriter, r *http.Request) error {
		if s.cfg.Cluster == nil {
			return errNoCluster
		}
		cat, err := s.cfg.Cluster.Catalog(r.Context())
		if err != nil {
			return s.clusterError(r.Context(), err)
		}
		out := api.Cluster{Revisions: []api.Revision{}, Namespaces: []api.Namespace{}, More: cat.More}
		for _, rev := range cat.Revisions {
			out.Revisions = append(out.Revisions, api.Revision{Name: rev.Name, Tags: rev.Tags})
		}
		for _, ns := range cat.Namespaces {
			out.Namespaces = append(out.Namespaces, api.Namespace{Name: ns.Name, Labels: ns.Labels})
		}
		return writeJSON(w, http.StatusOK, out)
	})
}
