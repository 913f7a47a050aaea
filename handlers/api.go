package handlers

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/explain"
	"github.com/sidecarlab/sidecarlab/i18n"
)

// InjectRequest is the body of POST /api/v1/inject.
type InjectRequest struct {
	Manifest string          `json:"manifest"`
	Steps    []engine.Step   `json:"steps,omitempty"`
	Settings engine.Settings `json:"settings,omitzero"`
	// MeshConfigMaps is a mesh's own configuration as `kubectl get configmap -n istio-system
	// istio-sidecar-injector istio -o yaml` prints it: read into settings.install.mesh and,
	// unless it names one, settings.install.revision.
	MeshConfigMaps string `json:"meshConfigMaps,omitempty"`
	// ClusterMesh is a revision (or revision tag) of the server's own cluster (serve
	// --cluster-read): its mesh is read into settings.install.mesh and settings.install.revision.
	// ClusterNamespace is a namespace of that cluster: its name and labels are read into
	// settings.namespace.
	ClusterMesh      string `json:"clusterMesh,omitempty"`
	ClusterNamespace string `json:"clusterNamespace,omitempty"`
}

// apiMesh says which mesh of the user's own injected: its revision, the Istio that installed
// it (as its ConfigMaps' labels say; absent when they do not), whose templates ran ("istio" when
// they are the embedded Istio's own, else "own"), and the Istio whose injector code ran them.
type apiMesh struct {
	Revision   string `json:"revision"`
	Istio      string `json:"istio,omitempty"`
	Templates  string `json:"templates"`
	InjectedBy string `json:"injectedBy"`
}

// meshOf is the answer's word on the settings' own mesh, nil when there is none.
func meshOf(in engine.InstallOptions) *apiMesh {
	if in.Mesh.IsZero() {
		return nil
	}
	m := &apiMesh{Revision: engine.RevisionName(in.Revision), Istio: in.Mesh.Istio, Templates: "own", InjectedBy: engine.Version().Istio}
	if in.Mesh.IstioTemplates {
		m.Templates = "istio"
	}
	return m
}

// ownMesh reads the request's MeshConfigMaps, or its cluster's mesh and namespace, into its
// settings, and keeps the mesh compacted (engine.CompactMesh: the templates left out when they
// are Istio's), as its link will.
func (s *server) ownMesh(ctx context.Context, req *InjectRequest) error {
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

// InjectResponse is its answer: the timeline (row 0 is the manifest injected as is, row k adds
// step k), the final output, and the permalink of the same view in the playground. A request's
// ?include= names the parts it wants (apiParts); a part not asked for is absent, not empty.
type InjectResponse struct {
	Istio     engine.VersionInfo `json:"istio"`
	Permalink string             `json:"permalink"`
	// Mesh says which mesh of the user's own injected, when the request gave one.
	Mesh     *apiMesh     `json:"mesh,omitempty"`
	Output   string       `json:"output,omitempty"`
	Timeline *apiTimeline `json:"timeline,omitempty"`
	// Changes and Unified are the last row's: what its step changed (row 0's: what injection
	// changed), field by field and as a line diff.
	Changes []engine.Change `json:"changes,omitzero"`
	Unified *string         `json:"unified,omitempty"`
	// Findings, Lifecycles and Batch are about the last row.
	Findings []explain.Finding `json:"findings,omitzero"`
	// Ignored are the last row's findings the manifest opted out of (sidecarlab.dev/ignore),
	// worded as Findings; part of the findings part.
	Ignored    []explain.Finding   `json:"ignored,omitzero"`
	Lifecycles []explain.Lifecycle `json:"lifecycles,omitzero"`
	Batch      []engine.BatchRow   `json:"batch,omitzero"`
	// Admission is the cluster's view of each document after the last step: its Pod created in
	// the settings' namespace, sent through the installation's webhooks and Pod Security.
	Admission []explain.Admission `json:"admission,omitzero"`
}

// apiParts are the parts of an answer a client may ask for with ?include=a,b; without it, the
// default ones (the whole answer as it always was). changes and unified are the last step's
// alone, for a client that follows one step and needs neither the documents of every row nor
// the rows before.
var apiParts = []struct {
	name string
	def  bool
}{
	{"output", true}, {"timeline", true}, {"findings", true}, {"lifecycles", true}, {"batch", true}, {"admission", true},
	{"changes", false}, {"unified", false},
}

// includes reads ?include=; an unknown part is a 400 that lists the known ones.
func includes(r *http.Request) (map[string]bool, error) {
	want := map[string]bool{}
	q := r.URL.Query()["include"]
	if len(q) == 0 {
		for _, p := range apiParts {
			want[p.name] = p.def
		}
		return want, nil
	}
	var names []string
	for _, p := range apiParts {
		names = append(names, p.name)
	}
	for _, v := range q {
		for _, part := range strings.Split(v, ",") {
			part = strings.TrimSpace(part)
			if !slices.Contains(names, part) {
				return nil, httpError{status: http.StatusBadRequest, id: "errors.api.include", args: []any{"Part", bound(part, 64), "Parts", strings.Join(names, ", ")}}
			}
			want[part] = true
		}
	}
	return want, nil
}

// handleAPIInject is POST /api/v1/inject.
func (s *server) handleAPIInject() http.Handler {
	return s.apiHandler(func(w http.ResponseWriter, r *http.Request) error {
		var req InjectRequest
		if err := readJSONBody(w, r, s.cfg.MaxBodyBytes, &req); err != nil {
			return err
		}
		if err := s.ownMesh(r.Context(), &req); err != nil {
			return err
		}
		if err := checkNamespace(req.Settings.Namespace); err != nil {
			return err // a namespace the API server would refuse: 422, naming the field
		}
		want, err := includes(r)
		if err != nil {
			return err
		}
		// The slot is held until the answer is written (holdSlots): encoding a large timeline is
		// work too.
		tl, err := s.timeline(r.Context(), State{Manifest: req.Manifest, Steps: req.Steps, Settings: req.Settings})
		if err != nil {
			return err
		}
		if errs := tl.Steps[len(tl.Steps)-1].Errors(); len(errs) > 0 {
			// The manifest has documents Istio rejects: 422, naming each.
			return documentErrors(errs)
		}
		st := State{Version: StateVersion, Istio: engine.Version().Istio, Manifest: req.Manifest, Steps: req.Steps, Settings: req.Settings}
		last := tl.Steps[len(tl.Steps)-1]
		resp := InjectResponse{Istio: engine.Version(), Permalink: view{state: st, step: -1}.permalink(), Mesh: meshOf(st.Settings.Install)}
		if want["output"] {
			resp.Output = last.Output()
		}
		if want["timeline"] {
			// Every row's changes and unified diff are made now, within the deadline, not while
			// the answer is encoded (StepResult.MarshalJSON has no deadline).
			if resp.Timeline, err = newAPITimeline(r.Context(), tl); err != nil {
				return err
			}
		}
		if want["changes"] {
			changes, err := last.Changes(r.Context())
			if err != nil {
				return err
			}
			resp.Changes = append([]engine.Change{}, changes...)
		}
		if want["unified"] {
			u, err := last.Unified(r.Context(), 0)
			if err != nil {
				return err
			}
			u, _ = cutLines(i18n.FromContext(r.Context()), u, maxShownLine)
			resp.Unified = &u
		}
		words := explain.For(r.Context()) // the API's human text is in the request's language
		if want["findings"] {
			resp.Findings = words.Findings(tl.Findings)
			resp.Ignored = words.Findings(tl.Ignored)
		}
		if want["lifecycles"] {
			resp.Lifecycles = words.Lifecycles(engine.Lifecycles(last.Documents))
		}
		if want["batch"] {
			resp.Batch = engine.Batch(last.Documents, tl.Findings)
		}
		if want["admission"] {
			rs, err := s.admit(r.Context(), State{Manifest: req.Manifest, Steps: req.Steps, Settings: req.Settings})
			if err != nil {
				return err
			}
			resp.Admission = words.Admissions(rs)
		}
		return writeJSON(w, http.StatusOK, resp)
	})
}

// apiTimeline is engine.Timeline as the API writes it. A line over maxShownLine bytes is whole
// once in an answer, in `output`: in the rows' outputs and unified diffs it is cut as the page
// cuts it (cutLines), saying how many bytes it had. Without it one 250,000-byte annotation value
// came back in a 4.55 MB answer: in the output, and again in the last row's output and its
// unified diff. No line of a normal manifest is near 4 KiB.
type apiTimeline struct {
	Settings engine.Settings  `json:"settings"`
	Steps    []apiRow         `json:"steps"`
	Findings []engine.Finding `json:"findings"`
	Ignored  []engine.Finding `json:"ignored,omitempty"`
}

// apiRow is an engine.StepResult with its changes and unified diff, made within the request's
// deadline (StepResult.MarshalJSON has none).
type apiRow struct {
	Index     int             `json:"index"`
	Step      *engine.Step    `json:"step,omitempty"`
	Documents []apiDocument   `json:"documents"`
	Changes   []engine.Change `json:"changes"`
	Unified   string          `json:"unified,omitempty"`
}

// apiDocument is an engine.Document whose output has its long lines cut.
type apiDocument struct {
	engine.Document
	output string
}

func (d apiDocument) MarshalJSON() ([]byte, error) {
	type plain engine.Document // its fields without its MarshalJSON
	return json.Marshal(struct {
		plain
		Output string `json:"output,omitempty"`
	}{plain(d.Document), d.output})
}

func newAPITimeline(ctx context.Context, tl *engine.Timeline) (*apiTimeline, error) {
	l := i18n.FromContext(ctx)
	out := &apiTimeline{Settings: tl.Settings, Findings: tl.Findings, Ignored: tl.Ignored, Steps: make([]apiRow, 0, len(tl.Steps))}
	for _, row := range tl.Steps {
		changes, err := row.Changes(ctx)
		if err != nil {
			return nil, err
		}
		unified, err := row.Unified(ctx, 0)
		if err != nil {
			return nil, err
		}
		unified, _ = cutLines(l, unified, maxShownLine)
		docs := make([]apiDocument, len(row.Documents))
		for i, d := range row.Documents {
			docs[i].Document = d
			docs[i].output, _ = cutLines(l, d.Output(), maxShownLine)
		}
		out.Steps = append(out.Steps, apiRow{Index: row.Index, Step: row.Step, Documents: docs, Changes: changes, Unified: unified})
	}
	return out, nil
}

// handleAPIAnnotations is GET /api/v1/annotations: Istio's pod annotations, typed.
func (s *server) handleAPIAnnotations() http.Handler {
	return s.apiHandler(func(w http.ResponseWriter, r *http.Request) error {
		return writeJSON(w, http.StatusOK, engine.DefaultCatalog().All())
	})
}

// handleAPIVersion is GET /api/v1/version: the Istio inside.
func (s *server) handleAPIVersion() http.Handler {
	return s.apiHandler(func(w http.ResponseWriter, r *http.Request) error {
		return writeJSON(w, http.StatusOK, engine.Version())
	})
}

// documentErrors are the errors of a manifest's documents; the first is the headline.
type documentErrors []*engine.InputError

func (d documentErrors) Error() string { return d[0].Error() }
