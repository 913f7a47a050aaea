package handlers

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/sidecarlab/sidecarlab/engine/catalog"
	"github.com/sidecarlab/sidecarlab/web"

	"github.com/sidecarlab/sidecarlab/engine/input"

	"github.com/sidecarlab/sidecarlab/api"
	"github.com/sidecarlab/sidecarlab/engine"
	"github.com/sidecarlab/sidecarlab/engine/diff"
	"github.com/sidecarlab/sidecarlab/i18n"
	"github.com/sidecarlab/sidecarlab/permalink"
	"github.com/sidecarlab/sidecarlab/wording"
)

// apiParts are the parts of an answer a client may ask for with ?include=a,b; without it, the
// default ones (the whole answer). changes and unified are the last step's
// alone, for a client that follows one step and needs neither the documents of every row nor
// the rows before; provenance (where each field of the last step's output came from) costs
// another injection with Istio's templates observed, so it is made only when asked.
var apiParts = []struct {
	name string
	def  bool
}{
	{"output", true}, {"timeline", true}, {"findings", true}, {"lifecycles", true}, {"batch", true}, {"admission", true},
	{"changes", false}, {"unified", false}, {"provenance", false},
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
				return nil, httpError{status: http.StatusBadRequest, id: "errors.api.include", args: []any{"Part", web.Bound(part, 64), "Parts", strings.Join(names, ", ")}}
			}
			want[part] = true
		}
	}
	return want, nil
}

// apiRequest reads an API request as every API route does: its JSON body into req within the
// server's limit (req is the api.InjectRequest in, or a request that embeds it), the mesh it
// names into its settings (ownMesh), its namespace checked as the API server would (a 422 naming
// the field). The state is what it asks to be shown.
func (s *server) apiRequest(w http.ResponseWriter, r *http.Request, req any, in *api.InjectRequest) (api.State, error) {
	if err := readJSONBody(w, r, s.cfg.MaxBodyBytes, req); err != nil {
		return api.State{}, err
	}
	if err := s.ownMesh(r.Context(), in); err != nil {
		return api.State{}, err
	}
	if err := checkNamespace(in.Settings.Namespace); err != nil {
		return api.State{}, err
	}
	return api.State{Version: permalink.Version, Istio: engine.Version().Istio, Manifest: in.Manifest, Steps: in.Steps, Settings: in.Settings}, nil
}

// handleAPIInject is POST /api/v1/inject.
func (s *server) handleAPIInject() http.Handler {
	return s.handler(func(w http.ResponseWriter, r *http.Request) error {
		var req api.InjectRequest
		st, err := s.apiRequest(w, r, &req, &req)
		if err != nil {
			return err
		}
		want, err := includes(r)
		if err != nil {
			return err
		}
		// The slot is held until the answer is written (holdSlots): encoding a large timeline is
		// work too.
		tl, err := s.timeline(r.Context(), st)
		if err != nil {
			return err
		}
		if errs := tl.Steps[len(tl.Steps)-1].Errors(); len(errs) > 0 {
			// The manifest has documents Istio rejects: 422, naming each.
			return documentErrors(errs)
		}
		last := tl.Steps[len(tl.Steps)-1]
		resp := api.InjectResponse{Istio: engine.Version(), Permalink: view{state: st, step: -1}.permalink(), Mesh: meshOf(st.Settings.Install)}
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
			resp.Changes = append([]diff.Change{}, changes...)
		}
		if want["unified"] {
			u, err := last.Unified(r.Context(), 0)
			if err != nil {
				return err
			}
			u, _ = web.CutLines(i18n.For(i18n.Default), u, web.MaxShownLine)
			resp.Unified = &u
		}
		if want["provenance"] {
			if resp.Provenance, err = s.eng().Explain(r.Context(), []byte(st.Manifest), st.Steps, st.Settings); err != nil {
				return err
			}
		}
		words := wording.For(r.Context()) // the API's human text is in the request's language
		if want["findings"] {
			resp.Findings = words.Findings(tl.Findings)
			resp.Ignored = words.Findings(tl.Ignored)
		}
		if want["lifecycles"] {
			resp.Lifecycles = words.Lifecycles(engine.Lifecycles(last.Documents))
		}
		if want["batch"] {
			if resp.Batch, _, err = batchRows(tl, last.Documents, tl.Findings, 0); err != nil {
				return err
			}
		}
		if want["admission"] {
			rs, err := s.admit(r.Context(), api.State{Manifest: req.Manifest, Steps: req.Steps, Settings: req.Settings})
			if err != nil {
				return err
			}
			resp.Admission = words.Admissions(rs)
		}
		return writeJSON(w, http.StatusOK, resp)
	})
}

// newAPITimeline is tl as the API writes it: every row's changes and unified diff made now,
// within ctx's deadline, and long lines cut (cutLines) in English, since outputs and diffs are
// data, the same in every language.
func newAPITimeline(ctx context.Context, tl *engine.Timeline) (*api.Timeline, error) {
	l := i18n.For(i18n.Default) // outputs and diffs are data: the same in every language
	out := &api.Timeline{Settings: tl.Settings, Findings: tl.Findings, Ignored: tl.Ignored, Steps: make([]api.Row, 0, len(tl.Steps))}
	for _, row := range tl.Steps {
		changes, err := row.Changes(ctx)
		if err != nil {
			return nil, err
		}
		unified, err := row.Unified(ctx, 0)
		if err != nil {
			return nil, err
		}
		unified, _ = web.CutLines(l, unified, web.MaxShownLine)
		docs := make([]api.Document, len(row.Documents))
		for i, d := range row.Documents {
			docs[i].Document = d
			docs[i].Output, _ = web.CutLines(l, d.Output(), web.MaxShownLine)
		}
		out.Steps = append(out.Steps, api.Row{Index: row.Index, Step: row.Step, Documents: docs, Changes: changes, Unified: unified})
	}
	return out, nil
}

// handleAPIAnnotations is GET /api/v1/annotations: Istio's pod annotations, typed.
func (s *server) handleAPIAnnotations() http.Handler {
	return s.handler(func(w http.ResponseWriter, r *http.Request) error {
		return writeJSON(w, http.StatusOK, catalog.DefaultCatalog().All())
	})
}

// handleAPIVersion is GET /api/v1/version: the Istio inside.
func (s *server) handleAPIVersion() http.Handler {
	return s.handler(func(w http.ResponseWriter, r *http.Request) error {
		return writeJSON(w, http.StatusOK, engine.Version())
	})
}

// documentErrors are the errors of a manifest's documents; the first is the headline.
type documentErrors []*input.Error

func (d documentErrors) Error() string { return d[0].Error() }
